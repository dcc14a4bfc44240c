//! Where the replayable events of 2025-11-25 streams are shared, so that a client whose
//! SSE stream broke resumes it with `Last-Event-ID` on any replica.
//!
//! The replica running a request keeps its stream's events in memory (its own readers
//! follow them there, woken at once); with a [`StreamStore`] configured
//! ([`SessionConfig::streams`](super::SessionConfig::streams)) it also copies them, in
//! order, into the session's event log in the store, once the request is answered as a
//! stream. Another replica asked to resume the stream reads it from there.
//!
//! Without a store (the default) the events stay in the memory of the replica that ran
//! the request, and only it can resume the stream (another one answers `400`).

use crate::fast_map::FastMap;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One event of a stream: its position (from 1) and the JSON-RPC message it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamEvent {
    /// The position in the stream (the part after the `-` of its event id).
    pub seq: u64,
    /// The message (JSON).
    pub data: Bytes,
}

/// Events of one stream to add to its session's log, in order.
#[derive(Debug)]
#[non_exhaustive]
pub struct StreamAppend<'a> {
    /// The session.
    pub session: &'a str,
    /// The stream (the part before the `-` of its event ids; unique in the session).
    pub stream: u64,
    /// The id of the request the stream answers, as JSON: a reader on another replica
    /// ends the stream with an error for it when the writer died.
    pub request: &'a str,
    /// The events, in order. May be empty: the write then records a marker carrying no
    /// event (readers skip it), which makes the stream known, keeps the log alive, and
    /// with `ended` marks the end.
    pub events: &'a [StreamEvent],
    /// The stream ended after the last of `events` (after the last event written
    /// before, when `events` is empty: a stream that ends without a response, such as a
    /// cancelled request's).
    pub ended: bool,
    /// How long the session's log must be kept from now.
    pub keep: Duration,
    /// The most events the session's log may hold; older ones are dropped first
    /// ([`SessionLimits::max_replay_events`](super::SessionLimits::max_replay_events)).
    pub max_events: usize,
}

impl<'a> StreamAppend<'a> {
    /// Events of `stream` of `session`, answering `request` (JSON): not ended, kept 60 s,
    /// in a log of at most 4096 events (set the fields to change them).
    pub fn new(session: &'a str, stream: u64, request: &'a str, events: &'a [StreamEvent]) -> Self {
        Self {
            session,
            stream,
            request,
            events,
            ended: false,
            keep: Duration::from_secs(60),
            max_events: 4096,
        }
    }
}

/// A read of one stream's events.
#[derive(Debug)]
#[non_exhaustive]
pub struct StreamRead<'a> {
    /// The session.
    pub session: &'a str,
    /// The stream.
    pub stream: u64,
    /// Only events after this position.
    pub after: u64,
    /// Where the previous read of this stream stopped ([`StreamPage::position`]); `None`
    /// for the first read.
    pub position: Option<&'a str>,
    /// At most this many events.
    pub max: usize,
}

impl<'a> StreamRead<'a> {
    /// Events of `stream` of `session` after `after`, from `position` on (at most 256).
    pub fn new(session: &'a str, stream: u64, after: u64, position: Option<&'a str>) -> Self {
        Self {
            session,
            stream,
            after,
            position,
            max: 256,
        }
    }
}

/// What a read found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamPage {
    /// The stream's events after the position asked for, in order.
    pub events: Vec<StreamEvent>,
    /// The stream ended with the last of `events`.
    pub ended: bool,
    /// Nothing came, and the stream's writer stopped without ending it (its replica
    /// died): nothing more will come.
    pub abandoned: bool,
    /// The store holds something of this stream (on a first read; `false`: it cannot be
    /// resumed from here).
    pub known: bool,
    /// Where the next read continues (opaque to the SDK).
    pub position: Option<String>,
    /// The id of the request the stream answers (JSON), once known.
    pub request: Option<String>,
}

/// Why a stream store could not answer.
#[derive(Debug)]
#[non_exhaustive]
pub enum StreamStoreError {
    /// The store is unreachable or failed.
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for StreamStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unavailable(e) => write!(f, "stream store unavailable: {e}"),
        }
    }
}

impl std::error::Error for StreamStoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Unavailable(e) => Some(e.as_ref()),
        }
    }
}

/// The shared event logs of 2025-11-25 sessions: one bounded log per session, holding
/// the events of its streams for replay on any replica.
pub trait StreamStore: Send + Sync + fmt::Debug + 'static {
    /// Adds events of a stream to its session's log (in order, after those added
    /// before), dropping the oldest events of the session beyond `max_events`, and
    /// keeps the log for `keep` from now.
    fn append<'a>(&'a self, write: StreamAppend<'a>)
    -> BoxFuture<'a, Result<(), StreamStoreError>>;

    /// The stream's events after `after` (from `position` on, when given).
    fn read<'a>(
        &'a self,
        read: StreamRead<'a>,
    ) -> BoxFuture<'a, Result<StreamPage, StreamStoreError>>;

    /// A client follows the stream on this replica, for `within` from now (the writer
    /// then does not take the client for gone).
    fn reading<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        within: Duration,
    ) -> BoxFuture<'a, Result<(), StreamStoreError>>;

    /// Whether a client follows the stream on some replica.
    fn is_read<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
    ) -> BoxFuture<'a, Result<bool, StreamStoreError>>;
}

struct Entry {
    position: u64,
    stream: u64,
    event: StreamEvent,
    ended: bool,
    request: String,
}

