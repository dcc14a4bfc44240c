//! GET (a stream: resumed with `Last-Event-ID`, or the session's stream of messages
//! unrelated to any request) and DELETE (the end of a session).

use super::live::Live;
use super::log::{Reading, StreamLog, follow, parse_event_id};
use super::remote::Remote;
use super::{Found, LegacyHttp, SessionEvent};
use crate::http::body::McpBody;
use crate::http::layers::Accepts;
use crate::http::respond::{plain, rpc_error, sse_response};
use crate::legacy::change_notification;
use crate::server::{Principal, QuotaKey, Server};
use http::header::HeaderName;
use http::{HeaderMap, Response, StatusCode};

const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
use std::sync::Arc;
use sterna_types::error::{ErrorCode, ErrorObject};

impl LegacyHttp {
    /// A GET: replay and follow a stream, or open the session's own stream.
    pub(crate) async fn get(
        &self,
        server: &Server,
        headers: &HeaderMap,
        principal: Principal,
    ) -> Response<McpBody> {
        if !Accepts::of(headers).sse {
            let e = ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "Accept must list text/event-stream",
            );
            return rpc_error(StatusCode::NOT_ACCEPTABLE, None, &e);
        }
        let found = match self.find(headers, &principal).await {
            Ok(Some(f)) => f,
            Ok(None) => return refuse(StatusCode::BAD_REQUEST, NO_SESSION),
            Err(answer) => return answer,
        };
        // Not text is as unreadable as not an event id: refused, never taken for absent.
        let resume = headers
            .get(&LAST_EVENT_ID)
            .map(|v| v.to_str().ok().and_then(parse_event_id).ok_or(()));
        let (log, cursor) = match resume {
            Some(Ok((stream, seq))) => match found.live.stream(stream) {
                Some(log) => (log, seq),
                None => return self.resume_shared(&found, stream, seq).await,
            },
            Some(Err(())) => {
                let msg = "Bad Request: Last-Event-ID is not an event id of this server";
                return refuse(StatusCode::BAD_REQUEST, msg);
            }
            None => match self.standalone(server, &found) {
                Some(log) => (log, u64::MAX),
                None => {
                    let msg = "Conflict: this session's stream is already being read";
                    return refuse(StatusCode::CONFLICT, msg);
                }
            },
        };
        let from = if cursor == u64::MAX {
            log.last()
        } else {
            metrics::counter!(crate::metrics::RESUMES, "from" => "local").increment(1);
            cursor
        };
        sse_response(McpBody::stream(Box::pin(follow(
            Reading::new(log),
            from,
            None,
            self.keep_alive,
            None,
        ))))
    }

    /// A stream this replica does not hold, resumed from the shared store (`400` when
    /// there is none, or it does not know the stream).
    async fn resume_shared(&self, found: &Found, stream: u64, after: u64) -> Response<McpBody> {
        let Some(store) = self.config.streams.clone().filter(|_| stream != 0) else {
            return no_stream();
        };
        let remote = Remote {
            store,
            session: found.id.clone(),
            stream,
            window: self.config.resume_window,
            keep_alive: self.keep_alive,
            ended: found.live.ended.clone(),
        };
        let Some(first) = remote.first(after).await else {
            return no_stream();
        };
        tracing::debug!("a stream resumed from the shared store");
        metrics::counter!(crate::metrics::RESUMES, "from" => "store").increment(1);
        sse_response(McpBody::stream(Box::pin(remote.follow(after, first))))
    }

    /// The session's stream of unrelated messages; `None` when a client already reads it.
    fn standalone(&self, server: &Server, found: &Found) -> Option<Arc<StreamLog>> {
        let live = &found.live;
        let mut slot = live.standalone.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(log) = slot.as_ref() {
            return (log.readers() == 0).then(|| log.clone());
        }
        let log = StreamLog::new(0, self.config.limits.max_replay_events);
        *slot = Some(log.clone());
        tokio::spawn(forward_changes(
            server.clone(),
            self.config.store.clone(),
            (found.id.clone(), found.owner.clone()),
            live.clone(),
            log.clone(),
            self.config.idle,
        ));
        Some(log)
    }

    /// A DELETE: ends the session.
    pub(crate) async fn delete(
        &self,
        headers: &HeaderMap,
        principal: Principal,
    ) -> Response<McpBody> {
        let found = match self.find(headers, &principal).await {
            Ok(Some(f)) => f,
            Ok(None) => return refuse(StatusCode::BAD_REQUEST, NO_SESSION),
            Err(answer) => return answer,
        };
        if let Err(e) = self.config.store.remove(&found.id, &found.owner).await {
            tracing::error!(error = %e, "the session store failed");
        }
        self.lives.remove(&found.id);
        self.publish(SessionEvent::End { session: found.id }).await;
        plain(StatusCode::OK)
    }
}

/// List changes and updates of subscribed resources, into the session's stream, until
/// the session ends.
async fn forward_changes(
    server: Server,
    store: Arc<dyn super::SessionStore>,
    (id, owner): (String, QuotaKey),
    live: Arc<Live>,
    log: Arc<StreamLog>,
    idle: std::time::Duration,
) {
    let mut changes = server.changes().subscribe();
    loop {
        let change = tokio::select! {
            _ = live.ended.cancelled() => return,
            c = changes.recv() => match c {
                Ok(c) => c,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => return,
            },
        };
        let Ok(Some(record)) = store.touch(&id, &owner, idle).await else {
            return;
        };
        if !record.initialized {
            continue;
        }
        if let Some(bytes) = change_notification(&change, |uri| record.subscriptions.contains(uri))
        {
            log.push(bytes);
        }
    }
}

const NO_SESSION: &str = "Bad Request: Mcp-Session-Id is required";

/// A GET or DELETE refused: its status, and why as a JSON-RPC error.
fn refuse(status: StatusCode, message: &str) -> Response<McpBody> {
    rpc_error(
        status,
        None,
        &ErrorObject::new(ErrorCode::INVALID_REQUEST, message),
    )
}

/// A `Last-Event-ID` naming a stream nobody keeps (never opened, or its window passed).
fn no_stream() -> Response<McpBody> {
    let msg =
        "Bad Request: no stream to resume with this Last-Event-ID (unknown, or no longer kept)";
    refuse(StatusCode::BAD_REQUEST, msg)
}
