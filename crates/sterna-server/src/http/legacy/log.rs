//! A stream's events, kept for replay: 2025-11-25 lets a client that lost its connection
//! resume a stream with `Last-Event-ID`, so the messages of a legacy request go into a
//! log (bounded) that any number of readers follow in turn.

use super::streams::StreamEvent;
use bytes::Bytes;
use futures_util::Stream;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

struct State {
    /// The most events kept for replay; older ones are dropped.
    keep: usize,
    /// Raw messages (JSON-RPC; empty for none) with their position.
    events: VecDeque<(u64, Bytes)>,
    next: u64,
    done: bool,
    readers: usize,
    /// Since when nobody reads (a client that went away may come back within a window).
    unread_since: Option<tokio::time::Instant>,
    /// When it ended.
    ended_at: Option<tokio::time::Instant>,
}

/// The events of one stream of a session.
pub(crate) struct StreamLog {
    pub(crate) id: u64,
    state: Mutex<State>,
    changed: Notify,
    /// Its last reader went away.
    left: Notify,
    /// The handler closed the connection that opened the stream (SEP-1699 polling): that
    /// reader ends, the stream goes on for a client that resumes it.
    cut: CancellationToken,
}

impl std::fmt::Debug for StreamLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamLog").field("id", &self.id).finish()
    }
}

/// The stream and position a `Last-Event-ID` names.
pub(crate) fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.trim().split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

/// An SSE event with its id: the stream, then the position in it (`3-17`). Its buffer is
/// exactly its length, so `Bytes` takes it as it is.
pub(crate) fn sse(stream: u64, seq: u64, data: &[u8]) -> Bytes {
    let (mut s, mut q) = (itoa::Buffer::new(), itoa::Buffer::new());
    let (s, q) = (s.format(stream).as_bytes(), q.format(seq).as_bytes());
    Bytes::from([b"id: ", s, b"-", q, b"\ndata: ", data, b"\n\n"].concat())
}

/// The first event of a stream: its id (position 0) and the reconnection delay, no data.
pub(crate) fn priming(stream: u64, retry_ms: u128) -> Bytes {
    let (mut s, mut r) = (itoa::Buffer::new(), itoa::Buffer::new());
    let (s, r) = (s.format(stream).as_bytes(), r.format(retry_ms).as_bytes());
    Bytes::from([b"id: ", s, b"-0\nretry: ", r, b"\ndata: \n\n"].concat())
}

impl StreamLog {
    /// A stream keeping at most `keep` events for replay.
    pub(crate) fn new(id: u64, keep: usize) -> Arc<Self> {
        Self::with_cut(id, keep, CancellationToken::new())
    }

    /// A stream whose opening connection `cut` closes (see [`StreamLog::cut`]).
    pub(crate) fn with_cut(id: u64, keep: usize, cut: CancellationToken) -> Arc<Self> {
        Arc::new(Self {
            id,
            state: Mutex::new(State {
                keep: keep.max(1),
                events: VecDeque::new(),
                next: 1,
                done: false,
                readers: 0,
                unread_since: Some(tokio::time::Instant::now()),
                ended_at: None,
            }),
            changed: Notify::new(),
            left: Notify::new(),
            cut,
        })
    }

