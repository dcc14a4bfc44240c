//! One round of an MRTR-capable request (`tools/call`, `prompts/get`, `resources/read`):
//! verify the incoming state, run the handler, and answer complete or `input_required`
//! with a freshly sealed state.

use super::Server;
use super::context::{Context, Inner as CtxInner, RequestEnv};
use super::dispatch::{RawField, Response};
use super::handler::Produced;
use crate::error::{HandlerError, Repr};
use crate::mrtr::Resolver;
use crate::state::digest::{args_digest, question_digest, string_map_digest};
use crate::state::{Binding, StatePayload, open, seal};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::{Implementation, RequestMeta, ResultMeta};
use sterna_types::mrtr::{InputRequiredResult, kind_of};
use sterna_types::prompts::GetPromptResult;
use sterna_types::resources::ReadResourceResult;
use sterna_types::result::{CacheScope, ResultType};
use sterna_types::tools::CallToolResult;
use tokio_util::sync::CancellationToken;

/// What the state is bound to besides method and target.
pub(crate) enum Target<'a> {
    Tool(Option<&'a RawValue>),
    Prompt(&'a BTreeMap<String, String>),
    Resource,
}

pub(crate) struct Round<'s, 'a> {
    pub(crate) server: &'s Server,
    pub(crate) id: RequestId,
    pub(crate) method: &'static str,
    pub(crate) target: Arc<str>,
    pub(crate) binding_args: Target<'a>,
    pub(crate) meta: Arc<RequestMeta>,
    pub(crate) input_responses: RawField<'a>,
    pub(crate) request_state: Option<String>,
    pub(crate) single_use: bool,
    pub(crate) unsolicited: bool,
    pub(crate) env: RequestEnv,
}

/// Results that can complete an MRTR-capable request.
pub(crate) trait Finalize: Serialize + Send + Sized + 'static {
    fn finalize(&mut self, info: &Arc<Implementation>, cache: Option<(Duration, CacheScope)>);
    fn from_failure(e: HandlerError) -> Result<Self, ErrorObject>;
}

fn stamp(meta: &mut Option<ResultMeta>, info: &Arc<Implementation>) {
    meta.get_or_insert_with(ResultMeta::default).server_info = Some(info.clone());
}

impl Finalize for CallToolResult {
    fn finalize(&mut self, info: &Arc<Implementation>, _: Option<(Duration, CacheScope)>) {
        self.result_type = ResultType::Complete;
        stamp(&mut self.meta, info);
    }

    fn from_failure(e: HandlerError) -> Result<Self, ErrorObject> {
        match e.0 {
            Repr::Tool(m) => Ok(CallToolResult::error(m)),
            Repr::Internal(e) => Ok(CallToolResult::error(e.to_string())),
            Repr::Rpc(o) => Err(o),
            Repr::NeedsInput => Err(ErrorObject::internal("Internal error")),
        }
    }
}

impl Finalize for GetPromptResult {
    fn finalize(&mut self, info: &Arc<Implementation>, _: Option<(Duration, CacheScope)>) {
        self.result_type = ResultType::Complete;
        stamp(&mut self.meta, info);
    }

    fn from_failure(e: HandlerError) -> Result<Self, ErrorObject> {
        Err(rpc_error(e))
    }
}

impl Finalize for ReadResourceResult {
    fn finalize(&mut self, info: &Arc<Implementation>, cache: Option<(Duration, CacheScope)>) {
        self.result_type = ResultType::Complete;
        stamp(&mut self.meta, info);
        if let Some((ttl, scope)) = cache {
            self.ttl_ms.get_or_insert(ttl.as_millis() as u64);
            self.cache_scope.get_or_insert(scope);
        }
    }

    fn from_failure(e: HandlerError) -> Result<Self, ErrorObject> {
        Err(rpc_error(e))
    }
}

