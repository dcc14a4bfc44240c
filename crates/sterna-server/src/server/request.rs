//! The decode stage: the params of each method, read in one pass together with `_meta`.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use sterna_types::completion::CompletionReference;
use sterna_types::error::ErrorObject;
use sterna_types::meta::RequestMeta;

/// `params` member that may be present with `null` (kept apart from absent).
#[derive(Debug, Default)]
pub(crate) enum RawField<'a> {
    #[default]
    Absent,
    Present(&'a RawValue),
}

impl<'de: 'a, 'a> Deserialize<'de> for RawField<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(d).map(RawField::Present)
    }
}

#[derive(Deserialize)]
struct RawMeta<'a> {
    #[serde(rename = "_meta", default, borrow)]
    meta: Option<&'a RawValue>,
}

/// `_meta` decoded with the params, for methods whose other params are read later.
#[derive(Deserialize)]
pub(crate) struct MetaOnly {
    #[serde(rename = "_meta", default, deserialize_with = "shared_meta")]
    pub(crate) meta: Option<Arc<RequestMeta>>,
}

/// `_meta` read as its text and decoded into one shared allocation, or found decoded
/// from the same text ([`meta_cache`](super::meta_cache)).
fn shared_meta<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Arc<RequestMeta>>, D::Error> {
    let Some(raw) = Option::<&'de RawValue>::deserialize(d)? else {
        return Ok(None);
    };
    super::meta_cache::decode(raw)
        .map(Some)
        .map_err(|e| serde::de::Error::custom(super::meta_cache::message(&e)))
}

pub(crate) fn invalid(msg: impl Into<String>) -> ErrorObject {
    ErrorObject::invalid_params(msg)
}

pub(crate) fn missing_meta() -> ErrorObject {
    invalid("Missing params._meta (protocolVersion and clientCapabilities are required)")
}

/// Decodes `_meta` (`-32602` when absent or malformed).
pub(crate) fn decode_meta(raw: Option<&RawValue>) -> Result<RequestMeta, ErrorObject> {
    let raw = raw.ok_or_else(missing_meta)?;
    serde_json::from_str(raw.get()).map_err(|e| invalid(format!("Invalid params._meta: {e}")))
}

#[derive(Deserialize)]
pub(crate) struct ListParams {
    #[serde(default)]
    pub(crate) cursor: Option<String>,
    #[serde(rename = "_meta", default, deserialize_with = "shared_meta")]
    pub(crate) meta: Option<Arc<RequestMeta>>,
}

#[derive(Deserialize)]
pub(crate) struct CallParams<'a> {
    #[serde(rename = "_meta", default, deserialize_with = "shared_meta")]
    pub(crate) meta: Option<Arc<RequestMeta>>,
    #[serde(borrow)]
    pub(crate) name: Cow<'a, str>,
    #[serde(default, borrow)]
    pub(crate) arguments: RawField<'a>,
    #[serde(default, borrow, rename = "inputResponses")]
    pub(crate) input_responses: RawField<'a>,
    #[serde(default, rename = "requestState")]
    pub(crate) request_state: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct PromptParams<'a> {
    #[serde(rename = "_meta", default, deserialize_with = "shared_meta")]
    pub(crate) meta: Option<Arc<RequestMeta>>,
    #[serde(borrow)]
    pub(crate) name: Cow<'a, str>,
    #[serde(default)]
    pub(crate) arguments: Option<BTreeMap<String, String>>,
    #[serde(default, borrow, rename = "inputResponses")]
    pub(crate) input_responses: RawField<'a>,
    #[serde(default, rename = "requestState")]
    pub(crate) request_state: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct ReadParams<'a> {
    #[serde(rename = "_meta", default, deserialize_with = "shared_meta")]
    pub(crate) meta: Option<Arc<RequestMeta>>,
    pub(crate) uri: String,
    #[serde(default, borrow, rename = "inputResponses")]
    pub(crate) input_responses: RawField<'a>,
    #[serde(default, rename = "requestState")]
    pub(crate) request_state: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct CompleteParams {
    #[serde(rename = "_meta", default, deserialize_with = "shared_meta")]
    pub(crate) meta: Option<Arc<RequestMeta>>,
    #[serde(rename = "ref")]
    pub(crate) reference: CompletionReference,
    pub(crate) argument: sterna_types::completion::CompletionArgument,
    #[serde(default)]
    pub(crate) context: Option<sterna_types::completion::CompletionContext>,
}

