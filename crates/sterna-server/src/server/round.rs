//! One round of an MRTR-capable request (`tools/call`, `prompts/get`, `resources/read`):
//! open the incoming state → resolve answers → run the handler → complete, or seal the
//! next state (or hand it back, for an era that holds its own) and ask. The round ends in
//! a typed [`Outcome`]; the era renders it.

use super::context::{Context, Inner as CtxInner, RequestEnv};
use super::core::Server;
use super::finalize::Finalize;
use super::flow::{Answers, FlowParams, Held, StateIn, input_responses, objects_only};
use super::guard::{guarded, started};
use super::handler::Produced;
use super::outcome::{Asked, Completed, Continuation, Outcome};
use crate::mrtr::{Inquiry, Resolver};
use crate::state::digest::{args_digest, string_map_digest};
use crate::state::{Binding, FlowState, Refused, SealError, StoreError};
use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::RequestMeta;
use sterna_types::mrtr::InputRequiredResult;
use sterna_types::result::CacheScope;

/// The arguments a state is bound to, besides method and target.
pub(crate) enum BindArgs<'a> {
    Tool(Option<&'a RawValue>),
    Prompt(&'a BTreeMap<String, String>),
    Resource,
}

/// What a request is about: the method, its target, and how its flow is treated.
pub(crate) struct Subject<'a> {
    pub(crate) method: &'static str,
    pub(crate) target: Arc<str>,
    pub(crate) args: BindArgs<'a>,
    pub(crate) single_use: bool,
    pub(crate) unsolicited: bool,
    pub(crate) cache: Option<(Duration, CacheScope)>,
}

impl<'a> Subject<'a> {
    pub(crate) fn new(method: &'static str, target: Arc<str>, args: BindArgs<'a>) -> Self {
        Self {
            method,
            target,
            args,
            single_use: false,
            unsolicited: false,
            cache: None,
        }
    }
}

/// How a round ended: with an outcome, or — resolving only declared questions — with
/// every answer there.
pub(crate) enum Resolved {
    Asked(Outcome),
    Answered(FlowState),
}

/// What a handler's result leaves to do: nothing (the outcome), or ask.
enum Settled {
    Done(Outcome),
    Ask(Option<InputRequiredResult>),
}

/// One round of a request, from its incoming state to its outcome.
pub(crate) struct Round<'s, 'a> {
    server: &'s Server,
    id: RequestId,
    meta: Arc<RequestMeta>,
    env: Arc<RequestEnv>,
    subject: Subject<'a>,
    flow: FlowParams<'a>,
    digest: Option<[u8; 32]>,
    phase: super::context::Phase,
    /// The flow's id: from the incoming state, or new when the first state is sealed.
    flow_id: Option<[u8; 16]>,
    /// Whether the flow came back with answers or a state (set when opened).
    retry: bool,
    /// This round's number (1 for a first request; set when it runs).
    number: u32,
}

/// A new flow's id: 128 random bits.
fn new_flow_id() -> [u8; 16] {
    let mut id = [0u8; 16];
    crate::state::fill_unique(&mut id);
    id
}

fn invalid(msg: impl Into<String>) -> ErrorObject {
    ErrorObject::invalid_params(msg)
}

/// The one message every refused state gets.
fn invalid_state() -> ErrorObject {
    invalid("Invalid or expired requestState")
}

/// A store the state depends on cannot be reached: `-32603`, because the request and its
/// state are fine (a `-32602` would tell the client to start the flow over) and the same
/// request succeeds once the store is back. Nothing is accepted meanwhile.
fn store_unavailable(what: &str) -> ErrorObject {
    ErrorObject::internal(format!(
        "Temporarily unavailable: the {what} cannot be reached; retry the same request later"
    ))
}

impl<'s, 'a> Round<'s, 'a> {
    pub(crate) fn new(
        server: &'s Server,
        id: RequestId,
        meta: Arc<RequestMeta>,
        env: Arc<RequestEnv>,
        subject: Subject<'a>,
        flow: FlowParams<'a>,
    ) -> Self {
        Self {
            server,
            id,
            meta,
            env,
            subject,
            flow,
            digest: None,
            phase: super::context::Phase::Request,
            flow_id: None,
            retry: false,
            number: 1,
        }
    }

