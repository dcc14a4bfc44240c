//! POSTs of 2025-11-25 clients: `initialize` (a new session), requests of a session (run
//! on their own task, answered as JSON or as a resumable SSE stream), notifications and
//! the answers to pushed questions (202).

use super::driven::{Driver, driven};
use super::live::{Busy, Live};
use super::log::{Reading, follow};
use super::mirror::Mirror;
use super::running::{self, Save, Task};
use super::{Found, LegacyHttp, SESSION_ID, refused};
use crate::http::body::McpBody;
use crate::http::caller::Caller;
use crate::http::headers::PROTOCOL_VERSION;
use crate::http::respond::{json, plain, rpc_error, sse_response};
use crate::legacy::{Legacy, LegacyRequest, LegacySession, SessionRecord};
use crate::server::inbound::{Inbound, OwnedRequest};
use crate::server::quota::limit_error;
use crate::server::{Notifier, Principal, QuotaKey, RequestEnv, Server};
use bytes::Bytes;
use futures_util::future::{BoxFuture, Either, ready};
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use serde_json::value::RawValue;
use std::future::Future;
use std::sync::Arc;
use std::task::Poll;
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::RequestId;
use sterna_types::legacy::InitializeParams;
use sterna_types::notifications::CancelledNotificationParams;
use tokio_util::sync::CancellationToken;

fn bad_request(id: Option<&RequestId>, message: &str) -> Response<McpBody> {
    let e = ErrorObject::new(ErrorCode::INVALID_REQUEST, message);
    rpc_error(StatusCode::BAD_REQUEST, id, &e)
}

