//! The per-request context handed to handlers.

use super::notifier::Notifier;
use super::principal::Principal;
use crate::HandlerError;
use crate::mrtr::{Elicitation, NeedsInput, Question, Resolver, form, roots, sampling, url};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt;
use std::sync::{Arc, Mutex};
use sterna_types::capabilities::ClientCapabilities;
use sterna_types::jsonrpc::{NotificationRef, RequestId};
use sterna_types::meta::{Implementation, LoggingLevel, RequestMeta};
use sterna_types::mrtr::InputResponse;
use sterna_types::notifications::{LoggingMessageNotificationParams, ProgressNotificationParams};
use sterna_types::roots::Root;
use sterna_types::sampling::{CreateMessageRequestParams, CreateMessageResult};
use tokio_util::sync::CancellationToken;

/// What a transport knows about a request beyond its body.
#[derive(Debug, Clone, Default)]
pub struct RequestEnv {
    pub(crate) principal: Principal,
    pub(crate) notifier: Option<Notifier>,
    pub(crate) cancel: CancellationToken,
    pub(crate) cut: Option<CancellationToken>,
    /// What the era of the request does beyond the core (set by its wing).
    pub(crate) era: Option<Arc<dyn EraSide>>,
    /// The request's span (disabled when nobody listens).
    pub(crate) span: crate::trace::RequestSpan,
}

impl RequestEnv {
    /// An anonymous request without a notification stream, never cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// An anonymous request cancelled by `cancel` (built directly: a default token
    /// would be allocated only to be replaced).
    #[cfg(any(feature = "http", feature = "tasks"))]
    pub(crate) fn cancelled_by(cancel: CancellationToken) -> Self {
        Self {
            principal: Principal::default(),
            notifier: None,
            cancel,
            cut: None,
            era: None,
            span: Default::default(),
        }
    }

    /// Sets the principal.
    pub fn principal(mut self, principal: Principal) -> Self {
        self.principal = principal;
        self
    }

    /// Sets where notifications go.
    pub fn notifier(mut self, notifier: Notifier) -> Self {
        self.notifier = Some(notifier);
        self
    }

    #[cfg(feature = "legacy")]
    /// Sets what the request's era does beyond the core.
    pub(crate) fn era(mut self, side: Arc<dyn EraSide>) -> Self {
        self.era = Some(side);
        self
    }

    /// Sets the token that cancels the request (a `notifications/cancelled`, a closed
    /// connection).
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }

    #[cfg(all(feature = "http", feature = "legacy"))]
    /// Sets what closes the connection carrying the request's resumable stream (legacy
    /// HTTP only; see [`Context::close_stream`]).
    pub(crate) fn connection_cut(mut self, cut: CancellationToken) -> Self {
        self.cut = Some(cut);
        self
    }
}

/// Everything a handler may want to know about its request, and the way to ask the client.
///
/// Cheap to clone. See [`ask`](Self::ask) for the re-run model of MRTR.
#[derive(Clone)]
pub struct Context {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) id: RequestId,
    pub(crate) method: &'static str,
    pub(crate) target: Arc<str>,
    pub(crate) meta: Arc<RequestMeta>,
    /// What the transport knows of the request: shared by every round of it, not copied
    /// into each (a principal, a notifier, two tokens).
    pub(crate) env: Arc<RequestEnv>,
    pub(crate) round: u32,
    pub(crate) prev_app: Option<Vec<u8>>,
    pub(crate) next_app: Mutex<Option<Vec<u8>>>,
    pub(crate) resolver: Mutex<Option<Resolver>>,
    pub(crate) changes: super::changes::Changes,
    pub(crate) phase: Phase,
    /// Set by a declarative handler whose questions are all answered in
    /// [`Phase::QuestionsOnly`]: whoever asked them takes over.
    pub(crate) answered: std::sync::atomic::AtomicBool,
}

/// What a handler run is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// A request (`tools/call`, `prompts/get`, `resources/read` …): the whole handler.
    Request,
    /// Only a declarative handler's declared questions are resolved (by MRTR); its body
    /// does not run here (a wing that took the call over runs it later).
    QuestionsOnly,
}

impl Inner {
    /// The context of a request, before any round-specific part (round 1, no state, no
    /// resolver: questions are refused).
    pub(crate) fn request(
        changes: &super::changes::Changes,
        id: RequestId,
        method: &'static str,
        target: Arc<str>,
        meta: Arc<RequestMeta>,
        env: &Arc<RequestEnv>,
    ) -> Self {
        Self {
            id,
            method,
            target,
            meta,
            env: env.clone(),
            round: 1,
            prev_app: None,
            next_app: Mutex::new(None),
            resolver: Mutex::new(None),
            changes: changes.clone(),
            phase: Phase::Request,
            answered: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("id", &self.inner.id)
            .field("method", &self.inner.method)
            .field("target", &self.inner.target)
            .field("round", &self.inner.round)
            .finish()
    }
}

impl Context {
    pub(crate) fn from_inner(inner: Inner) -> Self {
        Self {
            inner: Arc::new(inner),
        }
    }

