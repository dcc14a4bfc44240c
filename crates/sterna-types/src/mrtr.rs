//! Multi Round-Trip Requests (SEP-2322): the server answers with questions, the client
//! retries with answers.
//!
//! ```text
//! client                                   server (any replica)
//!   tools/call {id: 1, name, arguments} ──▶
//!                                        ◀── {resultType: "input_required",
//!                                             inputRequests: {"region": elicitation/create …},
//!                                             requestState: "…"}
//!   (ask the user)
//!   tools/call {id: 2, name, arguments,
//!               inputResponses: {"region": {action: "accept", content: …}},
//!               requestState: "…" (byte for byte)} ──▶
//!                                        ◀── {resultType: "complete", content: …}
//! ```
//!
//! [`InputRequest`]s are not JSON-RPC messages: they have a `method` and `params`, no
//! `jsonrpc` and no `id`. [`InputResponse`]s are bare results, told apart by their
//! required fields (`action`, `roots`, or `role`+`content`+`model`).

use crate::elicitation::{ElicitRequestParams, ElicitResult};
use crate::meta::ResultMeta;
use crate::result::ResultType;
use crate::roots::{ListRootsParams, ListRootsResult};
use crate::sampling::{CreateMessageRequestParams, CreateMessageResult};
use serde::de::{self, DeserializeOwned, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Method name of an elicitation request.
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// Method name of a sampling request.
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// Method name of a roots request.
pub const ROOTS_LIST: &str = "roots/list";

/// The questions of one round, keyed by server-assigned keys.
pub type InputRequests = BTreeMap<String, InputRequest>;

/// The answers of one round, keyed like the questions they answer.
pub type InputResponses = BTreeMap<String, InputResponse>;

/// One question the server asks the client, embedded in an [`InputRequiredResult`].
#[derive(Debug, Clone, PartialEq)]
pub enum InputRequest {
    /// `elicitation/create`: ask the user (form or URL).
    Elicit(ElicitRequestParams),
    /// `sampling/createMessage`: ask the client's LLM (deprecated feature).
    Sample(CreateMessageRequestParams),
    /// `roots/list`: ask for the client's roots (deprecated feature).
    ListRoots(Option<ListRootsParams>),
    /// A method this crate does not know. A client should treat it as a protocol error.
    Unknown {
        /// The method.
        method: String,
        /// The params.
        params: Option<Value>,
    },
}

impl InputRequest {
    /// The method name.
    pub fn method(&self) -> &str {
        match self {
            Self::Elicit(_) => ELICITATION_CREATE,
            Self::Sample(_) => SAMPLING_CREATE_MESSAGE,
            Self::ListRoots(_) => ROOTS_LIST,
            Self::Unknown { method, .. } => method,
        }
    }
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("method", self.method())?;
        match self {
            Self::Elicit(p) => m.serialize_entry("params", p)?,
            Self::Sample(p) => m.serialize_entry("params", p)?,
            Self::ListRoots(Some(p)) => m.serialize_entry("params", p)?,
            Self::ListRoots(None) => {}
            Self::Unknown { params, .. } => {
                if let Some(p) = params {
                    m.serialize_entry("params", p)?;
                }
            }
        }
        m.end()
    }
}

#[derive(Deserialize)]
struct InputRequestDe {
    method: String,
    /// Raw, not a `Value`, so objects keep their key order (a form's fields).
    #[serde(default)]
    params: Option<Box<serde_json::value::RawValue>>,
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = InputRequestDe::deserialize(d)?;
        let raw = r.params.filter(|p| p.get() != "null");
        let params = || {
            raw.as_ref()
                .map(|p| p.get())
                .ok_or_else(|| de::Error::missing_field("params"))
        };
        Ok(match r.method.as_str() {
            ELICITATION_CREATE => {
                Self::Elicit(serde_json::from_str(params()?).map_err(de::Error::custom)?)
            }
            SAMPLING_CREATE_MESSAGE => {
                Self::Sample(serde_json::from_str(params()?).map_err(de::Error::custom)?)
            }
            ROOTS_LIST => Self::ListRoots(match &raw {
                Some(p) => Some(serde_json::from_str(p.get()).map_err(de::Error::custom)?),
                None => None,
            }),
            _ => Self::Unknown {
                method: r.method,
                params: match &raw {
                    Some(p) => Some(serde_json::from_str(p.get()).map_err(de::Error::custom)?),
                    None => None,
                },
            },
        })
    }
}