    /// What closes the connection that opened the stream (not the stream itself).
    pub(crate) fn cut(&self) -> CancellationToken {
        self.cut.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends a message (a JSON-RPC message, or empty for a priming event).
    pub(crate) fn push(&self, data: impl Into<Bytes>) {
        let mut s = self.lock();
        if s.done {
            return;
        }
        let seq = s.next;
        s.next += 1;
        s.events.push_back((seq, data.into()));
        if s.events.len() > s.keep {
            s.events.pop_front();
        }
        drop(s);
        self.changed.notify_waiters();
    }

    /// Ends the stream after `last` (the response), if any.
    pub(crate) fn finish(&self, last: Option<Bytes>) {
        if let Some(last) = last {
            self.push(last);
        }
        {
            let mut s = self.lock();
            s.done = true;
            s.ended_at.get_or_insert_with(tokio::time::Instant::now);
        }
        self.changed.notify_waiters();
    }

    /// When it ended, if it did.
    pub(crate) fn ended_at(&self) -> Option<tokio::time::Instant> {
        self.lock().ended_at
    }

    /// The position of the last message so far (0 when none).
    pub(crate) fn last(&self) -> u64 {
        self.lock().next - 1
    }

    /// How many readers follow it now.
    pub(crate) fn readers(&self) -> usize {
        self.lock().readers
    }

    /// How long nobody has been reading it (`None` while someone is).
    pub(crate) fn unread_for(&self) -> Option<Duration> {
        self.lock().unread_since.map(|t| t.elapsed())
    }

    /// Resolves once nobody has read the stream for `window` (the client is gone, unless
    /// `read_elsewhere` says another replica serves it: then it looks again a quarter
    /// window later). A timer runs only while nobody reads.
    pub(crate) async fn abandoned<F, Fut>(&self, window: Duration, read_elsewhere: F)
    where
        F: Fn() -> Fut,
        Fut: Future<Output = bool>,
    {
        loop {
            let left = self.left.notified();
            tokio::pin!(left);
            left.as_mut().enable();
            match self.unread_for() {
                None => left.await,
                Some(d) if d < window => tokio::time::sleep(window - d).await,
                Some(_) if read_elsewhere().await => {
                    let again = window.max(Duration::from_millis(40)) / 4;
                    tokio::time::sleep(again).await;
                }
                Some(_) => return,
            }
        }
    }

    /// Waits until the stream has a message or has ended; returns the single message
    /// when the stream ended right after it (a request answered without anything
    /// before its response: sent as JSON).
    pub(crate) async fn first(&self) -> Option<Bytes> {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let s = self.lock();
                if s.done {
                    return match (s.events.len(), s.events.front()) {
                        (1, Some((_, raw))) => Some(raw.clone()),
                        _ => None,
                    };
                }
                if !s.events.is_empty() || self.cut.is_cancelled() {
                    return None;
                }
            }
            tokio::select! {
                _ = changed => {}
                _ = self.cut.cancelled() => {}
            }
        }
    }

    /// The events after `cursor` (raw), and whether the stream has ended with them;
    /// waits up to `wait` for one when there are none yet.
    pub(crate) async fn batch_after(
        &self,
        cursor: u64,
        wait: Duration,
    ) -> (Vec<StreamEvent>, bool) {
        let changed = self.changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        let taken = self.take_after(cursor);
        if !taken.0.is_empty() || taken.1 {
            return taken;
        }
        let _ = tokio::time::timeout(wait, changed).await;
        self.take_after(cursor)
    }

    fn take_after(&self, cursor: u64) -> (Vec<StreamEvent>, bool) {
        let s = self.lock();
        let events = s
            .events
            .iter()
            .filter(|(seq, _)| *seq > cursor)
            .map(|(seq, data)| StreamEvent {
                seq: *seq,
                data: data.clone(),
            })
            .collect();
        (events, s.done)
    }

    /// What changes when the log does (an event, its end), for a reader to wait on.
    pub(super) fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.changed.notified()
    }

    /// The first event after `cursor` as SSE, with its position; `Err` when the stream
    /// ended with nothing after it.
    pub(super) fn after(&self, cursor: u64) -> Result<Option<(u64, Bytes)>, ()> {
        let s = self.lock();
        match s.events.iter().find(|(seq, _)| *seq > cursor) {
            Some((seq, raw)) => Ok(Some((*seq, sse(self.id, *seq, raw)))),
            None if s.done => Err(()),
            None => Ok(None),
        }
    }
}

/// Counts a reader while it lives: a client reading the stream, or waiting on the request
/// that opened it for its first event.
pub(crate) struct Reading(Arc<StreamLog>);

