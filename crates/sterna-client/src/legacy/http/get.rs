//! The session's GET stream: what the server sends on its own (requests with no related
//! request, `list_changed`, `resources/updated`, pings), kept open and resumed with
//! `Last-Event-ID` after the server's `retry` when its connection ends.

use super::LegacyHttp;
use super::read::Events;
use super::stream::{MAX_RECONNECTS, Reopened, backoff};
use crate::transport::Origin;
use crate::transport::sse::SseParser;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long opening the GET stream may take before the session goes on without it.
const OPEN_WAIT: Duration = Duration::from_secs(5);

impl LegacyHttp {
    /// Opens the GET stream, waiting for its headers (so pushes sent right after are not
    /// missed). A 405, or a 400/404, means the server offers none: not an error.
    pub(crate) async fn open_stream(self: &Arc<Self>) {
        let body = match tokio::time::timeout(OPEN_WAIT, self.get(None)).await {
            Ok(Reopened::Stream(body)) => body,
            Ok(_) => {
                tracing::debug!("the server offers no GET stream");
                return;
            }
            Err(_) => {
                tracing::debug!("no answer to the GET stream within {OPEN_WAIT:?}");
                return;
            }
        };
        let stop = self
            .get_stop
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let me = Arc::downgrade(self);
        let limit = self.http.response_limit();
        tokio::spawn(async move {
            tokio::select! {
                () = stop.cancelled() => {}
                () = keep_open(me, body, limit, stop.clone()) => {}
            }
        });
    }
}

/// Reads the stream, reconnecting when it ends, until the session ends or reconnecting
/// fails too often.
async fn keep_open(
    me: std::sync::Weak<LegacyHttp>,
    body: hyper::body::Incoming,
    limit: usize,
    stop: CancellationToken,
) {
    let mut parser = SseParser::new(limit);
    let mut body = Some(body);
    let mut quiet = 0u32;
    loop {
        if let Some(b) = body.take() {
            let before = parser.last_id.clone();
            let mut events = Events::new(b, None);
            loop {
                match events.next(&mut parser).await {
                    Ok(Some(message)) => {
                        quiet = 0;
                        let Some(http) = me.upgrade() else { return };
                        http.route(message, Origin::Unrelated);
                    }
                    Ok(None) => break,
                    Err(e) => {
                        tracing::warn!(error = %e, "abandoning the GET stream");
                        break;
                    }
                }
            }
            if parser.last_id != before {
                quiet = 0;
            }
        }
        quiet += 1;
        if quiet > MAX_RECONNECTS || stop.is_cancelled() {
            tracing::debug!("the GET stream ended");
            return;
        }
        tokio::time::sleep(backoff(parser.retry_ms, quiet)).await;
        let Some(http) = me.upgrade() else { return };
        match http.get(parser.last_id.as_deref()).await {
            Reopened::Stream(b) => {
                parser.reconnected();
                body = Some(b);
            }
            Reopened::SessionGone => return,
            Reopened::Nothing => {}
        }
    }
}