/// A handler failure as a JSON-RPC error (prompts, resources, completions).
pub(crate) fn rpc_error(e: HandlerError) -> ErrorObject {
    match e.0 {
        Repr::Rpc(o) => o,
        Repr::Tool(m) => ErrorObject::internal(m),
        Repr::Internal(e) => {
            tracing::error!(error = %e, "handler failed");
            ErrorObject::internal("Internal error")
        }
        Repr::NeedsInput => {
            tracing::error!("a handler asked a question where none can be asked");
            ErrorObject::internal("Internal error")
        }
    }
}

/// Runs a handler future, stopping it on cancellation (`None`) and catching panics
/// (`Some(Err(()))`).
pub(crate) async fn guarded<T>(
    fut: BoxFuture<'static, T>,
    cancel: &CancellationToken,
) -> Option<Result<T, ()>> {
    let fut = AssertUnwindSafe(fut).catch_unwind();
    tokio::select! {
        biased;
        _ = cancel.cancelled() => None,
        r = fut => Some(r.map_err(|panic| log_panic(panic.as_ref()))),
    }
}

/// Logs a caught panic with its message.
pub(crate) fn log_panic(panic: &(dyn std::any::Any + Send)) {
    let msg = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    tracing::error!(panic = %msg, "a panic while serving a request");
}

fn invalid(msg: impl Into<String>) -> ErrorObject {
    ErrorObject::invalid_params(msg)
}

/// The one message every refused state gets.
fn invalid_state() -> ErrorObject {
    invalid("Invalid or expired requestState")
}

/// Checks that `inputResponses` is a map of objects. Unknown keys are kept here and
/// ignored later (nothing asks for them).
fn input_responses(raw: &RawField<'_>) -> Result<Map<String, Value>, ErrorObject> {
    let RawField::Present(raw) = raw else {
        return Ok(Map::new());
    };
    let v: Value = serde_json::from_str(raw.get())
        .map_err(|e| invalid(format!("Invalid inputResponses: {e}")))?;
    let Value::Object(map) = v else {
        return Err(invalid(format!(
            "inputResponses must be an object mapping question keys to answers, found {}",
            kind_of(&v)
        )));
    };
    if let Some((k, v)) = map.iter().find(|(_, v)| !v.is_object()) {
        return Err(invalid(format!(
            "inputResponses[{k:?}] must be an object (an elicitation, sampling or roots result), found {}",
            kind_of(v)
        )));
    }
    Ok(map)
}

impl<'s, 'a> Round<'s, 'a> {
    fn digest(&self) -> Result<[u8; 32], ErrorObject> {
        Ok(match &self.binding_args {
            Target::Tool(None) | Target::Resource => args_digest(None),
            Target::Tool(Some(raw)) => {
                let v: Value = serde_json::from_str(raw.get())
                    .map_err(|e| invalid(format!("Invalid arguments: {e}")))?;
                args_digest(Some(&v))
            }
            Target::Prompt(map) => string_map_digest(map.iter()),
        })
    }

    /// Runs the round. `start` decodes the arguments and starts the handler.
    pub(crate) async fn run<T: Finalize>(
        self,
        start: impl FnOnce(Context) -> Result<BoxFuture<'static, Produced<T>>, ErrorObject>,
    ) -> Option<Response> {
        self.run_cached(None, start).await
    }

    pub(crate) fn with_cache(self, cache: Option<(Duration, CacheScope)>) -> CachedRound<'s, 'a> {
        CachedRound { round: self, cache }
    }

    async fn run_cached<T: Finalize>(
        self,
        cache: Option<(Duration, CacheScope)>,
        start: impl FnOnce(Context) -> Result<BoxFuture<'static, Produced<T>>, ErrorObject>,
    ) -> Option<Response> {
        let id = Some(self.id.clone());
        let body = self.execute(cache, start).await?;
        Some(Response {
            id,
            body,
            early: false,
        })
    }

