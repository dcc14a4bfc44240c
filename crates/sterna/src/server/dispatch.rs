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
use sterna_types::completion::{CompleteRequestParams, CompleteResult, CompletionReference};
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::{ErrorResponseRef, Incoming, RawMessage, RequestId, ResultResponseRef};
use sterna_types::meta::{RequestMeta, ResultMeta};
use sterna_types::result::ResultType;

/// The answer to one request: its id and a rendered result or an error.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request answered.
    pub id: Option<RequestId>,
    /// The rendered `result`, or the `error`.
    pub body: Result<Box<RawValue>, ErrorObject>,
}

impl Response {
    pub(crate) fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Self {
            id,
            body: Err(error),
        }
    }

    /// The complete JSON-RPC response message.
    pub fn to_bytes(&self) -> Vec<u8> {
        match &self.body {
            Ok(result) => {
                let id = self.id.as_ref().expect("results always answer a known id");
                serde_json::to_vec(&ResultResponseRef {
                    id,
                    result: &**result,
                })
            }
            Err(error) => serde_json::to_vec(&ErrorResponseRef {
                id: self.id.as_ref(),
                error,
            }),
        }
        .expect("responses serialize")
    }

    /// The error code, if this is an error.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.body.as_ref().err().map(|e| e.code)
    }
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
struct MetaOnly {
    #[serde(rename = "_meta", default)]
    meta: Option<Box<RawValue>>,
}

fn invalid(msg: impl Into<String>) -> ErrorObject {
    ErrorObject::invalid_params(msg)
}

