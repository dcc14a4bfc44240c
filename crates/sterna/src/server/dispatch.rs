//! The request pipeline: `_meta` and version checks, then one function per method.

use super::Server;
use super::completion::CompletionRequest;
use super::context::{Context, Inner as CtxInner, RequestEnv};
use super::lists::{Pages, page_index};
use super::round::{Round, Target};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use sterna_types::completion::{CompleteResult, CompletionReference};
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::{ErrorResponseRef, Incoming, Malformed, RawMessage, RequestId};
use sterna_types::meta::{RequestMeta, ResultMeta};
use sterna_types::result::ResultType;

/// The answer to one request: its id and a rendered result or an error.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request answered.
    pub id: Option<RequestId>,
    /// The rendered `result`, or the `error`.
    pub body: Result<Box<RawValue>, ErrorObject>,
    /// The error came from reading the envelope (`_meta`, headers, version) rather than
    /// from the method (HTTP answers those with 400).
    pub(crate) early: bool,
}

impl Response {
    pub(crate) fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Self {
            id,
            body: Err(error),
            early: false,
        }
    }

    pub(crate) fn early(id: RequestId, error: ErrorObject) -> Self {
        Self {
            id: Some(id),
            body: Err(error),
            early: true,
        }
    }

    pub(crate) fn ok(id: RequestId, result: Box<RawValue>) -> Self {
        Self {
            id: Some(id),
            body: Ok(result),
            early: false,
        }
    }

    /// True when the request was refused before its method ran: malformed `_meta`,
    /// header mismatch, unsupported version.
    pub fn is_envelope_error(&self) -> bool {
        self.early
    }

    /// The complete JSON-RPC response message.
    pub fn to_bytes(&self) -> Vec<u8> {
        match &self.body {
            Ok(result) => {
                let id = self.id.as_ref().expect("results always answer a known id");
                let raw = result.get().as_bytes();
                let mut out = Vec::with_capacity(raw.len() + 40);
                out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                serde_json::to_writer(&mut out, id).expect("ids serialize");
                out.extend_from_slice(br#","result":"#);
                out.extend_from_slice(raw);
                out.push(b'}');
                out
            }
            Err(error) => serde_json::to_vec(&ErrorResponseRef {
                id: self.id.as_ref(),
                error,
            })
            .expect("responses serialize"),
        }
    }

    /// The error code, if this is an error.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.body.as_ref().err().map(|e| e.code)
    }
}

/// What a transport checks between reading `_meta` and running the method: the HTTP
/// headers against the body.
pub(crate) trait TransportCheck: Send + Sync {
    /// `name` is the tool or prompt name or resource URI; `arguments` the tool arguments.
    fn check(
        &self,
        meta: &RequestMeta,
        name: Option<&str>,
        arguments: Option<&RawValue>,
    ) -> Result<(), ErrorObject>;
}

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
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
}

fn invalid(msg: impl Into<String>) -> ErrorObject {
    ErrorObject::invalid_params(msg)
}

fn missing_meta() -> ErrorObject {
    invalid("Missing params._meta (protocolVersion and clientCapabilities are required)")
}

/// Decodes `_meta` (`-32602` when absent or malformed).
pub(crate) fn decode_meta(raw: Option<&RawValue>) -> Result<RequestMeta, ErrorObject> {
    let raw = raw.ok_or_else(missing_meta)?;
    serde_json::from_str(raw.get()).map_err(|e| invalid(format!("Invalid params._meta: {e}")))
}

/// Checks that the request's protocol version is served (`-32022` otherwise).
pub(crate) fn check_version(meta: &RequestMeta) -> Result<(), ErrorObject> {
    if sterna_types::version::is_modern(&meta.protocol_version) {
        Ok(())
    } else {
        Err(ErrorObject::unsupported_version(
            sterna_types::version::MODERN_VERSIONS,
            &meta.protocol_version,
        ))
    }
}

#[derive(Deserialize)]
pub(crate) struct ListParams {
    #[serde(default)]
    cursor: Option<String>,
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
}