impl LegacyHttp {
    /// A request POSTed without the 2026-07-28 claim, as the endpoint read it.
    #[allow(
        clippy::manual_async_fn,
        reason = "an `async fn` keeps each argument twice in its future (once as passed, once moved)"
    )]
    pub(crate) fn post_request<'a>(
        &'a self,
        server: &'a Server,
        headers: &'a HeaderMap,
        caller: Caller,
        message: Inbound<'a>,
    ) -> impl Future<Output = Response<McpBody>> + Send + 'a {
        // Owned before the future is made: it keeps the request, not the message read.
        let request = message.into_owned_request();
        async move {
            let found = match self.found(headers, &caller).await {
                Ok(f) => f,
                Err(answer) => return answer,
            };
            let Some(request) = request else {
                return bad_request(None, "Bad Request");
            };
            self.request(server, caller, found, request).await
        }
    }

    /// Anything else POSTed without the 2026-07-28 claim (an answer to a pushed question,
    /// a notification, an unreadable message): a future of its own, a fraction of the
    /// size of a request's, which holds the whole run of the request.
    #[allow(
        clippy::manual_async_fn,
        reason = "an `async fn` keeps each argument twice in its future (once as passed, once moved)"
    )]
    pub(crate) fn post_other<'a>(
        &'a self,
        headers: &'a HeaderMap,
        caller: Caller,
        message: Inbound<'a>,
    ) -> impl Future<Output = Response<McpBody>> + Send + 'a {
        async move {
            let found = match self.found(headers, &caller).await {
                Ok(f) => f,
                Err(answer) => return answer,
            };
            match message {
                Inbound::Malformed(m) => {
                    rpc_error(StatusCode::BAD_REQUEST, m.id.as_ref(), &m.error)
                }
                Inbound::Notification { method, params } => {
                    // Boxed: rare next to answers, and twice their size.
                    Box::pin(self.notified(found, &method, params)).await
                }
                Inbound::Response { id, outcome } => match (&found, id) {
                    (None, _) => bad_request(
                        None,
                        "Bad Request: an answer to a pushed question belongs to the session that asked it (Mcp-Session-Id)",
                    ),
                    (Some(f), Some(id)) if !f.live.pushes.answer(&id, outcome.clone()) => {
                        // Not waited for here: the replica running the request may.
                        self.relay_answer(f, id, outcome).await
                    }
                    _ => plain(StatusCode::ACCEPTED),
                },
                Inbound::Request { .. } => bad_request(None, "Bad Request"),
            }
        }
    }

    /// The session a POST names, after its version header is checked.
    async fn found(
        &self,
        headers: &HeaderMap,
        caller: &Caller,
    ) -> Result<Option<Found>, Response<McpBody>> {
        let version = headers.get(&PROTOCOL_VERSION).map(HeaderValue::to_str);
        if let Some(v) = version
            && !v.is_ok_and(sterna_types::legacy::is_legacy)
        {
            return Err(bad_request(
                None,
                "Bad Request: Unsupported protocol version",
            ));
        }
        self.find(headers, &caller.principal).await
    }

    async fn notified(
        &self,
        found: Option<Found>,
        method: &str,
        params: Option<&RawValue>,
    ) -> Response<McpBody> {
        let Some(f) = found else {
            return plain(StatusCode::ACCEPTED);
        };
        match method {
            "notifications/initialized" => {
                let mut record = SessionRecord::clone(&f.record);
                record.initialized = true;
                let store = &self.config.store;
                if let Err(e) = store.update(&f.id, record, self.config.idle).await {
                    tracing::error!(error = %e, "the session store failed");
                }
            }
            "notifications/cancelled" => {
                let p = params.and_then(|p| {
                    serde_json::from_str::<CancelledNotificationParams>(p.get()).ok()
                });
                if let Some(p) = p
                    && !f.live.cancel(&p.request_id)
                {
                    return self.relay_cancel(&f, p.request_id).await;
                }
            }
            _ => tracing::debug!(%method, "notification ignored"),
        }
        plain(StatusCode::ACCEPTED)
    }

    /// Decodes a session's request once, authorizes the target it names, and runs
    /// that same decoded request. All but the run happens here, so the request's future
    /// keeps only the run.
    fn request<'a>(
        &'a self,
        server: &'a Server,
        caller: Caller,
        found: Option<Found>,
        request: OwnedRequest,
    ) -> Either<BoxFuture<'a, Response<McpBody>>, impl Future<Output = Response<McpBody>> + Send + 'a>
    {
        let done = |answer| Either::Left(Box::pin(ready(answer)) as BoxFuture<'a, _>);
        if request.method == "initialize" {
            // Once per session: boxed, so that a request's future is not sized for it.
            return Either::Left(Box::pin(self.initialize(server, caller.principal, request)));
        }
        let Some(era) = Legacy::of(server) else {
            return done(bad_request(
                Some(&request.id),
                "Bad Request: 2025-11-25 sessions are not served",
            ));
        };
        let decoded = match era.decode(&request.method, request.params.as_deref()) {
            Ok(d) => d,
            Err(e) => return done(rpc_error(StatusCode::OK, Some(&request.id), &e)),
        };
        if let Err(refused) = caller.authorize(decoded.target()) {
            return done(*refused);
        }
        let principal = caller.principal;
        let id = request.id;
        let Some(f) = found else {
            // No session, no way back to the client: served with no capabilities, so a
            // handler that needs input gets a clean refusal.
            let live = Arc::new(Live::default());
            let session = LegacySession::open(stateless());
            return Either::Right(self.run(server, principal, live, session, (id, decoded), None));
        };
        if let Err(e) = self.config.limits.check_request(&f.record, &decoded) {
            return done(rpc_error(StatusCode::OK, Some(&id), &e));
        }
        let session =
            LegacySession::from_record(&f.record, f.live.pushes.clone(), &f.live.declared);
        let save = Save {
            store: self.config.store.clone(),
            id: f.id,
            before: f.record,
            idle: self.config.idle,
        };
        Either::Right(self.run(
            server,
            principal,
            f.live,
            session,
            (id, decoded),
            Some(save),
        ))
    }

    async fn initialize(
        &self,
        server: &Server,
        principal: Principal,
        request: OwnedRequest,
    ) -> Response<McpBody> {
        let Some(era) = Legacy::of(server) else {
            return bad_request(
                Some(&request.id),
                "Bad Request: 2025-11-25 sessions are not served",
            );
        };
        let limits = &self.config.limits;
        if let Err(e) = limits.check_initialize(request.params.as_deref()) {
            return rpc_error(StatusCode::OK, Some(&request.id), &e);
        }
        let (session, result) = match era.initialize(request.params.as_deref()) {
            Ok(opened) => opened,
            Err(e) => return rpc_error(StatusCode::OK, Some(&request.id), &e),
        };
        let id = crate::state::random_id::<16>();
        let opener = principal.id().map(str::to_owned);
        let record = session.record(opener, principal.dpop_jkt().map(str::to_owned));
        if let Err(e) = limits.check_record(&record) {
            return rpc_error(StatusCode::OK, Some(&request.id), &e);
        }
        self.lives.sweep(self.config.idle);
        let owner = QuotaKey::of(&principal);
        let store = &self.config.store;
        if let Err(e) = store.create(&id, &owner, record, self.config.idle).await {
            return refused(&request.id, &e);
        }
        let answer = crate::server::Response::ok(request.id, result);
        let mut r = json(StatusCode::OK, answer.to_bytes());
        let value = HeaderValue::from_str(&id).expect("session ids are visible ASCII");
        r.headers_mut().insert(SESSION_ID, value);
        r
    }

    /// Runs a session's request and answers: JSON when the response is all there is, at
    /// once when the request ends on its first poll; else with an SSE stream the client may
    /// resume ([`LegacyHttp::stream`]). The request is registered and started here; the
    /// future keeps the running request, not what started it.
    fn run<'a>(
        &'a self,
        server: &'a Server,
        principal: Principal,
        live: Arc<Live>,
        session: LegacySession,
        request: (RequestId, LegacyRequest),
        save: Option<Save>,
    ) -> impl Future<Output = Response<McpBody>> + Send + 'a {
        let (id, request) = request;
        let started = match live.register(&id) {
            Ok(cancel) => {
                let cut = CancellationToken::new();
                let (notifier, rx) = Notifier::queued(64);
                let env = RequestEnv::cancelled_by(cancel.clone())
                    .principal(principal)
                    .notifier(notifier)
                    .connection_cut(cut.clone());
                let work = running::handle(server, session, id.clone(), request, env);
                Ok((work, rx, cancel, cut))
            }
            Err(busy) => Err(refused_busy(&id, busy)),
        };
        async move {
            let (mut work, mut rx, cancel, cut) = match started {
                Ok(started) => started,
                Err(refused) => return refused,
            };
            // Most requests end on their first poll without a message before their answer:
            // answered as JSON at once, with no task, stream or log.
            match std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await {
                Poll::Ready((answer, session)) => {
                    // A request that changed its session goes the task's way, so that saving
                    // it (an await) cannot be cut short by the client going away.
                    let unchanged = save.as_ref().is_none_or(|s| !s.needed(&session));
                    match answer {
                        Some(answer) if rx.is_empty() && unchanged => {
                            live.release(&id);
                            return json(StatusCode::OK, answer.to_bytes());
                        }
                        answer => work = Box::pin(std::future::ready((answer, session))),
                    }
                }
                Poll::Pending => {}
            }
            let log = live.new_stream(self.config.resume_window, cut);
            // What the first poll sent (a pushed question, progress) is logged here, so the
            // stream opens at once instead of after the task's first turn.
            running::drain(&mut rx, &log);
            let shared = self.shared(save.as_ref(), &id);
            let read_elsewhere = shared
                .as_ref()
                .map(|m| (m.store.clone(), m.session.clone()));
            let task = Task {
                live,
                log,
                window: self.config.resume_window,
                save,
                read_elsewhere,
            };
            let driver = Driver {
                task,
                id,
                work,
                rx,
                cancel,
            };
            self.stream(driver, shared).await
        }
    }

    /// The SSE stream of a request that did not end at once: driven by its body when it
    /// already sent something (a pushed question), else run on a task of its own (and
    /// answered as JSON after all when it ends with nothing before its answer). The body is
    /// made here; the future waits only for what the stream needs first.
    fn stream(
        &self,
        driver: Driver,
        shared: Option<Mirror>,
    ) -> impl Future<Output = Response<McpBody>> + Send + '_ {
        let log = driver.task.log.clone();
        // The client waiting on this POST reads the stream from now on: a handler may stay
        // silent for longer than the resume window without being taken for abandoned.
        let reading = Reading::new(log.clone());
        let lead = self.priming(log.id);
        let body = if log.last() > 0 {
            Ok(McpBody::stream(Box::pin(driven(
                driver,
                reading,
                lead,
                self.keep_alive,
            ))))
        } else {
            let live = driver.task.live.clone();
            driver.detach();
            Err((live, reading, lead))
        };
        async move {
            let body = match body {
                Ok(body) => body,
                Err((live, reading, lead)) => {
                    if let Some(only) = log.first().await {
                        live.forget_stream(log.id);
                        return json(StatusCode::OK, only.to_vec());
                    }
                    let cut = Some(log.cut());
                    let follow = follow(reading, 0, Some(lead), self.keep_alive, cut);
                    McpBody::stream(Box::pin(follow))
                }
            };
            if let Some(mirror) = shared {
                // Shared before the client sees an event id, so any replica can resume it.
                // Boxed: only where streams are shared, and larger than the rest.
                Box::pin(mirror.start(log.clone())).await;
            }
            sse_response(body)
        }
    }

    /// Where a session's stream is shared for resumption elsewhere, if anywhere.
    fn shared(&self, save: Option<&Save>, request: &RequestId) -> Option<Mirror> {
        let store = self.config.streams.clone()?;
        Some(Mirror {
            store,
            session: save?.id.clone(),
            request: serde_json::to_string(request).ok()?,
            keep: self.config.resume_window,
            max_events: self.config.limits.max_replay_events,
        })
    }

    /// The first event of a stream: its id and the reconnection delay, no data.
    fn priming(&self, stream: u64) -> Bytes {
        super::log::priming(stream, self.config.retry.as_millis())
    }
}