    pub(crate) fn take_resolver(&self) -> Option<Resolver> {
        lock(&self.inner.resolver).take()
    }

    pub(crate) fn take_next_state(&self) -> Option<Vec<u8>> {
        lock(&self.inner.next_app).take()
    }

    pub(crate) fn prev_state(&self) -> Option<&[u8]> {
        self.inner.prev_app.as_deref()
    }

    pub(crate) fn phase(&self) -> Phase {
        self.inner.phase
    }

    /// Every declared question is answered (see [`Phase::QuestionsOnly`]).
    pub(crate) fn mark_answered(&self) {
        self.inner
            .answered
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn answered(&self) -> bool {
        self.inner
            .answered
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    pub(crate) fn with_resolver<T>(&self, f: impl FnOnce(&mut Resolver) -> T) -> Option<T> {
        lock(&self.inner.resolver).as_mut().map(f)
    }

    /// The JSON-RPC id of this request (a retry has a new one).
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The method (`tools/call`, `prompts/get`, `resources/read`, …).
    pub fn method(&self) -> &str {
        self.inner.method
    }

    /// The tool or prompt name, or the resource URI.
    pub fn target(&self) -> &str {
        &self.inner.target
    }

    /// The protocol revision of this request.
    pub fn protocol_version(&self) -> &str {
        &self.inner.meta.protocol_version
    }

    /// The capabilities the client declared **on this request**.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.meta.client_capabilities
    }

    /// The client's self-description (informational only; never trust it).
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.meta.client_info.as_ref()
    }

    /// The whole request `_meta`.
    pub fn meta(&self) -> &RequestMeta {
        &self.inner.meta
    }

    /// The authenticated caller.
    pub fn principal(&self) -> &Principal {
        &self.inner.env.principal
    }

    /// Announces list and resource changes to `subscriptions/listen` streams.
    pub fn changes(&self) -> &super::changes::Changes {
        &self.inner.changes
    }

    /// Which round of an MRTR flow this is: 1 for the first call, 2 for the first retry …
    pub fn round(&self) -> u32 {
        self.inner.round
    }

    /// The token cancelled when the client cancels or goes away. The SDK already stops
    /// the handler's future then; use it to stop work you spawned.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.env.cancel
    }

    /// Closes the connection that carries this request's stream, without ending the
    /// request: 2025-11-25 polling (SEP-1699). The client got the reconnection delay
    /// (`retry`) in the stream's first event; it reconnects with `Last-Event-ID` and
    /// receives what was sent meanwhile, the response included. Useful for long-running
    /// work behind proxies that drop idle connections.
    ///
    /// Only a 2025-11-25 session over Streamable HTTP has such a resumable stream; for
    /// any other request (2026-07-28, where closing the stream cancels the request, or
    /// stdio) this does nothing and returns `false`.
    pub fn close_stream(&self) -> bool {
        match &self.inner.env.cut {
            Some(cut) => {
                cut.cancel();
                true
            }
            None => false,
        }
    }

    /// Asks the client: one question, an optional one, or a tuple of questions asked
    /// together.
    ///
    /// # The re-run model
    ///
    /// In 2026-07-28 a server never waits for an answer. When an answer is missing,
    /// `ask` returns [`NeedsInput`], which `?` passes up: the request ends with an
    /// `input_required` result holding every question still open, and a sealed
    /// `requestState`. The client answers and **retries**; your handler then runs again
    /// from the top, on any replica, and this same call returns the answer (answers of
    /// earlier rounds ride in the sealed state).
    ///
    /// So: everything before the last `ask` runs once per round. **Put side effects
    /// after the last question**, or use the declarative [`Tool::ask`](crate::server::Tool::ask),
    /// which only runs its body once every answer is there. Ask the same questions in the
    /// same order on every run: an answer is pinned to the exact question it answers, and
    /// a question that changed is asked again.
    pub async fn ask<Q: Question>(&self, question: Q) -> Result<Q::Answer, NeedsInput> {
        match self.with_resolver(|r| question.resolve(r)) {
            Some(answer) => answer,
            None => {
                tracing::error!(
                    method = self.inner.method,
                    "ask() is only possible in tools/call, prompts/get and resources/read"
                );
                Err(NeedsInput::new())
            }
        }
    }

