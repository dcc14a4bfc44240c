//! Streamable HTTP as 2025-11-25 defines it, for clients that open with `initialize`:
//! sessions (`Mcp-Session-Id`, 404 once gone, DELETE ends one), a POST answered as JSON or
//! as an SSE stream that carries the request's notifications and the questions its
//! handler pushes, event ids and replay with `Last-Event-ID`, and the GET stream for
//! messages unrelated to any request (list changes, updates of subscribed resources).
//!
//! Unlike 2026-07-28, a dropped connection is not a cancellation: the request goes on
//! and its messages wait for the client to resume the stream. A request nobody resumes
//! within the resume window is cancelled, and an idle session expires.

mod api;
mod bus;
mod config;
mod driven;
mod get;
mod kept;
mod limits;
mod live;
mod log;
mod mirror;
mod post;
mod quiet;
mod relay;
mod remote;
mod running;
mod store;
mod streams;
mod timed;

pub use bus::{SessionBus, SessionEvent};
pub use config::SessionConfig;
pub use limits::SessionLimits;
pub use store::{MemorySessionStore, SessionError, SessionStore};
pub use streams::{
    MemoryStreamStore, StreamAppend, StreamEvent, StreamPage, StreamRead, StreamStore,
    StreamStoreError,
};

use super::body::McpBody;
use super::caller::Caller;
use super::era::HttpEra;
use super::respond::{plain, rpc_error};
use crate::legacy::SessionRecord;
use crate::server::Server;
use crate::server::inbound::Inbound;
use crate::server::quota::limit_error;
use crate::server::{Principal, QuotaKey};
use futures_util::future::BoxFuture;
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use live::{Live, Lives};
use std::sync::Arc;
use std::time::Duration;
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::RequestId;

/// The `Mcp-Session-Id` header.
pub(crate) use super::headers::SESSION_ID;

/// The legacy side of the endpoint.
#[derive(Debug)]
pub(crate) struct LegacyHttp {
    pub(crate) config: SessionConfig,
    lives: Lives,
    keep_alive: Duration,
}

/// A session found for a request.
pub(crate) struct Found {
    pub(crate) id: String,
    pub(crate) record: Arc<SessionRecord>,
    pub(crate) live: Arc<Live>,
    /// The client using it now (whose share it counts against).
    pub(crate) owner: QuotaKey,
}

impl LegacyHttp {
    pub(crate) fn new(mut config: SessionConfig, keep_alive: Duration) -> Self {
        config.store = timed::session(config.store);
        config.streams = config.streams.map(timed::stream);
        Self {
            lives: Lives::new(config.limits, config.bus.clone()),
            config,
            keep_alive,
        }
    }

    /// How many sessions this process holds live parts for (idle ones swept first).
    pub(crate) fn live_sessions(&self) -> usize {
        self.lives.sweep(self.config.idle);
        self.lives.len()
    }

    /// Publishes an event to the other replicas, when there are any (`false`: there are
    /// none, or the bus dropped it).
    pub(crate) async fn publish(&self, event: SessionEvent) -> bool {
        match &self.config.bus {
            Some(bus) => bus.publish(event).await,
            None => false,
        }
    }

    /// An event another replica published.
    pub(crate) fn deliver(&self, event: SessionEvent) {
        match event {
            SessionEvent::Answer {
                session,
                id,
                outcome,
            } => {
                if let Some(live) = self.lives.peek(&session) {
                    live.pushes
                        .answer(&id, outcome.as_deref().map_err(Clone::clone));
                }
            }
            SessionEvent::Cancel { session, request } => {
                if let Some(live) = self.lives.peek(&session) {
                    live.cancel(&request);
                }
            }
            SessionEvent::End { session } => self.lives.remove(&session),
        }
    }