#[derive(Deserialize)]
pub(crate) struct CallParams<'a> {
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default, borrow)]
    arguments: RawField<'a>,
    #[serde(default, borrow, rename = "inputResponses")]
    input_responses: RawField<'a>,
    #[serde(default, rename = "requestState")]
    request_state: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct PromptParams<'a> {
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default)]
    arguments: Option<BTreeMap<String, String>>,
    #[serde(default, borrow, rename = "inputResponses")]
    input_responses: RawField<'a>,
    #[serde(default, rename = "requestState")]
    request_state: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct ReadParams<'a> {
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
    uri: String,
    #[serde(default, borrow, rename = "inputResponses")]
    input_responses: RawField<'a>,
    #[serde(default, rename = "requestState")]
    request_state: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct CompleteParams {
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
    #[serde(rename = "ref")]
    reference: CompletionReference,
    argument: sterna_types::completion::CompletionArgument,
    #[serde(default)]
    context: Option<sterna_types::completion::CompletionContext>,
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
}

/// Decodes the params of one kind of method (see [`RawMessage::parse_request_with`]).
#[derive(Clone, Copy)]
enum ParamsSeed {
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

    /// The seed for the one-pass reader: every method but those that need their raw
    /// params (`subscriptions/listen`) or answer before reading them (removed methods).
    fn fast(method: &str) -> Option<Self> {
        (method != "subscriptions/listen" && !REMOVED.contains(&method)).then(|| Self::of(method))
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

/// A request as read: params still raw, or decoded by the one-pass reader.
#[allow(
    clippy::large_enum_variant,
    reason = "lives on the stack for one request; boxing would cost an allocation"
)]
pub(crate) enum Prepared<'a> {
    Raw(Option<&'a RawValue>),
    Decoded(Params<'a>),
}

/// A message as the server reads it.
#[allow(
    clippy::large_enum_variant,
    reason = "lives on the stack for one request; boxing would cost an allocation"
)]
pub(crate) enum Read<'a> {
    Request {
        id: RequestId,
        method: Cow<'a, str>,
        params: Prepared<'a>,
    },
    /// A notification or a response.
    Other(Incoming<'a>),
}

/// Reads a message: requests in the usual shape in one pass, anything else (and every
/// error) through [`RawMessage::parse`].
pub(crate) fn read(bytes: &[u8]) -> Result<Read<'_>, Malformed> {
    if let Some((id, method, params)) = RawMessage::parse_request_with(bytes, ParamsSeed::fast) {
        return Ok(Read::Request {
            id,
            method,
            params: Prepared::Decoded(params),
        });
    }
    Ok(match RawMessage::parse(bytes)? {
        Incoming::Request { id, method, params } => Read::Request {
            id,
            method,
            params: Prepared::Raw(params),
        },
        other => Read::Other(other),
    })
}

impl<'a> Params<'a> {
    /// Decodes the params of `method` (a JSON object). When that fails, `_meta` is
    /// still read on its own so that its errors come first.
    fn read(
        method: &str,
        raw: &'a RawValue,
    ) -> (Result<Self, ErrorObject>, Result<RequestMeta, ErrorObject>) {
        use serde::de::DeserializeSeed;
        let mut de = serde_json::Deserializer::from_str(raw.get());
        match ParamsSeed::of(method).deserialize(&mut de) {
            Ok(p) => p.with_meta(),
            Err(e) => {
                let meta = serde_json::from_str::<RawMeta<'a>>(raw.get())
                    .ok()
                    .and_then(|m| m.meta);
                (
                    Err(invalid(format!("Invalid params: {e}"))),
                    decode_meta(meta),
                )
            }
        }
    }

    /// Takes `_meta` out of decoded params (`-32602` when it is missing).
    fn with_meta(mut self) -> (Result<Self, ErrorObject>, Result<RequestMeta, ErrorObject>) {
        let meta = match &mut self {
            Params::Call(p) => p.meta.take(),
            Params::Prompt(p) => p.meta.take(),
            Params::Read(p) => p.meta.take(),
            Params::Complete(p) => p.meta.take(),
            Params::List(p) => p.meta.take(),
            Params::Other(p) => p.meta.take(),
        };
        (Ok(self), meta.ok_or_else(missing_meta))
    }

