//! One byte-stream connection (a stdio process): its writer queue, its requests in
//! flight, and — once the client sends `initialize` — its 2025-11-25 session (the era's
//! side of the connection is `legacy.rs`; built without the era, `no_legacy.rs`).
//!
//! Each request is routed by how it reads: a request carrying the 2026-07-28 `_meta`
//! claim is served statelessly, whatever else happened on the connection; `initialize`
//! opens the legacy session; requests without the claim belong to that session.

use super::legacy::{SessionHandle, StdioSession};
use crate::server::inbound::{Inbound, OwnedRequest, classify_envelope, has_modern_claim};
use crate::server::prepare::Prepared;
use crate::server::{Notifier, RequestEnv, Response, Server, log_panic};
use futures_util::FutureExt;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::{ErrorResponseRef, RequestId};
use sterna_types::notifications::CancelledNotificationParams;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

type InFlight = Arc<Mutex<HashMap<RequestId, CancellationToken>>>;

/// Which era serves a request.
#[derive(Clone)]
enum Era {
    Modern,
    Legacy(SessionHandle),
}

pub(crate) struct Connection {
    server: Server,
    env: RequestEnv,
    tx: mpsc::Sender<Vec<u8>>,
    in_flight: InFlight,
    tasks: JoinSet<()>,
    /// The 2025-11-25 session `initialize` opened on this connection.
    session: Option<StdioSession>,
}

impl Connection {
    pub(crate) fn new(server: Server, env: RequestEnv, tx: mpsc::Sender<Vec<u8>>) -> Self {
        Self {
            server,
            env,
            tx,
            in_flight: Arc::default(),
            tasks: JoinSet::new(),
            session: None,
        }
    }

    /// Forgets finished tasks so the set does not grow with the connection's lifetime.
    pub(crate) fn reap(&mut self) {
        while self.tasks.try_join_next().is_some() {}
    }

    /// End of input: requests in flight finish (questions pushed to a client that is gone
    /// fail at once); nothing else is sent.
    pub(crate) async fn finish(mut self) {
        if let Some(s) = &self.session {
            s.close();
        }
        while self.tasks.join_next().await.is_some() {}
    }

    /// Reads one line (the envelope once) and acts on it.
    pub(crate) async fn receive(&mut self, line: &str) {
        match classify_envelope(line.as_bytes()) {
            Inbound::Malformed(m) => send_error(&self.tx, m.id.as_ref(), &m.error).await,
            Inbound::Notification { method, params } => self.notified(&method, params),
            Inbound::Response {
                id: Some(id),
                outcome,
            } => {
                let routed = self
                    .session
                    .as_ref()
                    .is_some_and(|s| s.answer(&id, outcome));
                if !routed {
                    tracing::warn!(%id, "ignoring a response to no request of this server");
                }
            }
            Inbound::Response { id: None, outcome } => {
                tracing::warn!(error = ?outcome.err(), "the client reported an error");
            }
            request @ Inbound::Request { .. } => {
                if let Some(request) = request.into_owned_request() {
                    self.route(request).await;
                }
            }
        }
    }

    fn notified(&self, method: &str, params: Option<&RawValue>) {
        match method {
            "notifications/cancelled" => cancel(&self.in_flight, params),
            "notifications/initialized" => {
                if let Some(s) = &self.session {
                    s.initialized();
                }
            }
            _ => tracing::debug!(%method, "notification ignored"),
        }
    }

    async fn route(&mut self, request: OwnedRequest) {
        if has_modern_claim(request.params.as_deref()) {
            return self.start(request, Era::Modern).await;
        }
        match (&self.session, request.method.as_str()) {
            (None, "initialize") => self.initialize(request).await,
            (Some(s), _) => self.start(request, Era::Legacy(s.handle())).await,
            (None, "ping") => {
                let empty = RawValue::from_string("{}".into()).expect("valid JSON");
                let _ = self
                    .tx
                    .send(Response::ok(request.id, empty).to_bytes())
                    .await;
            }
            (None, _) => self.start(request, Era::Modern).await,
        }
    }

    /// `initialize` opens the 2025-11-25 session of this connection.
    async fn initialize(&mut self, request: OwnedRequest) {
        let params = request.params.as_deref();
        let (session, answer) = StdioSession::open(&self.server, request.id, params, &self.tx);
        self.session = session;
        let _ = self.tx.send(answer.to_bytes()).await;
    }

    /// Starts a request on a task of its own (an id already in flight is refused).
    async fn start(&mut self, request: OwnedRequest, era: Era) {
        let id = request.id.clone();
        let Some(token) = self.register(&id) else {
            let e = ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("Invalid request: id {id} is already in use by a request in flight"),
            );
            return send_error(&self.tx, Some(&id), &e).await;
        };
        let env = self
            .env
            .clone()
            .cancel(token)
            .notifier(Notifier::from_sender(self.tx.clone()));
        let server = self.server.clone();
        let tx = self.tx.clone();
        let in_flight = self.in_flight.clone();
        self.tasks.spawn(async move {
            // Whatever happens on behalf of this request, a panic included, costs only
            // this request: it is answered -32603 and its id released.
            let handled = AssertUnwindSafe(run(&server, &request, era, env))
                .catch_unwind()
                .await;
            in_flight
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
            let response = handled.unwrap_or_else(|panic| {
                log_panic(panic.as_ref());
                let e = ErrorObject::internal("Internal error");
                Some(Response::error(Some(id), e))
            });
            if let Some(r) = response {
                let _ = tx.send(r.to_bytes()).await;
            }
        });
    }

    /// Records `id` as in flight; `None` when it already is.
    fn register(&self, id: &RequestId) -> Option<CancellationToken> {
        let mut map = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        if map.contains_key(id) {
            return None;
        }
        let token = CancellationToken::new();
        map.insert(id.clone(), token.clone());
        Some(token)
    }

    pub(crate) async fn refuse(&self, id: Option<&RequestId>, message: &str) {
        let e = ErrorObject::new(ErrorCode::PARSE_ERROR, message);
        send_error(&self.tx, id, &e).await;
    }
}

/// Prepares and runs one request in its era.
async fn run(
    server: &Server,
    request: &OwnedRequest,
    era: Era,
    env: RequestEnv,
) -> Option<Response> {
    let id = request.id.clone();
    match era {
        Era::Legacy(session) => {
            let params = request.params.as_deref();
            super::legacy::serve(server, &session, id, &request.method, params, env).await
        }
        Era::Modern => match Prepared::read(server, id, &request.method, request.body()) {
            Ok(prepared) => prepared.run(server, env).await,
            Err(refused) => Some(refused),
        },
    }
}

fn cancel(in_flight: &InFlight, params: Option<&RawValue>) {
    let Some(p) =
        params.and_then(|p| serde_json::from_str::<CancelledNotificationParams>(p.get()).ok())
    else {
        tracing::debug!("notifications/cancelled without a valid requestId");
        return;
    };
    if let Some(token) = in_flight
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&p.request_id)
    {
        tracing::debug!(id = %p.request_id, reason = ?p.reason, "request cancelled");
        token.cancel();
    }
}

async fn send_error(tx: &mpsc::Sender<Vec<u8>>, id: Option<&RequestId>, error: &ErrorObject) {
    let bytes = serde_json::to_vec(&ErrorResponseRef { id, error }).expect("errors serialize");
    let _ = tx.send(bytes).await;
}
