//! Reading HTTP answers: a bounded JSON body, or an SSE stream event by event.

use crate::error::TransportError;
use crate::transport::sse::{Event, SseParser};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use std::collections::VecDeque;

/// Whether a response is an SSE stream.
pub(crate) fn is_sse(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"))
}

/// A whole body, at most `limit` bytes.
pub(crate) async fn read_all(body: Incoming, limit: usize) -> Result<Vec<u8>, TransportError> {
    let collected = http_body_util::Limited::new(body, limit)
        .collect()
        .await
        .map_err(|e| {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                TransportError::TooLarge { limit }
            } else {
                TransportError::StreamBroken
            }
        })?;
    Ok(collected.to_bytes().to_vec())
}

/// The start of a body, as text (for errors).
pub(crate) async fn error_text(body: Incoming) -> String {
    let bytes = read_all(body, 64 * 1024).await.unwrap_or_default();
    String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).into_owned()
}

/// The messages of one SSE connection, one at a time.
pub(crate) struct Events {
    body: Incoming,
    ready: VecDeque<String>,
    received: usize,
    /// The most this connection may carry in all (`None`: unbounded, for the long-lived
    /// GET stream; each event stays bounded by the parser).
    total: Option<usize>,
}

impl Events {
    pub(crate) fn new(body: Incoming, total: Option<usize>) -> Self {
        Self {
            body,
            ready: VecDeque::new(),
            received: 0,
            total,
        }
    }

    /// The next message, or `None` when the connection ended (cleanly or not: either way
    /// the stream may be resumed).
    pub(crate) async fn next(
        &mut self,
        parser: &mut SseParser,
    ) -> Result<Option<String>, TransportError> {
        loop {
            if let Some(m) = self.ready.pop_front() {
                return Ok(Some(m));
            }
            let frame = match self.body.frame().await {
                None | Some(Err(_)) => return Ok(None),
                Some(Ok(f)) => f,
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            self.received = self.received.saturating_add(data.len());
            if let Some(limit) = self.total.filter(|l| self.received > *l) {
                return Err(TransportError::TooLarge { limit });
            }
            let mut out = Vec::new();
            let pushed = parser.push(&data, &mut out);
            self.ready
                .extend(out.into_iter().filter_map(|event| match event {
                    Event::Data(message) => Some(message),
                    Event::Unreadable => {
                        tracing::warn!("skipping an SSE event whose data is not UTF-8");
                        None
                    }
                }));
            if let Err(e) = pushed {
                return Err(TransportError::TooLarge { limit: e.limit });
            }
        }
    }
}