    /// The session a request names, if it exists, has not expired, and belongs to this
    /// principal (with a token bound to the same DPoP key, if the opener's was). `Err` is
    /// the answer to send (404 for all three cases alike).
    pub(crate) async fn find(
        &self,
        headers: &HeaderMap,
        principal: &Principal,
    ) -> Result<Option<Found>, Response<McpBody>> {
        // One clock read serves the sweep and the session's use.
        let now = tokio::time::Instant::now();
        self.lives.sweep_at(self.config.idle, now);
        let Some(id) = headers.get(&SESSION_ID) else {
            return Ok(None);
        };
        let id = id
            .to_str()
            .ok()
            .filter(|s| !s.is_empty())
            .ok_or_else(not_found)?;
        let owner = QuotaKey::of(principal);
        let record = match self.config.store.touch(id, &owner, self.config.idle).await {
            Ok(Some(r))
                if r.principal.as_deref() == principal.id()
                    && r.dpop_jkt.as_deref() == principal.dpop_jkt() =>
            {
                r
            }
            Ok(_) => return Err(not_found()),
            Err(e) => return Err(unavailable(&e)),
        };
        Ok(Some(Found {
            id: id.to_owned(),
            live: self.lives.get_at(id, now),
            record,
            owner,
        }))
    }
}

fn not_found() -> Response<McpBody> {
    let e = ErrorObject::new(ErrorCode(-32001), "Session not found");
    rpc_error(StatusCode::NOT_FOUND, None, &e)
}

/// The answer to a session store's refusal of a new session, naming the limit hit:
/// `429` for the client's own share (other clients still get sessions), `503` when the
/// whole store is full.
fn refused(id: &RequestId, e: &SessionError) -> Response<McpBody> {
    match e {
        SessionError::QuotaExceeded { limit } => {
            let msg = format!(
                "Too many sessions: this client already holds {limit}, its share of the server (the session store's per_principal limit); end one with DELETE or let one expire"
            );
            let e = limit_error(ErrorCode::INTERNAL_ERROR, msg, "per_principal", *limit);
            rpc_error(StatusCode::TOO_MANY_REQUESTS, Some(id), &e)
        }
        SessionError::Full => {
            tracing::warn!("the session store is full: a new session was refused");
            let msg =
                "Too many sessions on this server (the session store's capacity); retry later";
            let e = ErrorObject::new(ErrorCode::INTERNAL_ERROR, msg)
                .with_data(serde_json::json!({ "limit": "capacity" }));
            let mut r = rpc_error(StatusCode::SERVICE_UNAVAILABLE, Some(id), &e);
            r.headers_mut()
                .insert("retry-after", HeaderValue::from_static("1"));
            r
        }
        other => unavailable(other),
    }
}

fn unavailable(e: &dyn std::error::Error) -> Response<McpBody> {
    tracing::error!(error = %e, "the session store failed");
    let mut r = plain(StatusCode::SERVICE_UNAVAILABLE);
    r.headers_mut()
        .insert("retry-after", HeaderValue::from_static("1"));
    r
}

impl HttpEra for LegacyHttp {
    fn post<'a>(
        &'a self,
        server: &'a Server,
        headers: &'a HeaderMap,
        caller: Caller,
        message: Inbound<'a>,
    ) -> BoxFuture<'a, Response<McpBody>> {
        match message {
            Inbound::Request { .. } => {
                Box::pin(self.post_request(server, headers, caller, message))
            }
            other => Box::pin(self.post_other(headers, caller, other)),
        }
    }

    fn get<'a>(
        &'a self,
        server: &'a Server,
        headers: &'a HeaderMap,
        caller: Caller,
    ) -> BoxFuture<'a, Response<McpBody>> {
        Box::pin(self.get(server, headers, caller.principal))
    }

    fn delete<'a>(
        &'a self,
        headers: &'a HeaderMap,
        caller: Caller,
    ) -> BoxFuture<'a, Response<McpBody>> {
        Box::pin(self.delete(headers, caller.principal))
    }
}