/// The params of a request, decoded in one pass together with `_meta`.
pub(crate) enum Params<'a> {
    Call(CallParams<'a>),
    Prompt(PromptParams<'a>),
    Read(ReadParams<'a>),
    Complete(CompleteParams),
    List(ListParams),
    /// Methods whose params are read later (or never).
    Other(MetaOnly),
    /// A wing's method, decoded by the wing (once `_meta` was read).
    Wing(super::wing::WingRequest<'a, super::core::Server>),
}

/// Decodes the params of one kind of method (see [`RawMessage::parse_request_with`]).
#[derive(Clone, Copy)]
pub(crate) enum ParamsSeed {
    Call,
    Prompt,
    Read,
    Complete,
    List,
    Other,
}

impl ParamsSeed {
    fn of(method: &str) -> Self {
        match method {
            "tools/call" => Self::Call,
            "prompts/get" => Self::Prompt,
            "resources/read" => Self::Read,
            "completion/complete" => Self::Complete,
            "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
                Self::List
            }
            _ => Self::Other,
        }
    }

    /// The seed for the one-pass reader: the core's methods whose params it reads at
    /// once. Others keep their raw params: `subscriptions/listen`, the removed methods
    /// (answered before reading them), and any other method (a wing's reads its own).
    pub(crate) fn fast(method: &str) -> Option<Self> {
        match Self::of(method) {
            Self::Other if method != "server/discover" => None,
            seed => Some(seed),
        }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for ParamsSeed {
    type Value = Params<'de>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Params<'de>, D::Error> {
        Ok(match self {
            Self::Call => Params::Call(Deserialize::deserialize(d)?),
            Self::Prompt => Params::Prompt(Deserialize::deserialize(d)?),
            Self::Read => Params::Read(Deserialize::deserialize(d)?),
            Self::Complete => Params::Complete(Deserialize::deserialize(d)?),
            Self::List => Params::List(Deserialize::deserialize(d)?),
            Self::Other => Params::Other(Deserialize::deserialize(d)?),
        })
    }
}

impl<'a> Params<'a> {
    /// Decodes the params of `method` (a JSON object). When that fails, `_meta` is
    /// still read on its own so that its errors come first.
    pub(crate) fn read(
        method: &str,
        raw: &'a RawValue,
    ) -> (
        Result<Self, ErrorObject>,
        Result<Arc<RequestMeta>, ErrorObject>,
    ) {
        use serde::de::DeserializeSeed;
        let mut de = serde_json::Deserializer::from_str(raw.get());
        match ParamsSeed::of(method).deserialize(&mut de) {
            Ok(p) => p.with_meta(),
            Err(e) => {
                let error = invalid(format!("Invalid params: {e}"));
                // Unreadable even for `_meta` alone (given twice, nested too deep): the
                // params' own error says why, not "missing".
                let meta = match serde_json::from_str::<RawMeta<'a>>(raw.get()) {
                    Ok(m) => decode_meta(m.meta).map(Arc::new),
                    Err(_) => Err(error.clone()),
                };
                (Err(error), meta)
            }
        }
    }

    /// Takes `_meta` out of decoded params (`-32602` when it is missing).
    pub(crate) fn with_meta(
        mut self,
    ) -> (
        Result<Self, ErrorObject>,
        Result<Arc<RequestMeta>, ErrorObject>,
    ) {
        let meta = match &mut self {
            Params::Call(p) => p.meta.take(),
            Params::Prompt(p) => p.meta.take(),
            Params::Read(p) => p.meta.take(),
            Params::Complete(p) => p.meta.take(),
            Params::List(p) => p.meta.take(),
            Params::Other(p) => p.meta.take(),
            Params::Wing(_) => None,
        };
        (Ok(self), meta.ok_or_else(missing_meta))
    }

    /// The name (tool, prompt) or URI (resource) and tool arguments, for header checks.
    pub(crate) fn target(&self) -> (Option<&str>, Option<&'a RawValue>) {
        match self {
            Params::Call(p) => (
                Some(&p.name),
                match p.arguments {
                    RawField::Present(a) => Some(a),
                    RawField::Absent => None,
                },
            ),
            Params::Prompt(p) => (Some(&p.name), None),
            Params::Read(p) => (Some(&p.uri), None),
            _ => (None, None),
        }
    }
}

pub(crate) fn params<'a, T: Deserialize<'a>>(raw: Option<&'a RawValue>) -> Result<T, ErrorObject> {
    let raw = raw.ok_or_else(|| invalid("Missing params"))?;
    serde_json::from_str(raw.get()).map_err(|e| invalid(format!("Invalid params: {e}")))
}

/// Methods 2026-07-28 removed, answered `-32601` with a pointer to `server/discover`.
pub(crate) const REMOVED: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    "tasks/result",
    "tasks/list",
];
