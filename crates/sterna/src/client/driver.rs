//! The client and its MRTR round driver.

use super::builder::ClientBuilder;
use super::call::{Call, CallResult, Pending, Step};
use super::error::{ClientError, GaveUp, ProtocolViolation, Refusal, TransportError};
use super::handlers::Handlers;
use super::transport::{NotificationSink, Outgoing, Transport};
use crate::mirror::{HeaderParam, ParamKind, header_params};
use futures_util::future::join_all;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde::ser::SerializeMap;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use sterna_types::capabilities::ClientCapabilities;
use sterna_types::discover::DiscoverResult;
use sterna_types::elicitation::ElicitRequestParams;
use sterna_types::error::ErrorCode;
use sterna_types::jsonrpc::{Incoming, RawMessage, RequestId};
use sterna_types::meta::Implementation;
use sterna_types::mrtr::{InputRequest, InputResponse, InputResponses};
use sterna_types::prompts::{GetPromptResult, ListPromptsResult, Prompt};
use sterna_types::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceTemplate,
};
use sterna_types::result::Outcome;
use sterna_types::roots::ListRootsResult;
use sterna_types::tools::{CallToolResult, ListToolsResult, Tool};

/// Limits of the round driver.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_rounds: u32,
    pub(crate) budget: Duration,
    pub(crate) backoff: (Duration, Duration),
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_rounds: 10,
            budget: Duration::from_secs(600),
            backoff: (Duration::from_millis(50), Duration::from_secs(1)),
        }
    }
}

/// A 2026-07-28 MCP client. Cheap to clone; calls may run concurrently.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    transport: Box<dyn Transport>,
    info: Option<Implementation>,
    caps: ClientCapabilities,
    handlers: Handlers,
    limits: Limits,
    sink: NotificationSink,
    version: Mutex<String>,
    next_id: AtomicI64,
    /// `x-mcp-header` annotations by tool, learned from `tools/list`.
    mirrors: RwLock<Option<HashMap<String, Vec<HeaderParam>>>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("capabilities", &self.inner.caps)
            .field("limits", &self.inner.limits)
            .finish()
    }
}

/// `params` plus `_meta`, serialized without copying either.
struct WithMeta<'a> {
    params: &'a Map<String, Value>,
    version: &'a str,
    caps: &'a ClientCapabilities,
    info: Option<&'a Implementation>,
}

impl Serialize for WithMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Meta<'a>(&'a WithMeta<'a>);
        impl Serialize for Meta<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry(sterna_types::meta::PROTOCOL_VERSION_KEY, self.0.version)?;
                m.serialize_entry(sterna_types::meta::CLIENT_CAPABILITIES_KEY, self.0.caps)?;
                if let Some(info) = self.0.info {
                    m.serialize_entry(sterna_types::meta::CLIENT_INFO_KEY, info)?;
                }
                // The call's own entries (`progressToken`, `logLevel` …); the three above
                // are the client's and win.
                if let Some(Value::Object(extra)) = self.0.params.get("_meta") {
                    for (k, v) in extra {
                        if ![
                            sterna_types::meta::PROTOCOL_VERSION_KEY,
                            sterna_types::meta::CLIENT_CAPABILITIES_KEY,
                            sterna_types::meta::CLIENT_INFO_KEY,
                        ]
                        .contains(&k.as_str())
                        {
                            m.serialize_entry(k, v)?;
                        }
                    }
                }
                m.end()
            }
        }
        let mut m = s.serialize_map(None)?;
        for (k, v) in self.params {
            if k != "_meta" {
                m.serialize_entry(k, v)?;
            }
        }
        m.serialize_entry("_meta", &Meta(self))?;
        m.end()
    }
}

#[derive(Serialize)]
struct Message<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    params: WithMeta<'a>,
}