    /// The name (tool, prompt) or URI (resource) and tool arguments, for header checks.
    fn target(&self) -> (Option<&str>, Option<&'a RawValue>) {
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
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
];

impl Server {
    /// Handles one message given as bytes (a line of stdio, a POST body). Returns the
    /// response to send, if any: notifications and cancelled requests get none.
    pub async fn handle_message(&self, bytes: &[u8], env: RequestEnv) -> Option<Response> {
        match read(bytes) {
            Err(m) => Some(Response::error(m.id, m.error)),
            Ok(Read::Request { id, method, params }) => {
                self.handle_checked(id, &method, params, env, None).await
            }
            Ok(Read::Other(Incoming::Notification { method, .. })) => {
                tracing::debug!(%method, "notification ignored");
                None
            }
            Ok(Read::Other(Incoming::Result { id, .. } | Incoming::Error { id: Some(id), .. })) => {
                tracing::warn!(%id, "a response arrived but this server never sends requests");
                None
            }
            Ok(Read::Other(Incoming::Error { id: None, error })) => {
                tracing::warn!(%error, "the peer reported an error");
                None
            }
            Ok(Read::Other(Incoming::Request { id, method, params })) => {
                // `read` never returns this; handled anyway.
                self.handle(id, &method, params, env).await
            }
        }
    }

    /// Handles one request. `None` when it was cancelled (nothing may be sent then).
    pub async fn handle(
        &self,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        env: RequestEnv,
    ) -> Option<Response> {
        self.handle_checked(id, method, Prepared::Raw(params), env, None)
            .await
    }

    /// Handles one request, running a transport's checks after `_meta` is read.
    pub(crate) async fn handle_checked(
        &self,
        id: RequestId,
        method: &str,
        params: Prepared<'_>,
        env: RequestEnv,
        check: Option<&dyn TransportCheck>,
    ) -> Option<Response> {
        let removed_method = REMOVED.contains(&method);
        let (parsed, meta, raw) = match params {
            Prepared::Decoded(p) => {
                let (parsed, meta) = p.with_meta();
                (parsed, meta, None)
            }
            Prepared::Raw(params) => {
                let Some(raw) = params.filter(|p| p.get().trim_start().starts_with('{')) else {
                    if removed_method {
                        return Some(Response::error(Some(id), removed(method)));
                    }
                    let e = match params {
                        None => invalid("Missing params: every request carries params._meta"),
                        Some(_) => invalid("params must be an object"),
                    };
                    return Some(Response::early(id, e));
                };
                let (parsed, meta) = Params::read(method, raw);
                (parsed, meta, Some(raw))
            }
        };
        let meta = match meta {
            Ok(m) => m,
            Err(_) if removed_method => return Some(Response::error(Some(id), removed(method))),
            Err(e) => return Some(Response::early(id, e)),
        };
        if let Some(check) = check {
            let (name, arguments) = parsed.as_ref().map(Params::target).unwrap_or((None, None));
            if let Err(e) = check.check(&meta, name, arguments) {
                return Some(Response::early(id, e));
            }
        }
        if let Err(e) = check_version(&meta) {
            return Some(Response::early(id, e));
        }
        if removed_method {
            return Some(Response::error(Some(id), removed(method)));
        }
        if !self.offers(method) {
            return Some(Response::error(
                Some(id),
                ErrorObject::method_not_found(method),
            ));
        }
        let parsed = match parsed {
            Ok(p) => p,
            Err(e) => return Some(Response::error(Some(id), e)),
        };
        let meta = Arc::new(meta);
        let lists = &self.inner.lists;
        let body = match (method, parsed) {
            ("server/discover", _) => Ok(lists.discover.clone()),
            ("tools/list", Params::List(p)) => self.list("tools", &lists.tools, p, method),
            ("prompts/list", Params::List(p)) => self.list("prompts", &lists.prompts, p, method),
            ("resources/list", Params::List(p)) => {
                self.list("resources", &lists.resources, p, method)
            }
            ("resources/templates/list", Params::List(p)) => {
                self.list("templates", &lists.templates, p, method)
            }
            ("tools/call", Params::Call(p)) if lists.tools.is_some() => {
                return Box::pin(self.call_tool(id, meta, p, env)).await;
            }
            ("prompts/get", Params::Prompt(p)) if lists.prompts.is_some() => {
                return Box::pin(self.get_prompt(id, meta, p, env)).await;
            }
            ("resources/read", Params::Read(p)) if lists.resources.is_some() => {
                return Box::pin(self.read_resource(id, meta, p, env)).await;
            }
            ("completion/complete", Params::Complete(p)) if self.inner.completions => {
                return Box::pin(self.complete(id, meta, p, env)).await;
            }
            ("subscriptions/listen", _) => {
                // The one-pass reader leaves this method's params raw.
                return Box::pin(super::listen::listen(self, id, raw, env)).await;
            }
            (m, _) => Err(ErrorObject::method_not_found(m)),
        };
        Some(match body {
            Ok(b) => Response::ok(id, b),
            Err(e) => Response::error(Some(id), e),
        })
    }

