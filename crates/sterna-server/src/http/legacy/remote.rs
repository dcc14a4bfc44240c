//! The reader's side of a shared stream: a replica asked to resume a stream it does not
//! run follows the session's log in the [`StreamStore`] — what came after the client's
//! `Last-Event-ID`, then what the writer adds, until the stream ends.
//!
//! The store is read at once, then again after a pause that starts at 25 ms and doubles
//! up to 1 s while nothing comes (and falls back to 25 ms when something does). While
//! the client reads, the store is told so (every quarter of the resume window), so the
//! replica running the request does not take the client for gone. A stream whose writer
//! died (its replica was killed) ends with an error for its request, so the client can
//! send it again instead of waiting for ever.

use super::log::sse;
use super::streams::{StreamPage, StreamRead, StreamStore};
use bytes::Bytes;
use futures_util::Stream;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::{ErrorResponseRef, RequestId};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

const FIRST_PAUSE: Duration = Duration::from_millis(25);
const LONGEST_PAUSE: Duration = Duration::from_secs(1);
/// Events read at a time.
const PAGE: usize = 256;

/// Which stream is followed, and how.
pub(crate) struct Remote {
    pub(crate) store: Arc<dyn StreamStore>,
    pub(crate) session: String,
    pub(crate) stream: u64,
    pub(crate) window: Duration,
    pub(crate) keep_alive: Duration,
    /// Fires when the session ends.
    pub(crate) ended: CancellationToken,
}

/// Where a follower stands.
struct Follow {
    remote: Remote,
    after: u64,
    position: Option<String>,
    request: Option<String>,
    pending: VecDeque<Bytes>,
    done: bool,
    pause: Duration,
    sent_at: Instant,
    told_at: Option<Instant>,
}

impl Remote {
    /// The first read of the stream after `after`: `None` when the store does not know
    /// the stream (it cannot be resumed here), or could not answer.
    pub(crate) async fn first(&self, after: u64) -> Option<StreamPage> {
        let read = StreamRead {
            session: &self.session,
            stream: self.stream,
            after,
            position: None,
            max: PAGE,
        };
        match self.store.read(read).await {
            Ok(page) if page.known => Some(page),
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(error = %e, "the stream store failed");
                None
            }
        }
    }

    /// The stream as SSE, from the first page on.
    pub(crate) fn follow(
        self,
        after: u64,
        first: StreamPage,
    ) -> impl Stream<Item = Bytes> + Send + 'static {
        let mut f = Follow {
            remote: self,
            after,
            position: None,
            request: None,
            pending: VecDeque::new(),
            done: false,
            pause: FIRST_PAUSE,
            sent_at: Instant::now(),
            told_at: None,
        };
        f.take(first);
        futures_util::stream::unfold(f, |mut f| async move {
            let next = f.next().await?;
            Some((next, f))
        })
    }
}

impl Follow {
    /// Queues what a page brought.
    fn take(&mut self, page: StreamPage) {
        self.position = page.position.or(self.position.take());
        self.request = page.request.or(self.request.take());
        let stream = self.remote.stream;
        for e in &page.events {
            self.pending.push_back(sse(stream, e.seq, &e.data));
            self.after = e.seq;
        }
        self.pause = if page.events.is_empty() {
            (self.pause * 2).min(LONGEST_PAUSE)
        } else {
            FIRST_PAUSE
        };
        if page.ended {
            self.done = true;
        } else if page.abandoned {
            tracing::warn!(
                "a resumed stream's writer stopped without ending it (its replica died)"
            );
            let gone = self.gone();
            self.pending.push_back(sse(stream, self.after + 1, &gone));
            self.done = true;
        }
    }

    /// The error ending a stream whose writer died.
    fn gone(&self) -> Vec<u8> {
        let id = self
            .request
            .as_deref()
            .and_then(|r| serde_json::from_str::<RequestId>(r).ok());
        let error = ErrorObject::internal(
            "The server running this request stopped before answering it; send it again",
        );
        serde_json::to_vec(&ErrorResponseRef {
            id: id.as_ref(),
            error: &error,
        })
        .expect("errors serialize")
    }

    /// The next chunk to send; `None` when the stream is over.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(b) = self.pending.pop_front() {
                self.sent_at = Instant::now();
                return Some(b);
            }
            if self.done || self.remote.ended.is_cancelled() {
                return None;
            }
            self.tell_reading().await;
            let read = StreamRead {
                session: &self.remote.session,
                stream: self.remote.stream,
                after: self.after,
                position: self.position.as_deref(),
                max: PAGE,
            };
            match self.remote.store.read(read).await {
                Ok(page) => self.take(page),
                Err(e) => {
                    tracing::warn!(error = %e, "the stream store failed");
                    self.pause = LONGEST_PAUSE;
                }
            }
            if !self.pending.is_empty() || self.done {
                continue;
            }
            let ping_at = self.sent_at + self.remote.keep_alive;
            let wake = (Instant::now() + self.pause).min(ping_at);
            tokio::select! {
                () = tokio::time::sleep_until(wake) => {}
                () = self.remote.ended.cancelled() => return None,
            }
            if Instant::now() >= ping_at {
                self.sent_at = Instant::now();
                return Some(Bytes::from_static(b": keep-alive\n\n"));
            }
        }
    }

    /// Tells the store a client reads here (every quarter of the window).
    async fn tell_reading(&mut self) {
        let quarter = self.remote.window / 4;
        if self.told_at.is_some_and(|t| t.elapsed() < quarter) {
            return;
        }
        self.told_at = Some(Instant::now());
        let r = &self.remote;
        if let Err(e) = r.store.reading(&r.session, r.stream, r.window).await {
            tracing::warn!(error = %e, "the stream store failed");
        }
    }
}