/// The answer to a request the session cannot take now: its id is in use, or the session
/// runs as many requests as it may (`429`, retry in a second).
fn refused_busy(id: &RequestId, busy: Busy) -> Response<McpBody> {
    match busy {
        Busy::IdInUse => {
            let msg = "Invalid request: this id is already in use by a request in flight";
            let e = ErrorObject::new(ErrorCode::INVALID_REQUEST, msg);
            rpc_error(StatusCode::OK, Some(id), &e)
        }
        Busy::Full(max) => {
            let msg = format!(
                "Too many requests in flight in this session: at most {max} at once (max_in_flight); wait for one to finish"
            );
            let e = limit_error(ErrorCode::INTERNAL_ERROR, msg, "max_in_flight", max);
            let mut r = rpc_error(StatusCode::TOO_MANY_REQUESTS, Some(id), &e);
            r.headers_mut()
                .insert("retry-after", HeaderValue::from_static("1"));
            r
        }
    }
}

/// The parameters of a session nobody opened (a POST without `Mcp-Session-Id`).
fn stateless() -> InitializeParams {
    InitializeParams {
        protocol_version: sterna_types::legacy::V2025_03_26.to_owned(),
        capabilities: Default::default(),
        client_info: sterna_types::meta::Implementation::new("unknown", "0"),
        meta: None,
    }
}