    /// Runs the round. `None` when it was cancelled (nothing may be sent then).
    /// `start` decodes the arguments and starts the handler with its context.
    pub(crate) fn run<T, S>(self, start: S) -> impl Future<Output = Option<Outcome>>
    where
        T: Finalize,
        S: FnOnce(Context) -> Result<BoxFuture<'static, Produced<T>>, ErrorObject>,
    {
        // Mapped, not awaited in an async block: that would keep the round's future twice.
        self.go(start).map(|resolved| match resolved? {
            Resolved::Asked(outcome) => Some(outcome),
            Resolved::Answered(_) => {
                tracing::error!("a round answered its questions outside questions-only mode");
                Some(Outcome::Failed(
                    ErrorObject::internal("Internal error").into(),
                ))
            }
        })
    }

    /// Resolves only the declared questions of a declarative handler (its body does not
    /// run): [`Resolved::Answered`] with the answers once every one is there, else the
    /// questions as usual. `None` when it was cancelled.
    pub(crate) fn resolve_declared<T, S>(
        mut self,
        start: S,
    ) -> impl Future<Output = Option<Resolved>>
    where
        T: Finalize,
        S: FnOnce(Context) -> Result<BoxFuture<'static, Produced<T>>, ErrorObject>,
    {
        self.phase = super::context::Phase::QuestionsOnly;
        self.go(start)
    }