    async fn execute<T: Finalize>(
        self,
        cache: Option<(Duration, CacheScope)>,
        start: impl FnOnce(Context) -> Result<BoxFuture<'static, Produced<T>>, ErrorObject>,
    ) -> Option<Result<Box<RawValue>, ErrorObject>> {
        let inner = &self.server.inner;
        let fresh = match input_responses(&self.input_responses) {
            Ok(f) => f,
            Err(e) => return Some(Err(e)),
        };
        let retry =
            self.request_state.is_some() || matches!(self.input_responses, RawField::Present(_));
        let mut digest = None;
        let opened = match &self.request_state {
            None => None,
            Some(token) => {
                let d = match self.digest() {
                    Ok(d) => d,
                    Err(e) => return Some(Err(e)),
                };
                digest = Some(d);
                let binding = self.binding(&d);
                let cfg = &inner.state;
                let opened = match open(
                    &cfg.keys,
                    &binding,
                    token,
                    cfg.max_len,
                    cfg.now(),
                    cfg.skew.as_secs(),
                ) {
                    Ok(o) => o,
                    Err(reason) => {
                        tracing::debug!(method = self.method, target = %self.target, reason = reason.reason(), "requestState refused");
                        return Some(Err(invalid_state()));
                    }
                };
                if self.single_use {
                    let store = cfg
                        .replay
                        .as_ref()
                        .expect("single-use tools get a replay store");
                    let expires = opened.payload.exp.saturating_add(cfg.skew.as_secs());
                    match store.consume(opened.jti, expires).await {
                        Ok(true) => {}
                        Ok(false) => {
                            tracing::debug!(target = %self.target, "requestState replayed");
                            return Some(Err(invalid_state()));
                        }
                        Err(e) => {
                            tracing::error!(error = %e, "replay store failed");
                            return Some(Err(ErrorObject::internal("Internal error")));
                        }
                    }
                }
                Some(opened)
            }
        };

        let resolver = Resolver::new(
            self.meta.clone(),
            fresh,
            opened.as_ref().map(|o| &o.payload),
            self.unsolicited,
        );
        let (round, prev_app) = match opened {
            Some(o) => (o.payload.round.saturating_add(1), o.payload.app),
            None => (1, None),
        };
        let ctx = Context::from_inner(CtxInner {
            id: self.id.clone(),
            method: self.method,
            target: self.target.clone(),
            meta: self.meta.clone(),
            principal: self.env.principal.clone(),
            notifier: self.env.notifier.clone(),
            cancel: self.env.cancel.clone(),
            round,
            prev_app,
            next_app: Mutex::new(None),
            resolver: Mutex::new(Some(resolver)),
            changes: inner.changes.clone(),
        });
        // `start` decodes the arguments and, for declarative handlers, runs the user's
        // `ask` closures and validates answers: a panic there costs this request only.
        let fut = match std::panic::catch_unwind(AssertUnwindSafe(|| start(ctx.clone()))) {
            Ok(Ok(f)) => f,
            Ok(Err(e)) => return Some(Err(e)),
            Err(panic) => {
                log_panic(panic.as_ref());
                return Some(Err(ErrorObject::internal("Internal error")));
            }
        };
        let produced = match guarded(fut, &self.env.cancel).await? {
            Ok(p) => p,
            Err(()) => return Some(Err(ErrorObject::internal("Internal error"))),
        };
        let cache = if retry {
            // Results of requests that carried answers or state must not be cached.
            Some((Duration::ZERO, CacheScope::Private))
        } else {
            Some(cache.unwrap_or(inner.cache))
        };
        Some(match produced {
            Produced::Complete(mut t) => {
                t.finalize(&inner.info, cache);
                Ok(to_raw_value(&t).expect("results serialize"))
            }
            Produced::Failed(e) if e.is_needs_input() => self.input_required(&ctx, None, digest),
            Produced::Failed(e) => T::from_failure(e).map(|mut t| {
                t.finalize(&inner.info, cache);
                to_raw_value(&t).expect("results serialize")
            }),
            Produced::InputRequired(raw) => self.input_required(&ctx, Some(raw), digest),
        })
    }

