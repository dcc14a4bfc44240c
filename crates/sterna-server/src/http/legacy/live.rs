//! What this process holds for a legacy session while it is used: pushes waiting for
//! answers, the streams of its requests (for replay), requests in flight (bounded), and
//! its budget for publishing to the fleet.

use super::SessionLimits;
use super::bus::SessionBus;
use super::kept::Kept;
use super::log::StreamLog;
use crate::fast_map::FastMap;
use crate::legacy::{Declared, PushWatch, Pushes};
use futures_util::future::BoxFuture;
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

/// Why a request of a session was not started.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Busy {
    /// A request with this id is in flight.
    IdInUse,
    /// The session runs as many requests as it may.
    Full(usize),
}

/// The live parts of one session.
#[derive(Debug)]
pub(crate) struct Live {
    pub(crate) pushes: Arc<Pushes>,
    streams: Mutex<Kept>,
    /// The last stream id: from a random start, so that the streams several replicas
    /// open for one session never share an id (event ids name them in a shared log).
    next_stream: AtomicU64,
    /// How many events each stream keeps for replay.
    keep: usize,
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
    max_in_flight: usize,
    /// What the session may still publish to the fleet (token bucket).
    publish: Mutex<(f64, Instant)>,
    /// The stream of messages unrelated to any request (the GET stream).
    pub(crate) standalone: Mutex<Option<Arc<StreamLog>>>,
    pub(crate) ended: CancellationToken,
    /// The session's declarations as its requests' `_meta`, made once.
    pub(crate) declared: Declared,
}

impl Default for Live {
    fn default() -> Self {
        Self::new(&SessionLimits::default(), Arc::new(Pushes::default()))
    }
}

impl Live {
    fn new(limits: &SessionLimits, pushes: Arc<Pushes>) -> Self {
        Self {
            pushes,
            streams: Mutex::new(Kept::new(limits.max_replay_streams, limits.max_in_flight)),
            next_stream: AtomicU64::new(random_start()),
            keep: limits.max_replay_events,
            in_flight: Mutex::default(),
            max_in_flight: limits.max_in_flight.max(1),
            publish: Mutex::new((f64::from(limits.publish_rate), Instant::now())),
            standalone: Mutex::default(),
            ended: CancellationToken::new(),
            declared: Declared::default(),
        }
    }

    /// Whether the session may still publish to the fleet: its budget refills at `rate`
    /// events a second, up to `rate`.
    pub(crate) fn may_publish(&self, rate: u32) -> bool {
        let rate = f64::from(rate.max(1));
        let mut bucket = lock(&self.publish);
        let now = Instant::now();
        let refill = now.duration_since(bucket.1).as_secs_f64() * rate;
        *bucket = ((bucket.0 + refill).min(rate), now);
        bucket.0 >= 1.0
    }

    /// Takes one event from the session's budget for publishing.
    pub(crate) fn spend_publish(&self) {
        let mut bucket = lock(&self.publish);
        bucket.0 = (bucket.0 - 1.0).max(0.0);
    }

    /// A new stream for a request (never 0, the standalone stream's id). Streams that
    /// ended more than `window` ago are forgotten (see [`Kept`]).
    pub(crate) fn new_stream(&self, window: Duration, cut: CancellationToken) -> Arc<StreamLog> {
        let id = (self.next_stream.fetch_add(1, Ordering::Relaxed) + 1) & MAX_STREAM_ID;
        let id = id.max(1);
        let log = StreamLog::with_cut(id, self.keep, cut);
        lock(&self.streams).insert(id, log.clone(), window);
        log
    }

    pub(crate) fn stream(&self, id: u64) -> Option<Arc<StreamLog>> {
        if id == 0 {
            return lock(&self.standalone).clone();
        }
        lock(&self.streams).get(id)
    }

    pub(crate) fn forget_stream(&self, id: u64) {
        lock(&self.streams).remove(id);
    }

    /// Records a request in flight: refused when its id already is, or when the session
    /// runs as many as it may.
    pub(crate) fn register(&self, id: &RequestId) -> Result<CancellationToken, Busy> {
        let mut map = lock(&self.in_flight);
        if map.contains_key(id) {
            return Err(Busy::IdInUse);
        }
        if map.len() >= self.max_in_flight {
            return Err(Busy::Full(self.max_in_flight));
        }
        // Not a child of `ended` (a child costs a lock of the session's token to make and
        // to drop): `end` cancels what it finds here, and whatever registers after it
        // starts cancelled (both under this map's lock).
        let token = CancellationToken::new();
        if self.ended.is_cancelled() {
            token.cancel();
        }
        map.insert(id.clone(), token.clone());
        Ok(token)
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
        lock(&self.in_flight)
            .values()
            .for_each(CancellationToken::cancel);
        self.pushes.close();
        for log in lock(&self.streams).drain() {
            log.finish(None);
        }
        if let Some(log) = lock(&self.standalone).take() {
            log.finish(None);
        }
    }
}