    /// Open → resolve and run → complete or ask. An async block rather than an `async fn`
    /// (which would keep the round twice in its future), awaiting only where it must: a
    /// stored state's lookup, the handler, the sealing of the next state.
    #[allow(
        clippy::manual_async_fn,
        reason = "an `async fn` keeps each argument twice in its future (once as passed, once moved)"
    )]
    fn go<T, S>(mut self, start: S) -> impl Future<Output = Option<Resolved>>
    where
        T: Finalize,
        S: FnOnce(Context) -> Result<BoxFuture<'static, Produced<T>>, ErrorObject>,
    {
        async move {
            let failed = |e: ErrorObject| Some(Resolved::Asked(Outcome::Failed(e.into())));
            let ctx = match self.opened().await {
                Ok(ctx) => ctx,
                Err(e) => return failed(e),
            };
            let fut = match started(|| start(ctx.clone())) {
                Ok(f) => f,
                Err(e) => return failed(e),
            };
            let produced = match guarded(fut, &self.env.cancel).await? {
                Ok(p) => p,
                Err(()) => return failed(ErrorObject::internal("Internal error")),
            };
            if ctx.answered() {
                return Some(match self.answers(&ctx) {
                    Ok(flow) => Resolved::Answered(flow),
                    Err(e) => Resolved::Asked(Outcome::Failed(e.into())),
                });
            }
            let raw = match self.settle(produced) {
                Settled::Done(outcome) => return Some(Resolved::Asked(outcome)),
                Settled::Ask(raw) => raw,
            };
            let (requests, next) = match self.pending(&ctx, raw) {
                Ok(asked) => asked,
                Err(e) => return failed(e),
            };
            let next = if self.flow.hold {
                Continuation::Held(Box::new(next))
            } else {
                match self.seal(next).await {
                    Ok(token) => Continuation::Sealed(token),
                    Err(e) => return failed(e),
                }
            };
            Some(Resolved::Asked(Outcome::InputRequired(Asked {
                requests,
                next,
            })))
        }
    }

    /// Open: the handler's context, with this round's answers and the verified state of
    /// the previous round (its own future, so that nothing of it stays in the round's
    /// while the handler runs).
    async fn opened(&mut self) -> Result<Context, ErrorObject> {
        self.retry = self.flow.is_retry();
        let mut fresh = input_responses(&self.flow.input_responses)?;
        let prev = match self.flow.state.take() {
            None => None,
            Some(StateIn::Held(held)) => {
                let Held { flow, answers } = *held;
                fresh.extend(objects_only(answers)?);
                self.flow_id = Some(flow.flow_id);
                Some(flow)
            }
            Some(StateIn::Sealed(token)) => Some(self.open_sealed(&token).await?),
        };
        Ok(self.context(fresh, prev))
    }

    /// The state of the previous round, from the `requestState` the client echoed.
    async fn open_sealed(&mut self, token: &str) -> Result<FlowState, ErrorObject> {
        let digest = self.digest()?;
        let cfg = self.server.state();
        let binding = self.binding(&digest);
        let owner = (self.subject.single_use).then(|| super::QuotaKey::of(&self.env.principal));
        match cfg.open_flow(&binding, token, owner.as_ref()).await {
            Ok(flow) => {
                self.flow_id = Some(flow.flow_id);
                self.env.span.flow(&flow.flow_id);
                Ok(flow)
            }
            Err(Refused::Store(e)) => {
                tracing::error!(error = %e, "replay store failed; refusing the state");
                Err(e.to_client())
            }
            Err(Refused::StateStore(e)) => {
                tracing::error!(error = %e, "state store failed; refusing the state");
                Err(store_unavailable("state store"))
            }
            Err(reason) => {
                tracing::debug!(method = self.subject.method, target = %self.subject.target, %reason, "requestState refused");
                Err(invalid_state())
            }
        }
    }

    /// The handler's context: a resolver holding the answers so far, and what the
    /// previous round left.
    fn context(&mut self, fresh: Answers, prev: Option<FlowState>) -> Context {
        let resolver = Resolver::new(
            self.meta.clone(),
            fresh,
            prev.as_ref(),
            self.subject.unsolicited,
        );
        let mut inner = CtxInner::request(
            self.server.changes(),
            self.id.clone(),
            self.subject.method,
            self.subject.target.clone(),
            self.meta.clone(),
            &self.env,
        );
        inner.round = prev.as_ref().map_or(1, |p| p.round.saturating_add(1));
        self.number = inner.round;
        self.env.span.round(inner.round);
        inner.prev_app = prev.and_then(|p| p.app);
        inner.phase = self.phase;
        *inner.resolver.get_mut().unwrap_or_else(|p| p.into_inner()) = Some(resolver);
        Context::from_inner(inner)
    }

    /// Every declared question is answered (questions-only mode): the flow's answers,
    /// for whoever takes over (never sealed into a `requestState` again).
    fn answers(&self, ctx: &Context) -> Result<FlowState, ErrorObject> {
        let resolver = ctx
            .take_resolver()
            .ok_or_else(|| ErrorObject::internal("Internal error"))?;
        let finished = resolver.finish();
        if let Some(e) = finished.fatal {
            return Err(e);
        }
        Ok(FlowState {
            flow_id: self.flow_id.unwrap_or_else(new_flow_id),
            round: 0,
            asked: Vec::new(),
            answers: finished.answers,
            app: ctx
                .take_next_state()
                .or_else(|| ctx.prev_state().map(<[u8]>::to_vec)),
        })
    }

    /// What the handler produced: the outcome when complete or failed, else the round
    /// asks (with the handler's own `input_required`, if it returned one).
    fn settle<T: Finalize>(&self, produced: Produced<T>) -> Settled {
        let cache = if self.retry {
            // Results of requests that carried answers or state must not be cached.
            Some((Duration::ZERO, CacheScope::Private))
        } else {
            Some(self.subject.cache.unwrap_or(self.server.cache()))
        };
        let complete = |t: T| {
            Outcome::Complete(Completed {
                payload: t.into_payload(),
                cache,
            })
        };
        let ended = || {
            let counts = self.server.metrics().of(self.subject.method);
            counts.rounds(self.number);
        };
        match produced {
            Produced::Complete(t) => {
                ended();
                Settled::Done(complete(t))
            }
            Produced::Failed(e) if e.is_needs_input() => Settled::Ask(None),
            Produced::Failed(e) => {
                ended();
                let outcome =
                    T::from_failure(e).map_or_else(|e| Outcome::Failed(e.into()), complete);
                Settled::Done(outcome)
            }
            Produced::InputRequired(raw) => Settled::Ask(Some(raw)),
        }
    }

    fn digest(&mut self) -> Result<[u8; 32], ErrorObject> {
        if let Some(d) = self.digest {
            return Ok(d);
        }
        let d = match &self.subject.args {
            BindArgs::Tool(raw) => args_digest(*raw),
            BindArgs::Resource => args_digest(None),
            BindArgs::Prompt(map) => Ok(string_map_digest(map.iter())),
        }
        .map_err(|e| invalid(format!("Invalid arguments: {e}")))?;
        self.digest = Some(d);
        Ok(d)
    }

    fn binding<'b>(&'b self, digest: &'b [u8; 32]) -> Binding<'b> {
        Binding {
            audience: &self.server.info().name,
            principal: self.env.principal.id().unwrap_or(""),
            method: self.subject.method,
            target: &self.subject.target,
            args_digest: digest,
        }
    }

    /// Every open question, and the state with the answers so far (sealed by
    /// [`Round::seal`], or handed back to an era that holds it).
    fn pending(
        &mut self,
        ctx: &Context,
        raw: Option<InputRequiredResult>,
    ) -> Result<(BTreeMap<String, Inquiry>, FlowState), ErrorObject> {
        let low_level = raw.is_some();
        let flow_id = *self.flow_id.get_or_insert_with(new_flow_id);
        let (requests, next) = questions(ctx, raw, flow_id)?;
        if requests.is_empty() && !low_level {
            tracing::error!("a handler returned NeedsInput without asking anything");
            return Err(ErrorObject::internal("Internal error"));
        }
        self.env.span.flow(&flow_id);
        Ok((requests, next))
    }

    /// The next `requestState`: the flow sealed, bound to this request.
    fn seal(&mut self, next: FlowState) -> impl Future<Output = Result<String, ErrorObject>> {
        let digest = self.digest();
        async move {
            let digest = digest?;
            let owner = super::QuotaKey::of(&self.env.principal);
            let sealed = self
                .server
                .state()
                .seal_flow(&self.binding(&digest), &owner, next)
                .await;
            let token = sealed.map_err(|e| self.seal_failed(e))?;
            self.server.metrics().state_issued(token.len());
            Ok(token)
        }
    }

    fn seal_failed(&self, e: SealError) -> ErrorObject {
        match e {
            SealError::TooLarge { len, limit } => {
                tracing::error!(
                    method = self.subject.method,
                    target = %self.subject.target,
                    len,
                    limit,
                    "the answers collected so far do not fit in requestState; raise max_state_len, store states, or ask less"
                );
                ErrorObject::internal(format!(
                    "The answers collected so far do not fit in requestState ({len} bytes, limit {limit})"
                ))
            }
            SealError::Store(StoreError::QuotaExceeded { limit }) => {
                let msg = format!(
                    "Too many stored states: this client already holds {limit} unexpired ones, its share of the server (the state store's per_principal limit); retry once one has expired"
                );
                let code = sterna_types::error::ErrorCode::INTERNAL_ERROR;
                super::quota::limit_error(code, msg, "per_principal", limit)
            }
            SealError::Store(e) => {
                tracing::error!(error = %e, "state store failed; the next state was not issued");
                store_unavailable("state store")
            }
        }
    }
}

/// Every question of this round (the handler's own, gated, and those the resolver
/// collected) and the flow state to seal for the next round.
pub(crate) fn questions(
    ctx: &Context,
    raw: Option<InputRequiredResult>,
    flow_id: [u8; 16],
) -> Result<(BTreeMap<String, Inquiry>, FlowState), ErrorObject> {
    let Some(mut resolver) = ctx.take_resolver() else {
        return Err(ErrorObject::internal("Internal error"));
    };
    let mut requests = BTreeMap::new();
    let mut asked = Vec::new();
    let mut app = ctx.take_next_state();
    if let Some(raw) = raw {
        for (key, request) in raw.input_requests.unwrap_or_default() {
            if resolver.gate_raw(&request) {
                let question = Inquiry::Built(Box::new(request));
                asked.push((key.clone(), question.digest()));
                requests.insert(key, question);
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
    let next = FlowState {
        round: ctx.round(),
        asked,
        answers: finished.answers,
        app: app.or_else(|| ctx.prev_state().map(<[u8]>::to_vec)),
        flow_id,
    };
    Ok((requests, next))
}