/// Reads `params._meta`: present and well formed (`-32602` otherwise).
pub(crate) fn read_meta(params: Option<&RawValue>) -> Result<RequestMeta, ErrorObject> {
    let params =
        params.ok_or_else(|| invalid("Missing params: every request carries params._meta"))?;
    if !params.get().trim_start().starts_with('{') {
        return Err(invalid("params must be an object"));
    }
    let only: MetaOnly =
        serde_json::from_str(params.get()).map_err(|e| invalid(format!("Invalid params: {e}")))?;
    let raw = only.meta.ok_or_else(|| {
        invalid("Missing params._meta (protocolVersion and clientCapabilities are required)")
    })?;
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
struct ListParams {
    #[serde(default)]
    cursor: Option<String>,
}

#[derive(Deserialize)]
struct CallParams<'a> {
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
struct PromptParams<'a> {
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
struct ReadParams<'a> {
    uri: String,
    #[serde(default, borrow, rename = "inputResponses")]
    input_responses: RawField<'a>,
    #[serde(default, rename = "requestState")]
    request_state: Option<String>,
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
        match RawMessage::parse(bytes) {
            Err(m) => Some(Response::error(m.id, m.error)),
            Ok(Incoming::Request { id, method, params }) => {
                self.handle(id, &method, params, env).await
            }
            Ok(Incoming::Notification { method, .. }) => {
                tracing::debug!(%method, "notification ignored");
                None
            }
            Ok(Incoming::Result { id, .. }) | Ok(Incoming::Error { id: Some(id), .. }) => {
                tracing::warn!(%id, "a response arrived but this server never sends requests");
                None
            }
            Ok(Incoming::Error { id: None, error }) => {
                tracing::warn!(%error, "the peer reported an error");
                None
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
        if REMOVED.contains(&method) {
            return Some(Response::error(Some(id), removed(method)));
        }
        let meta = match read_meta(params).and_then(|m| check_version(&m).map(|()| m)) {
            Ok(m) => m,
            Err(e) => return Some(Response::error(Some(id), e)),
        };
        self.dispatch(id, method, params, meta, env).await
    }

    /// Handles a request whose `_meta` was read and checked (transports that validate
    /// headers against `_meta` in between call this).
    pub(crate) async fn dispatch(
        &self,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        meta: RequestMeta,
        env: RequestEnv,
    ) -> Option<Response> {
        let lists = &self.inner.lists;
        let body = match method {
            "server/discover" => Ok(lists.discover.clone()),
            "tools/list" => self.list("tools", &lists.tools, params, method),
            "prompts/list" => self.list("prompts", &lists.prompts, params, method),
            "resources/list" => self.list("resources", &lists.resources, params, method),
            "resources/templates/list" => self.list("templates", &lists.templates, params, method),
            "tools/call" if lists.tools.is_some() => {
                return self.call_tool(id, meta, params, env).await;
            }
            "prompts/get" if lists.prompts.is_some() => {
                return self.get_prompt(id, meta, params, env).await;
            }
            "resources/read" if lists.resources.is_some() => {
                return self.read_resource(id, meta, params, env).await;
            }
            "completion/complete" if self.inner.completions => {
                return self.complete(id, meta, params, env).await;
            }
            "subscriptions/listen" => return super::listen::listen(self, id, params, env).await,
            m if REMOVED.contains(&m) => Err(removed(m)),
            m => Err(ErrorObject::method_not_found(m)),
        };
        Some(Response { id: Some(id), body })
    }

    fn list(
        &self,
        kind: &str,
        pages: &Pages,
        raw: Option<&RawValue>,
        method: &str,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let pages = pages
            .as_ref()
            .ok_or_else(|| ErrorObject::method_not_found(method))?;
        let p: ListParams = params(raw)?;
        let i = page_index(kind, p.cursor.as_deref(), pages.len())?;
        Ok(pages[i].clone())
    }

    async fn call_tool(
        &self,
        id: RequestId,
        meta: RequestMeta,
        raw: Option<&RawValue>,
        env: RequestEnv,
    ) -> Option<Response> {
        let p: CallParams<'_> = match params(raw) {
            Ok(p) => p,
            Err(e) => return Some(Response::error(Some(id), e)),
        };
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
            target: p.name.into_owned(),
            binding_args: Target::Tool(args),
            meta,
            input_responses: p.input_responses,
            request_state: p.request_state,
            single_use: tool.single_use,
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
        meta: RequestMeta,
        raw: Option<&RawValue>,
        env: RequestEnv,
    ) -> Option<Response> {
        let p: PromptParams<'_> = match params(raw) {
            Ok(p) => p,
            Err(e) => return Some(Response::error(Some(id), e)),
        };
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
            target: p.name.into_owned(),
            binding_args: Target::Prompt(&args),
            meta,
            input_responses: p.input_responses,
            request_state: p.request_state,
            single_use: false,
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
        meta: RequestMeta,
        raw: Option<&RawValue>,
        env: RequestEnv,
    ) -> Option<Response> {
        let p: ReadParams<'_> = match params(raw) {
            Ok(p) => p,
            Err(e) => return Some(Response::error(Some(id), e)),
        };
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
            target: p.uri.clone(),
            binding_args: Target::Resource,
            meta,
            input_responses: p.input_responses,
            request_state: p.request_state,
            single_use: false,
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
        meta: RequestMeta,
        raw: Option<&RawValue>,
        env: RequestEnv,
    ) -> Option<Response> {
        let p: CompleteRequestParams = match params(raw) {
            Ok(p) => p,
            Err(e) => return Some(Response::error(Some(id), e)),
        };
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
        let caps = Arc::new(meta.client_capabilities.clone());
        let ctx = Context::from_inner(CtxInner {
            id: id.clone(),
            method: "completion/complete",
            target,
            meta,
            caps,
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
                let fut = c.complete(ctx, req);
                match super::round::guarded(fut, &env.cancel).await? {
                    Ok(Ok(c)) => Ok(c),
                    Ok(Err(e)) => Err(super::round::rpc_error(e)),
                    Err(()) => Err(ErrorObject::internal("Internal error")),
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
        Some(Response { id: Some(id), body })
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