    /// Methods this server answers (a capability it does not offer is an unknown method).
    fn offers(&self, method: &str) -> bool {
        let l = &self.inner.lists;
        match method {
            "server/discover" | "subscriptions/listen" => true,
            "tools/list" | "tools/call" => l.tools.is_some(),
            "prompts/list" | "prompts/get" => l.prompts.is_some(),
            "resources/list" | "resources/templates/list" | "resources/read" => {
                l.resources.is_some()
            }
            "completion/complete" => self.inner.completions,
            _ => false,
        }
    }

    fn list(
        &self,
        kind: &str,
        pages: &Pages,
        p: ListParams,
        method: &str,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let pages = pages
            .as_ref()
            .ok_or_else(|| ErrorObject::method_not_found(method))?;
        let i = page_index(kind, p.cursor.as_deref(), pages.len())?;
        Ok(pages[i].clone())
    }

    async fn call_tool(
        &self,
        id: RequestId,
        meta: Arc<RequestMeta>,
        p: CallParams<'_>,
        env: RequestEnv,
    ) -> Option<Response> {
        let Some(tool) = self.inner.tools.get(p.name.as_ref()) else {
            return Some(Response::error(
                Some(id),
                invalid(format!("Unknown tool: {}", p.name)),
            ));
        };
        let args = match p.arguments {
            RawField::Present(a) if a.get().trim() != "null" => Some(a),
            _ => None,
        };
        let round = Round {
            server: self,
            id,
            method: "tools/call",
            target: tool.name.clone(),
            binding_args: Target::Tool(args),
            meta,
            input_responses: p.input_responses,
            request_state: p.request_state,
            single_use: tool.single_use,
            unsolicited: tool.unsolicited,
            env,
        };
        let handler = tool.handler.clone();
        round
            .run(move |ctx| {
                handler
                    .call(ctx, args)
                    .map_err(|e| invalid(format!("Invalid arguments: {e}")))
            })
            .await
    }

    async fn get_prompt(
        &self,
        id: RequestId,
        meta: Arc<RequestMeta>,
        p: PromptParams<'_>,
        env: RequestEnv,
    ) -> Option<Response> {
        let Some(prompt) = self.inner.prompts.get(p.name.as_ref()) else {
            return Some(Response::error(
                Some(id),
                invalid(format!("Unknown prompt: {}", p.name)),
            ));
        };
        let args = p.arguments.unwrap_or_default();
        let round = Round {
            server: self,
            id,
            method: "prompts/get",
            target: prompt.name.clone(),
            binding_args: Target::Prompt(&args),
            meta,
            input_responses: p.input_responses,
            request_state: p.request_state,
            single_use: false,
            unsolicited: false,
            env,
        };
        let handler = prompt.handler.clone();
        let owned = args.clone();
        round
            .run(move |ctx| {
                handler
                    .call(ctx, owned)
                    .map_err(|e| invalid(format!("Invalid arguments: {e}")))
            })
            .await
    }