impl Reading {
    pub(crate) fn new(log: Arc<StreamLog>) -> Self {
        {
            let mut s = log.lock();
            s.readers += 1;
            s.unread_since = None;
        }
        Self(log)
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        let mut s = self.0.lock();
        s.readers = s.readers.saturating_sub(1);
        if s.readers == 0 {
            s.unread_since = Some(tokio::time::Instant::now());
            drop(s);
            self.0.left.notify_waiters();
        }
    }
}

/// The log's events after `cursor` as SSE, then whatever comes, until the stream ends
/// (or `until` fires: the connection closes, the stream goes on); a comment every
/// `keep_alive` while nothing happens. `lead` goes first (a priming event, a `retry`
/// field).
pub(crate) fn follow(
    reading: Reading,
    cursor: u64,
    lead: Option<Bytes>,
    keep_alive: Duration,
    until: Option<CancellationToken>,
) -> impl Stream<Item = Bytes> + Send + 'static {
    let until = until.unwrap_or_default();
    futures_util::stream::unfold(
        (reading, cursor, lead, until),
        move |(reading, mut cursor, mut lead, until)| async move {
            if let Some(b) = lead.take() {
                return Some((b, (reading, cursor, None, until)));
            }
            let log = reading.0.clone();
            loop {
                let changed = log.changed.notified();
                tokio::pin!(changed);
                changed.as_mut().enable();
                if until.is_cancelled() {
                    return None;
                }
                match log.after(cursor) {
                    Err(()) => return None,
                    Ok(Some((seq, b))) => {
                        cursor = seq;
                        return Some((b, (reading, cursor, None, until)));
                    }
                    Ok(None) => {}
                }
                tokio::select! {
                    _ = changed => {}
                    _ = until.cancelled() => return None,
                    _ = tokio::time::sleep(keep_alive) => {
                        let ping = Bytes::from_static(b": keep-alive\n\n");
                        return Some((ping, (reading, cursor, None, until)));
                    }
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    #[test]
    fn event_ids_name_the_stream_then_the_position() {
        assert_eq!(priming(3, 1000), "id: 3-0\nretry: 1000\ndata: \n\n");
        assert_eq!(
            priming(u64::MAX, 0),
            "id: 18446744073709551615-0\nretry: 0\ndata: \n\n"
        );
        assert_eq!(sse(12, 9, b"{}"), "id: 12-9\ndata: {}\n\n");
    }

    /// An event's buffer is exactly its length (`concat` sizes it from its parts), so
    /// `Bytes` takes it as it is.
    #[test]
    fn frames_fill_their_buffer_exactly() {
        let framed = [&b"id: "[..], b"12-9", b"\ndata: ", b"{}", b"\n\n"].concat();
        assert_eq!(framed, b"id: 12-9\ndata: {}\n\n");
        assert_eq!(framed.len(), framed.capacity());
    }

    #[tokio::test]
    async fn readers_replay_then_follow_until_the_end() {
        let log = StreamLog::new(3, 4096);
        log.push(&b"{\"a\":1}"[..]);
        let reading = Reading::new(log.clone());
        let mut first = Box::pin(follow(reading, 0, None, Duration::from_secs(60), None));
        assert_eq!(first.next().await.unwrap(), "id: 3-1\ndata: {\"a\":1}\n\n");
        log.push(&b"{\"a\":2}"[..]);
        assert_eq!(first.next().await.unwrap(), "id: 3-2\ndata: {\"a\":2}\n\n");
        assert_eq!(log.readers(), 1);
        drop(first);
        assert_eq!(log.readers(), 0);
        log.finish(Some(Bytes::from_static(b"{\"result\":{}}")));
        // A resumed reader gets what came after its last event, then the stream ends.
        let reading = Reading::new(log.clone());
        let resumed: Vec<Bytes> = follow(reading, 1, None, Duration::from_secs(60), None)
            .collect()
            .await;
        assert_eq!(resumed.len(), 2);
        assert!(resumed[1].starts_with(b"id: 3-3\n"));
        assert_eq!(parse_event_id("3-17"), Some((3, 17)));
        assert_eq!(parse_event_id("x"), None);
    }
}