/// Runs `fut` within what is left of `budget` since `started`.
async fn within<T>(
    started: Instant,
    budget: Duration,
    fut: impl std::future::Future<Output = Result<T, ClientError>>,
) -> Result<T, ClientError> {
    tokio::time::timeout(budget.saturating_sub(started.elapsed()), fut)
        .await
        .map_err(|_| ClientError::GaveUp(GaveUp::TimeBudget(budget)))?
}

fn violation(msg: impl Into<String>) -> ClientError {
    ClientError::Protocol(ProtocolViolation(msg.into()))
}

impl Client {
    /// Starts building a client called `name` at `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(Implementation::new(name, version))
    }

    pub(crate) fn new(
        transport: Box<dyn Transport>,
        info: Option<Implementation>,
        caps: ClientCapabilities,
        handlers: Handlers,
        limits: Limits,
        sink: Option<NotificationSink>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                transport,
                info,
                caps,
                handlers,
                limits,
                sink: sink.unwrap_or_else(|| Arc::new(|_: &[u8]| {})),
                version: Mutex::new(sterna_types::version::LATEST.to_owned()),
                next_id: AtomicI64::new(1),
                mirrors: RwLock::new(None),
            }),
        }
    }

    /// The capabilities this client declares on every request.
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.inner.caps
    }

    /// The protocol version in use (after any negotiation).
    pub fn protocol_version(&self) -> String {
        self.inner
            .version
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Closes the transport (ends a child server process gracefully).
    pub async fn close(&self) {
        self.inner.transport.close().await;
    }

    fn next_id(&self) -> RequestId {
        RequestId::Number(self.inner.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends one request (with `_meta`) and returns its `result`. Handles version
    /// negotiation (`-32022`), stale header annotations (`-32020`, once) and broken
    /// response streams (re-issued with a new id).
    async fn request(
        &self,
        method: &str,
        params: &Map<String, Value>,
        name: Option<&str>,
    ) -> Result<Box<RawValue>, ClientError> {
        let mut version_retried = false;
        let mut headers_retried = false;
        let mut broken = 0;
        loop {
            let version = self.protocol_version();
            let id = self.next_id();
            let body = serde_json::to_vec(&Message {
                jsonrpc: "2.0",
                id: &id,
                method,
                params: WithMeta {
                    params,
                    version: &version,
                    caps: &self.inner.caps,
                    info: self.inner.info.as_ref(),
                },
            })
            .map_err(|e| violation(format!("cannot encode the request: {e}")))?;
            let header_params = if method == "tools/call" && self.inner.transport.uses_headers() {
                self.mirrored(name.unwrap_or(""), params.get("arguments"))
                    .await?
            } else {
                Vec::new()
            };
            let out = Outgoing {
                id: id.clone(),
                method: method.to_owned(),
                body,
                protocol_version: version.clone(),
                name: name.map(str::to_owned),
                params: header_params,
            };
            let bytes = match self
                .inner
                .transport
                .request(out, self.inner.sink.clone())
                .await
            {
                Ok(b) => b,
                Err(TransportError::StreamBroken) if broken < 2 => {
                    broken += 1;
                    tracing::debug!(%id, "response stream broke; re-issuing with a new id");
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            match RawMessage::parse(&bytes) {
                Ok(Incoming::Result { id: got, result }) if got == id => {
                    // Kept raw: decoding through `Value` would sort every object's keys
                    // (a form's fields among them) alphabetically.
                    return serde_json::from_str(result.get())
                        .map_err(|e| violation(format!("unreadable result: {e}")));
                }
                Ok(Incoming::Error { error, .. }) => {
                    if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION && !version_retried {
                        version_retried = true;
                        let supported: Vec<String> = error
                            .data
                            .as_ref()
                            .and_then(|d| d.get("supported"))
                            .and_then(|s| serde_json::from_value(s.clone()).ok())
                            .unwrap_or_default();
                        let Some(v) = sterna_types::version::MODERN_VERSIONS
                            .iter()
                            .find(|v| supported.iter().any(|s| s == *v))
                        else {
                            return Err(ClientError::Incompatible { supported });
                        };
                        *self.inner.version.lock().unwrap_or_else(|p| p.into_inner()) =
                            (*v).to_owned();
                        continue;
                    }
                    if error.code == ErrorCode::HEADER_MISMATCH
                        && method == "tools/call"
                        && !headers_retried
                    {
                        headers_retried = true;
                        tracing::debug!("header mismatch; refreshing tools/list and retrying once");
                        Box::pin(self.list_tools()).await?;
                        continue;
                    }
                    return Err(ClientError::Server(error));
                }
                Ok(_) => return Err(violation("the answer is not the response to this request")),
                Err(m) => {
                    return Err(violation(format!(
                        "unreadable response: {}",
                        m.error.message
                    )));
                }
            }
        }
    }

    async fn typed<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<T, ClientError> {
        let v = self.request(method, &params, None).await?;
        serde_json::from_str(v.get())
            .map_err(|e| violation(format!("malformed {method} result: {e}")))
    }

    /// `server/discover`.
    pub async fn discover(&self) -> Result<DiscoverResult, ClientError> {
        self.typed("server/discover", Map::new()).await
    }

    async fn pages<R: DeserializeOwned, I>(
        &self,
        method: &str,
        items: impl Fn(R) -> (Vec<I>, Option<String>),
    ) -> Result<Vec<I>, ClientError> {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let mut params = Map::new();
            if let Some(c) = cursor.take() {
                params.insert("cursor".into(), Value::String(c));
            }
            let (page, next) = items(self.typed::<R>(method, params).await?);
            all.extend(page);
            match next {
                Some(c) => cursor = Some(c),
                None => return Ok(all),
            }
        }
        Err(violation(format!("{method} did not end after 1000 pages")))
    }

    /// Every tool (all pages). Tools whose `x-mcp-header` annotations are invalid are left
    /// out (with a warning), as 2026-07-28 requires; the valid annotations are kept to
    /// mirror arguments into `Mcp-Param-*` headers.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let tools = self
            .pages("tools/list", |r: ListToolsResult| (r.tools, r.next_cursor))
            .await?;
        let mut mirrors = HashMap::new();
        let mut kept = Vec::with_capacity(tools.len());
        for tool in tools {
            let mut schema = tool.input_schema.clone();
            match header_params(&mut schema) {
                Ok(params) => {
                    mirrors.insert(tool.name.clone(), params);
                    kept.push(tool);
                }
                Err(e) => {
                    tracing::warn!(tool = %tool.name, "leaving out a tool with invalid x-mcp-header annotations: {e}")
                }
            }
        }
        *self
            .inner
            .mirrors
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(mirrors);
        Ok(kept)
    }

    /// Every prompt (all pages).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.pages("prompts/list", |r: ListPromptsResult| {
            (r.prompts, r.next_cursor)
        })
        .await
    }

    /// Every resource (all pages).
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.pages("resources/list", |r: ListResourcesResult| {
            (r.resources, r.next_cursor)
        })
        .await
    }

    /// Every resource template (all pages).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.pages(
            "resources/templates/list",
            |r: ListResourceTemplatesResult| (r.resource_templates, r.next_cursor),
        )
        .await
    }

    /// The `Mcp-Param-*` headers for a call of `tool` (learning annotations first if
    /// needed). A tool this client left out as invalid is refused here.
    async fn mirrored(
        &self,
        tool: &str,
        args: Option<&Value>,
    ) -> Result<Vec<(String, String)>, ClientError> {
        let known = self
            .inner
            .mirrors
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .is_some();
        if !known {
            Box::pin(self.list_tools()).await?;
        }
        let mirrors = self.inner.mirrors.read().unwrap_or_else(|p| p.into_inner());
        let Some(params) = mirrors.as_ref().and_then(|m| m.get(tool)) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(params.len());
        for p in params {
            let value = args.and_then(|a| p.path.iter().try_fold(a, |v, k| v.get(k)));
            let text = match (p.kind, value) {
                (_, None | Some(Value::Null)) => continue,
                (ParamKind::String, Some(Value::String(s))) => crate::http_encode(s),
                (ParamKind::Integer, Some(Value::Number(n))) => match (n.as_i64(), n.as_f64()) {
                    (Some(i), _) => i.to_string(),
                    (None, Some(f)) if f.fract() == 0.0 => format!("{}", f as i64),
                    _ => n.to_string(),
                },
                (ParamKind::Boolean, Some(Value::Bool(b))) => b.to_string(),
                (_, Some(other)) => {
                    tracing::warn!(tool, header = %p.name, "argument {other} does not match its x-mcp-header type; header left out");
                    continue;
                }
            };
            out.push((p.name.clone(), text));
        }
        Ok(out)
    }

    /// Runs a call to completion, driving every round: on `input_required` the registered
    /// handlers answer all questions concurrently and the call is retried with a new id,
    /// the answers, and the `requestState` echoed exactly.
    pub async fn run<T: CallResult>(&self, call: Call<T>) -> Result<T, ClientError> {
        let started = Instant::now();
        let budget = self.inner.limits.budget;
        let mut step = within(started, budget, self.start(call)).await?;
        let mut state_only = 0u32;
        loop {
            let pending = match step {
                Step::Complete(t) => return Ok(t),
                Step::InputRequired(p) => p,
            };
            if pending.round >= self.inner.limits.max_rounds {
                return Err(ClientError::GaveUp(GaveUp::Rounds(pending.round)));
            }
            let next = async {
                let answers = if pending.input_requests.is_empty() {
                    state_only += 1;
                    tokio::time::sleep(self.backoff(state_only)).await;
                    InputResponses::new()
                } else {
                    state_only = 0;
                    self.fulfil(&pending.input_requests).await?
                };
                self.resume(pending, answers).await
            };
            step = within(started, budget, next).await?;
        }
    }

    fn backoff(&self, consecutive: u32) -> Duration {
        let (first, max) = self.inner.limits.backoff;
        let factor = 1u32 << consecutive.saturating_sub(1).min(16);
        first.saturating_mul(factor).min(max)
    }

    /// Runs the first round of a call.
    pub async fn start<T: CallResult>(&self, call: Call<T>) -> Result<Step<T>, ClientError> {
        let pending = Pending {
            method: T::METHOD.to_owned(),
            name: call.name,
            params: call.params,
            input_requests: Default::default(),
            request_state: None,
            round: 0,
            _t: PhantomData,
        };
        self.round(pending, None).await
    }

    /// Answers a pending call and runs its next round. `answers` are this round's only
    /// (earlier ones travel in the state); the state is echoed as received.
    pub async fn resume<T: CallResult>(
        &self,
        pending: Pending<T>,
        answers: InputResponses,
    ) -> Result<Step<T>, ClientError> {
        self.round(pending, Some(answers)).await
    }

    async fn round<T: CallResult>(
        &self,
        pending: Pending<T>,
        answers: Option<InputResponses>,
    ) -> Result<Step<T>, ClientError> {
        let Pending {
            method,
            name,
            params,
            request_state,
            round,
            ..
        } = pending;
        if method != T::METHOD {
            return Err(violation(format!(
                "a pending {method} cannot resume as {}",
                T::METHOD
            )));
        }
        // MRTR members live only in this request's params, never in the call's own.
        let mut this = params.clone();
        if let Some(answers) = answers.filter(|a| !a.is_empty()) {
            this.insert(
                "inputResponses".into(),
                serde_json::to_value(answers).map_err(|e| violation(e.to_string()))?,
            );
        }
        if let Some(state) = &request_state {
            this.insert("requestState".into(), Value::String(state.clone()));
        }
        let value = self.request(&method, &this, Some(&name)).await?;
        match serde_json::from_str::<Outcome<T>>(value.get()) {
            Ok(Outcome::Complete(t)) => Ok(Step::Complete(t)),
            Ok(Outcome::InputRequired(r)) => {
                let requests = r.input_requests.unwrap_or_default();
                if requests.is_empty() && r.request_state.is_none() {
                    return Err(violation(
                        "input_required without inputRequests or requestState",
                    ));
                }
                Ok(Step::InputRequired(Pending {
                    method,
                    name,
                    params,
                    input_requests: requests,
                    request_state: r.request_state,
                    round: round + 1,
                    _t: PhantomData,
                }))
            }
            Err(e) => Err(violation(format!("malformed {method} result: {e}"))),
        }
    }

    /// Answers a round's questions with the registered handlers, all at once. A refused
    /// sampling or roots request abandons the call; a question this client never declared
    /// it could answer is a protocol violation.
    pub async fn fulfil(
        &self,
        requests: &sterna_types::mrtr::InputRequests,
    ) -> Result<InputResponses, ClientError> {
        let h = &self.inner.handlers;
        let futures = requests.iter().map(|(key, request)| async move {
            let response = match request {
                InputRequest::Elicit(ElicitRequestParams::Form(form)) => match &h.form {
                    Some(f) => InputResponse::Elicit(f.elicit(form.clone()).await),
                    None => {
                        return Err(violation(format!(
                            "{key}: a form elicitation, which this client did not declare"
                        )));
                    }
                },
                InputRequest::Elicit(ElicitRequestParams::Url(u)) => match &h.url {
                    Some(f) => InputResponse::Elicit(f.elicit_url(u.clone()).await),
                    None => {
                        return Err(violation(format!(
                            "{key}: a URL elicitation, which this client did not declare"
                        )));
                    }
                },
                InputRequest::Sample(p) => match &h.sampling {
                    Some(f) if !p.uses_tools() || h.sampling_tools => InputResponse::Sample(
                        f.sample(p.clone()).await.map_err(ClientError::Refused)?,
                    ),
                    _ => {
                        return Err(violation(format!(
                            "{key}: a sampling request this client did not declare"
                        )));
                    }
                },
                InputRequest::ListRoots(_) => match &h.roots {
                    Some(f) => InputResponse::ListRoots(ListRootsResult {
                        roots: f.roots().await.map_err(ClientError::Refused)?,
                    }),
                    None => {
                        return Err(violation(format!(
                            "{key}: a roots request, which this client did not declare"
                        )));
                    }
                },
                InputRequest::Unknown { method, .. } => {
                    return Err(violation(format!("{key}: unknown input request {method}")));
                }
            };
            Ok((key.clone(), response))
        });
        join_all(futures).await.into_iter().collect()
    }

    /// Calls a tool, driving every round ([`run`](Self::run) with [`Call::tool`]).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, ClientError> {
        self.run(Call::tool(name, arguments)).await
    }

    /// Gets a prompt, driving every round ([`run`](Self::run) with [`Call::prompt`]).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<GetPromptResult, ClientError> {
        self.run(Call::prompt(name, arguments)).await
    }

    /// Reads a resource, driving every round ([`run`](Self::run) with [`Call::resource`]).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.run(Call::resource(uri)).await
    }

    /// A raw request (for methods without a typed helper); `_meta` is added (entries of
    /// a `_meta` in `params` are kept; the version, capabilities and client info are the
    /// client's own).
    pub async fn raw_request(
        &self,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<Value, ClientError> {
        let raw = self.request(method, &params, None).await?;
        serde_json::from_str(raw.get()).map_err(|e| violation(format!("unreadable result: {e}")))
    }
}

/// Used in `fulfil` to surface a refusal with its reason.
impl From<Refusal> for ClientError {
    fn from(r: Refusal) -> Self {
        Self::Refused(r)
    }
}