    async fn read_resource(
        &self,
        id: RequestId,
        meta: Arc<RequestMeta>,
        p: ReadParams<'_>,
        env: RequestEnv,
    ) -> Option<Response> {
        let (entry, vars) = match self.inner.resources.get(&p.uri) {
            Some(e) => (e, BTreeMap::new()),
            None => match self
                .inner
                .templates
                .iter()
                .find_map(|t| t.parsed.matches(&p.uri).map(|v| (&t.entry, v)))
            {
                Some(found) => found,
                None => {
                    return Some(Response::error(
                        Some(id),
                        ErrorObject::new(
                            ErrorCode::INVALID_PARAMS,
                            format!("Resource not found: {}", p.uri),
                        )
                        .with_data(serde_json::json!({ "uri": p.uri })),
                    ));
                }
            },
        };
        let round = Round {
            server: self,
            id,
            method: "resources/read",
            target: Arc::from(p.uri.as_str()),
            binding_args: Target::Resource,
            meta,
            input_responses: p.input_responses,
            request_state: p.request_state,
            single_use: false,
            unsolicited: false,
            env,
        };
        let handler = entry.handler.clone();
        let mime = entry.mime.clone();
        let uri = p.uri;
        round
            .with_cache(entry.cache)
            .run(move |ctx| {
                handler
                    .call(ctx, uri, mime, vars)
                    .map_err(|e| invalid(format!("Invalid resource variables: {e}")))
            })
            .await
    }

    async fn complete(
        &self,
        id: RequestId,
        meta: Arc<RequestMeta>,
        p: CompleteParams,
        env: RequestEnv,
    ) -> Option<Response> {
        let (completer, target) = match &p.reference {
            CompletionReference::Prompt { name, .. } => (
                self.inner
                    .prompts
                    .get(name)
                    .and_then(|e| e.completions.get(&p.argument.name)),
                name.clone(),
            ),
            CompletionReference::Resource { uri } => (
                self.inner
                    .templates
                    .iter()
                    .find(|t| t.template == *uri)
                    .and_then(|t| t.completions.get(&p.argument.name)),
                uri.clone(),
            ),
        };
        let ctx = Context::from_inner(CtxInner {
            id: id.clone(),
            method: "completion/complete",
            target: target.into(),
            meta,
            principal: env.principal.clone(),
            notifier: env.notifier.clone(),
            cancel: env.cancel.clone(),
            round: 1,
            prev_app: None,
            next_app: Mutex::new(None),
            resolver: Mutex::new(None),
            changes: self.inner.changes.clone(),
        });
        let completion = match completer {
            None => Ok(Default::default()),
            Some(c) => {
                let req = CompletionRequest {
                    argument: p.argument.name,
                    value: p.argument.value,
                    context: p.context.and_then(|c| c.arguments).unwrap_or_default(),
                };
                let started =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c.complete(ctx, req)));
                match started {
                    Err(panic) => {
                        super::round::log_panic(panic.as_ref());
                        Err(ErrorObject::internal("Internal error"))
                    }
                    Ok(fut) => match super::round::guarded(fut, &env.cancel).await? {
                        Ok(Ok(c)) => Ok(c),
                        Ok(Err(e)) => Err(super::round::rpc_error(e)),
                        Err(()) => Err(ErrorObject::internal("Internal error")),
                    },
                }
            }
        };
        let body = completion.map(|completion| {
            serde_json::value::to_raw_value(&CompleteResult {
                result_type: ResultType::Complete,
                completion,
                meta: Some(ResultMeta {
                    server_info: Some(self.inner.info.clone()),
                    ..ResultMeta::default()
                }),
            })
            .expect("results serialize")
        });
        Some(match body {
            Ok(b) => Response::ok(id, b),
            Err(e) => Response::error(Some(id), e),
        })
    }
}

pub(crate) fn removed(method: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "Method not found: {method} (not part of MCP {}; this server is stateless: send \
             server/discover or any request with params._meta)",
            sterna_types::version::LATEST
        ),
    )
    .with_data(serde_json::json!({ "supported": sterna_types::version::MODERN_VERSIONS }))
}