    fn binding<'b>(&'b self, digest: &'b [u8; 32]) -> Binding<'b> {
        Binding {
            audience: &self.server.inner.info.name,
            principal: self.env.principal.id().unwrap_or(""),
            method: self.method,
            target: &self.target,
            args_digest: digest,
        }
    }

    /// Builds the `input_required` answer: every open question, and a sealed state with
    /// the answers so far.
    fn input_required(
        &self,
        ctx: &Context,
        raw: Option<InputRequiredResult>,
        digest: Option<[u8; 32]>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let inner = &self.server.inner;
        let Some(mut resolver) = ctx.take_resolver() else {
            return Err(ErrorObject::internal("Internal error"));
        };
        let mut requests = BTreeMap::new();
        let mut asked = Vec::new();
        let mut app = ctx.take_next_state();
        let low_level = raw.is_some();
        if let Some(raw) = raw {
            for (key, request) in raw.input_requests.unwrap_or_default() {
                if resolver.gate_raw(&request) {
                    let json = serde_json::to_vec(&request).expect("questions serialize");
                    asked.push((key.clone(), question_digest(&json)));
                    requests.insert(key, request);
                }
            }
            if let Some(s) = raw.request_state {
                app = Some(s.into_bytes());
            }
        }
        let finished = resolver.finish();
        if let Some(e) = finished.fatal {
            return Err(e);
        }
        for (key, request, d) in finished.pending {
            if requests.contains_key(&key) {
                tracing::error!(key, "a handler asked two questions under one key");
                return Err(ErrorObject::internal("Internal error"));
            }
            asked.push((key.clone(), d));
            requests.insert(key, request);
        }
        if requests.is_empty() && !low_level {
            tracing::error!("a handler returned NeedsInput without asking anything");
            return Err(ErrorObject::internal("Internal error"));
        }
        let app = app.or_else(|| ctx.prev_state().map(<[u8]>::to_vec));
        let cfg = &inner.state;
        let now = cfg.now();
        let payload = StatePayload {
            iat: now,
            exp: now.saturating_add(cfg.ttl.as_secs()),
            round: ctx.round(),
            asked,
            answers: finished.answers,
            app,
        };
        let d = match digest {
            Some(d) => d,
            None => self.digest()?,
        };
        let token = seal(&cfg.keys, &self.binding(&d), &payload);
        if token.len() > cfg.max_len {
            // Never emit a state this server would itself refuse on the retry.
            tracing::error!(
                method = self.method,
                target = %self.target,
                len = token.len(),
                limit = cfg.max_len,
                "the answers collected so far do not fit in requestState; raise max_state_len or ask less"
            );
            return Err(ErrorObject::internal(format!(
                "The answers collected so far do not fit in requestState ({} bytes, limit {})",
                token.len(),
                cfg.max_len
            )));
        }
        let result = InputRequiredResult {
            result_type: ResultType::InputRequired,
            input_requests: (!requests.is_empty()).then_some(requests),
            request_state: Some(token),
            meta: Some(ResultMeta {
                server_info: Some(inner.info.clone()),
                ..ResultMeta::default()
            }),
        };
        Ok(to_raw_value(&result).expect("results serialize"))
    }
}

/// A round with a resource's own caching hint.
pub(crate) struct CachedRound<'s, 'a> {
    round: Round<'s, 'a>,
    cache: Option<(Duration, CacheScope)>,
}

impl CachedRound<'_, '_> {
    pub(crate) async fn run<T: Finalize>(
        self,
        start: impl FnOnce(Context) -> Result<BoxFuture<'static, Produced<T>>, ErrorObject>,
    ) -> Option<Response> {
        self.round.run_cached(self.cache, start).await
    }
}