#[derive(Default)]
struct Log {
    entries: VecDeque<Entry>,
    next: u64,
    until: Option<Instant>,
    readers: HashMap<u64, Instant>,
}

/// A [`StreamStore`] in this process's memory: for several endpoints in one process
/// (tests, an in-process fleet). Its writers never die apart from its readers.
#[derive(Default)]
pub struct MemoryStreamStore {
    logs: Mutex<FastMap<String, Log>>,
}

impl fmt::Debug for MemoryStreamStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MemoryStreamStore")
    }
}

impl MemoryStreamStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, FastMap<String, Log>> {
        self.logs.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn append_now(&self, w: &StreamAppend<'_>) {
        let now = Instant::now();
        let mut logs = self.lock();
        logs.retain(|_, l| l.until.is_none_or(|t| t > now));
        let log = logs.entry(w.session.to_owned()).or_default();
        // An end without an event: a marker that carries no event.
        let marker = [StreamEvent {
            seq: 0,
            data: Bytes::new(),
        }];
        let events = if w.events.is_empty() {
            &marker[..]
        } else {
            w.events
        };
        for (i, event) in events.iter().enumerate() {
            log.next += 1;
            let last = w.ended && i + 1 == events.len();
            log.entries.push_back(Entry {
                position: log.next,
                stream: w.stream,
                event: event.clone(),
                ended: last,
                request: w.request.to_owned(),
            });
        }
        while log.entries.len() > w.max_events.max(1) {
            log.entries.pop_front();
        }
        log.until = Some(now + w.keep);
    }

    fn read_now(&self, r: &StreamRead<'_>) -> StreamPage {
        let now = Instant::now();
        let logs = self.lock();
        let mut page = StreamPage::default();
        let Some(log) = logs
            .get(r.session)
            .filter(|l| l.until.is_none_or(|t| t > now))
        else {
            return page;
        };
        let from = r.position.and_then(|p| p.parse::<u64>().ok()).unwrap_or(0);
        let mut position = from;
        for e in log.entries.iter().filter(|e| e.position > from) {
            if page.events.len() >= r.max || page.ended {
                break;
            }
            position = e.position;
            if e.stream != r.stream {
                continue;
            }
            page.known = true;
            page.request = Some(e.request.clone());
            if e.event.seq > r.after && !e.event.data.is_empty() {
                page.events.push(e.event.clone());
            }
            page.ended = e.ended;
        }
        page.known |= r.position.is_some();
        page.position = Some(position.to_string());
        page
    }
}

impl StreamStore for MemoryStreamStore {
    fn append<'a>(
        &'a self,
        write: StreamAppend<'a>,
    ) -> BoxFuture<'a, Result<(), StreamStoreError>> {
        self.append_now(&write);
        Box::pin(std::future::ready(Ok(())))
    }

    fn read<'a>(
        &'a self,
        read: StreamRead<'a>,
    ) -> BoxFuture<'a, Result<StreamPage, StreamStoreError>> {
        Box::pin(std::future::ready(Ok(self.read_now(&read))))
    }

    fn reading<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        within: Duration,
    ) -> BoxFuture<'a, Result<(), StreamStoreError>> {
        if let Some(log) = self.lock().get_mut(session) {
            log.readers.insert(stream, Instant::now() + within);
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn is_read<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
    ) -> BoxFuture<'a, Result<bool, StreamStoreError>> {
        let now = Instant::now();
        let read = self
            .lock()
            .get(session)
            .and_then(|l| l.readers.get(&stream))
            .is_some_and(|t| *t > now);
        Box::pin(std::future::ready(Ok(read)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(seq: u64) -> StreamEvent {
        StreamEvent {
            seq,
            data: Bytes::from(format!("{{\"n\":{seq}}}")),
        }
    }

    fn append(s: &MemoryStreamStore, stream: u64, events: &[StreamEvent], ended: bool, max: usize) {
        s.append_now(&StreamAppend {
            session: "s",
            stream,
            request: "7",
            events,
            ended,
            keep: Duration::from_secs(60),
            max_events: max,
        });
    }

    fn read(s: &MemoryStreamStore, stream: u64, after: u64, position: Option<&str>) -> StreamPage {
        s.read_now(&StreamRead {
            session: "s",
            stream,
            after,
            position,
            max: 100,
        })
    }

    #[test]
    fn a_stream_reads_back_after_a_position_then_continues_where_it_stopped() {
        let s = MemoryStreamStore::default();
        append(&s, 5, &[ev(1), ev(2), ev(3)], false, 100);
        append(&s, 9, &[ev(1)], false, 100);
        let p = read(&s, 5, 1, None);
        assert!(p.known && !p.ended);
        assert_eq!(p.events, vec![ev(2), ev(3)]);
        assert_eq!(p.request.as_deref(), Some("7"));
        append(&s, 5, &[ev(4)], true, 100);
        let next = read(&s, 5, 3, p.position.as_deref());
        assert_eq!(next.events, vec![ev(4)]);
        assert!(next.ended);
        assert!(!read(&s, 77, 0, None).known, "an unknown stream");
    }

    #[test]
    fn a_session_log_is_bounded() {
        let s = MemoryStreamStore::default();
        let many: Vec<StreamEvent> = (1..=10).map(ev).collect();
        append(&s, 1, &many, false, 4);
        let p = read(&s, 1, 0, None);
        assert_eq!(p.events, (7..=10).map(ev).collect::<Vec<_>>());
    }
}
