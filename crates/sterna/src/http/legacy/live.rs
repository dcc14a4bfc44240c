//! What this process holds for a legacy session while it is used: pushes waiting for
//! answers, the streams of its requests (for replay), requests in flight.

use super::log::StreamLog;
use crate::server::legacy::Pushes;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use sterna_types::jsonrpc::RequestId;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The live parts of one session.
#[derive(Debug, Default)]
pub(crate) struct Live {
    pub(crate) pushes: Arc<Pushes>,
    streams: Mutex<HashMap<u64, Arc<StreamLog>>>,
    next_stream: AtomicU64,
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
    /// The stream of messages unrelated to any request (the GET stream).
    pub(crate) standalone: Mutex<Option<Arc<StreamLog>>>,
    pub(crate) ended: CancellationToken,
}

impl Live {
    /// A new stream for a request (ids start at 1; 0 is the standalone stream). Streams
    /// that ended more than `window` ago are forgotten.
    pub(crate) fn new_stream(&self, window: Duration) -> Arc<StreamLog> {
        let id = self.next_stream.fetch_add(1, Ordering::Relaxed) + 1;
        let log = StreamLog::new(id);
        let mut streams = lock(&self.streams);
        streams.retain(|_, l| !l.expired(window));
        streams.insert(id, log.clone());
        log
    }

    pub(crate) fn stream(&self, id: u64) -> Option<Arc<StreamLog>> {
        if id == 0 {
            return lock(&self.standalone).clone();
        }
        lock(&self.streams).get(&id).cloned()
    }

    pub(crate) fn forget_stream(&self, id: u64) {
        lock(&self.streams).remove(&id);
    }

    /// Records a request in flight; `None` when its id already is.
    pub(crate) fn register(&self, id: &RequestId) -> Option<CancellationToken> {
        let mut map = lock(&self.in_flight);
        if map.contains_key(id) {
            return None;
        }
        let token = self.ended.child_token();
        map.insert(id.clone(), token.clone());
        Some(token)
    }

    pub(crate) fn release(&self, id: &RequestId) {
        lock(&self.in_flight).remove(id);
    }

    /// `notifications/cancelled` for `id`; `false` when it does not run here.
    pub(crate) fn cancel(&self, id: &RequestId) -> bool {
        let token = lock(&self.in_flight).remove(id);
        token.map(|t| t.cancel()).is_some()
    }

    /// How many requests run.
    pub(crate) fn running(&self) -> usize {
        lock(&self.in_flight).len()
    }

    /// The session ended: every request stops, every push fails, streams end.
    pub(crate) fn end(&self) {
        self.ended.cancel();
        self.pushes.close();
        for log in lock(&self.streams).drain().map(|(_, l)| l) {
            log.finish(None);
        }
        if let Some(log) = lock(&self.standalone).take() {
            log.finish(None);
        }
    }
}

/// The live sessions of this process, swept of idle ones from time to time.
#[derive(Debug, Default)]
pub(crate) struct Lives {
    map: Mutex<HashMap<String, (Arc<Live>, Instant)>>,
    swept: Mutex<Option<Instant>>,
}

impl Lives {
    /// The live parts of session `id`, created when this process has none yet.
    pub(crate) fn get(&self, id: &str) -> Arc<Live> {
        let mut map = lock(&self.map);
        let entry = map
            .entry(id.to_owned())
            .or_insert_with(|| (Arc::default(), Instant::now()));
        entry.1 = Instant::now();
        entry.0.clone()
    }

    /// The live parts of session `id`, if this process holds any.
    pub(crate) fn peek(&self, id: &str) -> Option<Arc<Live>> {
        lock(&self.map).get(id).map(|(live, _)| live.clone())
    }

    /// Ends and forgets session `id`.
    pub(crate) fn remove(&self, id: &str) {
        if let Some((live, _)) = lock(&self.map).remove(id) {
            live.end();
        }
    }

    /// How many sessions this process holds.
    pub(crate) fn len(&self) -> usize {
        lock(&self.map).len()
    }

    /// Ends the sessions unused for `idle` that run nothing (at most every `idle / 2`).
    pub(crate) fn sweep(&self, idle: Duration) {
        let now = Instant::now();
        {
            let mut swept = lock(&self.swept);
            if swept.is_some_and(|t| now.duration_since(t) < idle / 2) {
                return;
            }
            *swept = Some(now);
        }
        let mut map = lock(&self.map);
        map.retain(|_, (live, used)| {
            let keep = now.duration_since(*used) < idle || live.running() > 0;
            if !keep {
                live.end();
            }
            keep
        });
        map.shrink_to_fit();
    }
}