/// One answer from the client. Not tagged on the wire; told apart by required fields.
#[derive(Debug, Clone, PartialEq)]
pub enum InputResponse {
    /// An answer to `elicitation/create`.
    Elicit(ElicitResult),
    /// An answer to `sampling/createMessage`.
    Sample(CreateMessageResult),
    /// An answer to `roots/list`.
    ListRoots(ListRootsResult),
    /// An object of no known shape (ignored unless its key is expected, then re-asked).
    Unknown(crate::JsonObject),
}

impl Serialize for InputResponse {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Elicit(r) => r.serialize(s),
            Self::Sample(r) => r.serialize(s),
            Self::ListRoots(r) => r.serialize(s),
            Self::Unknown(o) => o.serialize(s),
        }
    }
}

impl InputResponse {
    /// Reads an answer from a JSON object, by its required fields. Never fails on an
    /// object: what fits no known shape becomes [`InputResponse::Unknown`].
    pub fn from_object(obj: crate::JsonObject) -> Self {
        let value = Value::Object(obj);
        let kind = if value.get("action").is_some() {
            Some(0)
        } else if value.get("roots").is_some() {
            Some(1)
        } else if value.get("model").is_some() && value.get("content").is_some() {
            Some(2)
        } else {
            None
        };
        let parsed = match kind {
            Some(0) => ElicitResult::deserialize(&value).ok().map(Self::Elicit),
            Some(1) => ListRootsResult::deserialize(&value)
                .ok()
                .map(Self::ListRoots),
            Some(2) => CreateMessageResult::deserialize(&value)
                .ok()
                .map(Self::Sample),
            _ => None,
        };
        match (parsed, value) {
            (Some(p), _) => p,
            (None, Value::Object(o)) => Self::Unknown(o),
            (None, _) => unreachable!("built from an object"),
        }
    }
}

impl<'de> Deserialize<'de> for InputResponse {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Object(o) => Ok(Self::from_object(o)),
            other => Err(de::Error::custom(format_args!(
                "an input response must be an object, found {}",
                kind_of(&other)
            ))),
        }
    }
}

/// A short name for the JSON type of `v` (for error messages).
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The `input_required` answer: questions, opaque state, or both.
///
/// At least one of `input_requests` and `request_state` must be present; only `tools/call`,
/// `prompts/get` and `resources/read` may answer this way. It never carries caching hints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Always [`ResultType::InputRequired`] when sent.
    #[serde(default = "input_required")]
    pub result_type: ResultType,
    /// The questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state to echo back byte for byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

fn input_required() -> ResultType {
    ResultType::InputRequired
}

impl InputRequiredResult {
    /// An empty result to fill in (`resultType` set).
    pub fn new() -> Self {
        Self {
            result_type: ResultType::InputRequired,
            ..Self::default()
        }
    }

    /// Adds a question.
    pub fn with_request(mut self, key: impl Into<String>, request: InputRequest) -> Self {
        self.input_requests
            .get_or_insert_with(Default::default)
            .insert(key.into(), request);
        self
    }

    /// Sets the state.
    pub fn with_state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }
}

/// The result of `tools/call`, `prompts/get` or `resources/read`: complete, or a request
/// for more input.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<T> {
    /// The final result.
    Complete(T),
    /// The server needs input; retry with answers and the state.
    InputRequired(InputRequiredResult),
}

impl<T: Serialize> Serialize for Outcome<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Complete(t) => t.serialize(s),
            Self::InputRequired(r) => r.serialize(s),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Outcome<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Buffered raw, not as a `Value`: a `Value` sorts object keys, and the order of a
        // form's fields is the order its author wants them shown in.
        #[derive(Deserialize)]
        struct Kind {
            #[serde(rename = "resultType", default)]
            result_type: Option<Value>,
        }
        let raw = Box::<serde_json::value::RawValue>::deserialize(d)?;
        let probe: Kind = serde_json::from_str(raw.get()).map_err(de::Error::custom)?;
        let kind = match probe.result_type {
            None => ResultType::Complete,
            Some(Value::String(s)) if s == "complete" => ResultType::Complete,
            Some(Value::String(s)) if s == "input_required" => ResultType::InputRequired,
            Some(other) => {
                return Err(de::Error::custom(format_args!(
                    "unsupported resultType {other}"
                )));
            }
        };
        match kind {
            ResultType::Complete => serde_json::from_str::<T>(raw.get())
                .map(Outcome::Complete)
                .map_err(de::Error::custom),
            ResultType::InputRequired => serde_json::from_str::<InputRequiredResult>(raw.get())
                .map(Outcome::InputRequired)
                .map_err(de::Error::custom),
            ResultType::Task => Err(de::Error::custom(
                "a task result is read as a CreateTaskResult",
            )),
        }
    }
}