/// Sets the gauge of live sessions.
fn live_sessions(n: usize) {
    metrics::gauge!(crate::metrics::SESSIONS_LIVE).set(n as f64);
}

/// Stream ids stay below 2^53 (exact in any JSON number).
const MAX_STREAM_ID: u64 = (1 << 53) - 1;

/// A random first stream id (one draw per session and process).
fn random_start() -> u64 {
    let mut b = [0u8; 8];
    crate::state::fill_unique(&mut b);
    u64::from_le_bytes(b) & (MAX_STREAM_ID >> 1)
}

/// Tells the fleet's bus which pushes of a session wait for answers.
#[derive(Debug)]
struct BusWatch {
    bus: Arc<dyn SessionBus>,
    session: String,
}

impl PushWatch for BusWatch {
    fn sent<'a>(&'a self, id: &'a RequestId, within: Duration) -> BoxFuture<'a, ()> {
        self.bus.expect(&self.session, id, within)
    }

    fn ended(&self, id: &RequestId) {
        let (bus, session, id) = (self.bus.clone(), self.session.clone(), id.clone());
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move { bus.settle(&session, &id).await });
        }
    }
}

/// The live sessions of this process, swept of idle ones from time to time.
#[derive(Debug)]
pub(crate) struct Lives {
    map: Mutex<FastMap<String, (Arc<Live>, Instant)>>,
    swept: Mutex<Option<Instant>>,
    limits: SessionLimits,
    bus: Option<Arc<dyn SessionBus>>,
}

impl Lives {
    /// No sessions yet; each will be bounded by `limits`, its pushes told to `bus`.
    pub(crate) fn new(limits: SessionLimits, bus: Option<Arc<dyn SessionBus>>) -> Self {
        Self {
            map: Mutex::default(),
            swept: Mutex::default(),
            limits,
            bus,
        }
    }

    /// The live parts of session `id` (created when this process has none yet), used as
    /// of `now`.
    pub(crate) fn get_at(&self, id: &str, now: Instant) -> Arc<Live> {
        let mut map = lock(&self.map);
        if let Some((live, used)) = map.get_mut(id) {
            *used = now;
            return live.clone();
        }
        let entry = map.entry(id.to_owned()).or_insert_with(|| {
            let watch = self.bus.clone().map(|bus| {
                let session = id.to_owned();
                Arc::new(BusWatch { bus, session }) as Arc<dyn PushWatch>
            });
            let pushes = Pushes::new(self.limits.max_pending_pushes, watch);
            (
                Arc::new(Live::new(&self.limits, Arc::new(pushes))),
                Instant::now(),
            )
        });
        entry.1 = now;
        let live = entry.0.clone();
        live_sessions(map.len());
        live
    }

    /// The live parts of session `id`, if this process holds any.
    pub(crate) fn peek(&self, id: &str) -> Option<Arc<Live>> {
        lock(&self.map).get(id).map(|(live, _)| live.clone())
    }

    /// Ends and forgets session `id`.
    pub(crate) fn remove(&self, id: &str) {
        let mut map = lock(&self.map);
        if let Some((live, _)) = map.remove(id) {
            live.end();
        }
        live_sessions(map.len());
    }

    /// How many sessions this process holds.
    pub(crate) fn len(&self) -> usize {
        lock(&self.map).len()
    }

    /// Ends the sessions unused for `idle` that run nothing (at most every `idle / 2`).
    pub(crate) fn sweep(&self, idle: Duration) {
        self.sweep_at(idle, Instant::now());
    }

    /// [`Lives::sweep`] as of `now`.
    pub(crate) fn sweep_at(&self, idle: Duration, now: Instant) {
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
        live_sessions(map.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ending_a_session_cancels_its_requests_and_any_registered_after() {
        let live = Live::default();
        let running = live.register(&RequestId::Number(1)).unwrap();
        assert!(!running.is_cancelled());
        live.end();
        assert!(running.is_cancelled(), "in flight when the session ended");
        let late = live.register(&RequestId::Number(2)).unwrap();
        assert!(
            late.is_cancelled(),
            "registered after the end: starts cancelled"
        );
    }

    #[test]
    fn a_cancelled_request_is_cancelled_alone() {
        let live = Live::default();
        let one = live.register(&RequestId::Number(1)).unwrap();
        let two = live.register(&RequestId::Number(2)).unwrap();
        assert!(live.cancel(&RequestId::Number(1)));
        assert!(one.is_cancelled() && !two.is_cancelled());
        assert!(!live.cancel(&RequestId::Number(1)), "cancelled once");
    }
}
