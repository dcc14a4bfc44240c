//! Following a POST's SSE stream until its response, resuming it with `Last-Event-ID`
//! when the connection ends first (SEP-1699 polling, or a dropped connection).

use super::LegacyHttp;
use super::read::{Events, is_sse};
use crate::error::TransportError;
use crate::legacy::wire_error::WireError;
use crate::transport::Origin;
use crate::transport::sse::SseParser;
use http::Method;
use http::header::ACCEPT;
use std::time::Duration;
use sterna_types::jsonrpc::RequestId;
use tokio::sync::oneshot;

/// Reconnections in a row that bring nothing before a stream is given up.
pub(super) const MAX_RECONNECTS: u32 = 2;

/// The wait before reconnection `n` (from 1): the server's `retry`, else 1 s doubling.
pub(super) fn backoff(retry_ms: Option<u64>, n: u32) -> Duration {
    match retry_ms {
        Some(ms) => Duration::from_millis(ms),
        None => Duration::from_secs(1) * (1 << n.saturating_sub(1).min(4)),
    }
}

/// What a GET for a stream brought.
pub(super) enum Reopened {
    Stream(hyper::body::Incoming),
    SessionGone,
    Nothing,
}

impl LegacyHttp {
    /// A GET for the session's stream, resuming after `last_id` when given.
    pub(super) async fn get(&self, last_id: Option<&str>) -> Reopened {
        let mut headers = vec![(ACCEPT.as_str(), "text/event-stream")];
        if let Some(id) = last_id {
            headers.push(("last-event-id", id));
        }
        let sent_session = self.session_headers().session.is_some();
        match self.exchange(Method::GET, headers, Vec::new(), true).await {
            Ok(r) if r.status().is_success() && is_sse(r.headers()) => {
                Reopened::Stream(r.into_body())
            }
            Ok(r) if self.gone(r.status(), sent_session) => Reopened::SessionGone,
            Ok(r) => {
                tracing::debug!(status = %r.status(), "GET brought no stream");
                Reopened::Nothing
            }
            Err(e) => {
                tracing::debug!(error = %e, "GET failed");
                Reopened::Nothing
            }
        }
    }

    /// Reads the stream of request `id` (routing every message it carries) until the
    /// response arrives, on this stream or any other.
    pub(super) async fn follow(
        &self,
        id: &RequestId,
        body: hyper::body::Incoming,
        mut rx: oneshot::Receiver<Vec<u8>>,
    ) -> Result<Vec<u8>, WireError> {
        let limit = self.http.response_limit();
        let mut parser = SseParser::new(limit);
        let mut events = Events::new(body, Some(limit));
        let mut quiet = 0u32;
        loop {
            let before = parser.last_id.clone();
            let mut progressed = false;
            loop {
                tokio::select! {
                    // The response first: it may have been routed from the last event.
                    biased;
                    r = &mut rx => return r.map_err(|_| TransportError::Closed.into()),
                    m = events.next(&mut parser) => match m? {
                        Some(message) => {
                            progressed = true;
                            self.route(message, Origin::Call(id.clone()));
                        }
                        None => break,
                    },
                }
            }
            if let Ok(answer) = rx.try_recv() {
                return Ok(answer);
            }
            // Polling servers close after each event id (SEP-1699): a new id is progress.
            if progressed || parser.last_id != before {
                quiet = 0;
            }
            // The connection ended before the response: resumable only with an event id.
            let Some(last) = parser.last_id.clone() else {
                return Err(TransportError::StreamBroken.into());
            };
            let body = loop {
                quiet += 1;
                if quiet > MAX_RECONNECTS {
                    return Err(TransportError::StreamBroken.into());
                }
                let wait = backoff(parser.retry_ms, quiet);
                tokio::select! {
                    r = &mut rx => return r.map_err(|_| TransportError::Closed.into()),
                    () = tokio::time::sleep(wait) => {}
                }
                tracing::debug!(%id, last_event_id = %last, "resuming the response stream");
                match self.get(Some(&last)).await {
                    Reopened::Stream(b) => break b,
                    Reopened::SessionGone => return Err(WireError::SessionGone),
                    Reopened::Nothing => {}
                }
            };
            parser.reconnected();
            events = Events::new(body, Some(limit));
        }
    }
}