    /// Asks the user to fill in the form of `T`; see [`form`](crate::mrtr::form()).
    pub async fn elicit<T>(&self, message: impl Into<String>) -> Result<Elicitation<T>, NeedsInput>
    where
        T: DeserializeOwned + JsonSchema + Send + 'static,
    {
        self.ask(form::<T>(message)).await
    }

    /// Asks the user to visit `url`; see [`url`](crate::mrtr::url()).
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        target: impl Into<String>,
    ) -> Result<Elicitation<()>, NeedsInput> {
        self.ask(url(message, target)).await
    }

    /// Asks the client's LLM; see [`sampling`](crate::mrtr::sampling()).
    pub async fn sample(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, NeedsInput> {
        self.ask(sampling(params)).await
    }

    /// Asks for the client's roots; see [`roots`](crate::mrtr::roots()).
    pub async fn roots(&self) -> Result<Vec<Root>, NeedsInput> {
        self.ask(roots()).await
    }

    /// Tells the client that the out-of-band step of the URL question under `key` is done
    /// (the user finished in the browser; your server learned it on its own).
    ///
    /// On a 2025-11-25 session this sends `notifications/elicitation/complete` with the
    /// `elicitationId` sterna gave that question, so the client can retry or close its
    /// prompt. In 2026-07-28 there is no such message (the client learns the outcome by
    /// retrying): this does nothing.
    pub async fn complete_url_elicitation(&self, key: &str) {
        let (Some(era), Some(n)) = (&self.inner.env.era, &self.inner.env.notifier) else {
            return;
        };
        if let Some(note) = era.url_elicitation_complete(key) {
            n.send(note).await;
        }
    }

    /// Your own state from the previous round (set with [`set_state`](Self::set_state)),
    /// already verified and decrypted. `None` on the first round.
    pub fn state<T: DeserializeOwned>(&self) -> Result<Option<T>, HandlerError> {
        match &self.inner.prev_app {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(bytes)
                .map(Some)
                .map_err(HandlerError::from),
        }
    }

    /// The raw answer under `key` in this round's `inputResponses`, for handlers that
    /// build their own `InputRequiredResult`. (The question APIs validate and decode
    /// answers for you; prefer them.)
    pub fn input_response(&self, key: &str) -> Option<InputResponse> {
        self.with_resolver(|r| r.fresh_answer(key)).flatten()
    }

    /// Your state from the previous round as a string: what a low-level handler put in
    /// the `requestState` of the [`InputRequiredResult`](sterna_types::mrtr::InputRequiredResult)
    /// it returned (the SDK sealed it; this is the original).
    pub fn raw_state(&self) -> Option<&str> {
        self.inner
            .prev_app
            .as_deref()
            .and_then(|b| std::str::from_utf8(b).ok())
    }

    /// Keeps a small value for the next round. It travels sealed inside `requestState`
    /// (the client cannot read or change it) and comes back through
    /// [`state`](Self::state). Ignored when the request completes.
    pub fn set_state<T: Serialize>(&self, state: &T) {
        match serde_json::to_vec(state) {
            Ok(bytes) => *lock(&self.inner.next_app) = Some(bytes),
            Err(e) => tracing::error!("set_state: the state does not serialize: {e}"),
        }
    }

    /// Sends `notifications/progress`, if the client asked for progress (a
    /// `progressToken` in `_meta`). Otherwise does nothing.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let (Some(token), Some(n)) = (&self.inner.meta.progress_token, &self.inner.env.notifier)
        else {
            return;
        };
        let params = ProgressNotificationParams {
            progress_token: token.clone(),
            progress,
            total,
            message: message.map(str::to_owned),
            meta: None,
        };
        n.send(encode("notifications/progress", &params)).await;
    }

    /// Sends `notifications/message` when the client asked for log messages of at least
    /// this level (`io.modelcontextprotocol/logLevel` in `_meta`). Otherwise does nothing.
    pub async fn log(&self, level: LoggingLevel, data: impl Serialize) {
        let (Some(min), Some(n)) = (self.inner.meta.log_level, &self.inner.env.notifier) else {
            return;
        };
        if level < min {
            return;
        }
        let Ok(data) = serde_json::to_value(data) else {
            return;
        };
        let params = LoggingMessageNotificationParams {
            level,
            logger: None,
            data,
            meta: None,
        };
        n.send(encode("notifications/message", &params)).await;
    }
}

fn encode<P: Serialize>(method: &str, params: &P) -> Vec<u8> {
    serde_json::to_vec(&NotificationRef { method, params }).expect("notifications serialize")
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the era a request came in on does beyond the core, on a handler's behalf.
pub(crate) trait EraSide: Send + Sync + std::fmt::Debug {
    /// The notification telling the client that the out-of-band step of the URL
    /// question under `key` is done (`None`: this era has none, or no such question).
    fn url_elicitation_complete(&self, key: &str) -> Option<Vec<u8>>;
}
