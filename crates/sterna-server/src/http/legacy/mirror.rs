//! The writer's side of a shared stream: the events of a request answered as a stream
//! are copied, in order, from the replica's own log into the session's log in the
//! [`StreamStore`], so another replica can resume the stream.
//!
//! The copy starts when the request is answered as a stream (a request answered as JSON
//! never reaches the store): its first write is awaited before the client sees the
//! stream, so an event id the client holds always names a stream the store knows.
//! Later events are copied in batches as they come (never waiting on the client), and
//! the log is kept alive while the request runs.

use super::log::StreamLog;
use super::streams::{StreamAppend, StreamEvent, StreamStore};
use std::sync::Arc;
use std::time::Duration;

/// Where one stream is copied to.
pub(crate) struct Mirror {
    pub(crate) store: Arc<dyn StreamStore>,
    pub(crate) session: String,
    /// The request's id, as JSON.
    pub(crate) request: String,
    /// How long the session's log is kept after each write (the resume window).
    pub(crate) keep: Duration,
    pub(crate) max_events: usize,
}

impl Mirror {
    async fn write(&self, stream: u64, events: &[StreamEvent], ended: bool) -> bool {
        let write = StreamAppend {
            session: &self.session,
            stream,
            request: &self.request,
            events,
            ended,
            keep: self.keep,
            max_events: self.max_events,
        };
        match self.store.append(write).await {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(error = %e, "the stream store failed: events not shared");
                false
            }
        }
    }

    /// Copies what `log` holds now (awaited), then the rest in the background until the
    /// stream ends.
    pub(crate) async fn start(self, log: Arc<StreamLog>) {
        let (events, ended) = log.batch_after(0, Duration::ZERO).await;
        self.write(log.id, &events, ended).await;
        if ended {
            return;
        }
        let cursor = events.last().map_or(0, |e| e.seq);
        tokio::spawn(self.copy(log, cursor));
    }

    /// Copies the events after `cursor` as they come; refreshes the log at least every
    /// third of `keep` while the request runs.
    async fn copy(self, log: Arc<StreamLog>, mut cursor: u64) {
        let every = (self.keep / 3).max(Duration::from_millis(10));
        loop {
            let (events, ended) = log.batch_after(cursor, every).await;
            let mut written = false;
            for attempt in 0..3 {
                if self.write(log.id, &events, ended).await {
                    written = true;
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100) * (attempt + 1)).await;
            }
            if !written {
                tracing::warn!(
                    "events of a stream were not shared: a resume on another replica misses them"
                );
            }
            if let Some(last) = events.last() {
                cursor = last.seq;
            }
            if ended {
                return;
            }
        }
    }
}
