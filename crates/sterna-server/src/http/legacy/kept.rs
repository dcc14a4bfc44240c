//! The streams of one session's requests that this process keeps for resumption with
//! `Last-Event-ID`: every running stream, and the ended ones for the resume window — at
//! most `max_ended` of them, the oldest forgotten first, so a client that sends requests
//! as fast as it can holds a bounded number. A new stream costs O(1) amortized: expired
//! and surplus streams are swept when the map has doubled since the last sweep, reached
//! its cap, or a window after the last sweep (a sweep visits n streams after at least n/2
//! insertions), so nothing outlives its window by more than one window or one doubling.
//! What a sweep forgets is dropped two streams per new stream (at most `cap` wait), so that
//! the memory of one stream that ends is reused by the next.

use super::log::StreamLog;
use crate::fast_map::FastMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Below this many streams a session is not swept for their count alone.
const SWEEP_AT_LEAST: usize = 16;

#[derive(Debug)]
pub(crate) struct Kept {
    map: FastMap<u64, Arc<StreamLog>>,
    /// The most ended streams kept; between half of it and all of it after a sweep.
    max_ended: usize,
    /// The size that triggers a sweep: `max_ended` plus the most requests that run.
    cap: usize,
    /// How many streams the last sweep kept, and when it ran.
    swept: (usize, Instant),
    /// Streams a sweep forgot (at most `cap`), dropped two at a time as new streams
    /// come: a sweep that dropped dozens of logs at once would free more memory than the
    /// allocator's per-thread cache takes back, where a log dropped as the next is made
    /// is recycled.
    forgotten: Vec<Arc<StreamLog>>,
    /// How many streams the sweeps have looked at (the cost the tests bound).
    #[cfg(test)]
    visits: usize,
}

impl Kept {
    /// Keeps at most `max_ended` ended streams besides `max_running` running ones.
    pub(crate) fn new(max_ended: usize, max_running: usize) -> Self {
        Self {
            map: FastMap::default(),
            max_ended,
            cap: max_ended.saturating_add(max_running).max(1),
            swept: (0, Instant::now()),
            forgotten: Vec::new(),
            #[cfg(test)]
            visits: 0,
        }
    }

    /// Keeps a new stream; streams ended more than `window` ago are forgotten.
    pub(crate) fn insert(&mut self, id: u64, log: Arc<StreamLog>, window: Duration) {
        self.forgotten.pop();
        self.forgotten.pop();
        let now = Instant::now();
        let (kept, at) = self.swept;
        let len = self.map.len();
        if len >= (2 * kept).max(SWEEP_AT_LEAST) || len >= self.cap || now - at >= window {
            self.sweep(window, now);
        }
        self.map.insert(id, log);
    }

    pub(crate) fn get(&self, id: u64) -> Option<Arc<StreamLog>> {
        self.map.get(&id).cloned()
    }

    pub(crate) fn remove(&mut self, id: u64) {
        self.map.remove(&id);
    }

    /// Every stream, taken out (the session ended).
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = Arc<StreamLog>> + '_ {
        self.map.drain().map(|(_, log)| log)
    }

    /// Forgets the streams ended a `window` before `now`, then the oldest ended ones
    /// beyond `max_ended` (down to half of it): one look at each stream, no clock read.
    fn sweep(&mut self, window: Duration, now: Instant) {
        #[cfg(test)]
        {
            self.visits += self.map.len();
        }
        let mut ended: Vec<(Instant, u64)> = Vec::new();
        let expired = self.map.extract_if(|id, log| match log.ended_at() {
            Some(t) if now.saturating_duration_since(t) >= window => true,
            Some(t) => {
                ended.push((t, *id));
                false
            }
            None => false,
        });
        self.forgotten.extend(expired.map(|(_, log)| log));
        if ended.len() > self.max_ended {
            ended.sort_unstable();
            let forget = ended.len() - self.max_ended / 2;
            for (_, id) in &ended[..forget] {
                self.forgotten.extend(self.map.remove(id));
            }
        }
        // However rarely new streams come, the logs waiting to be dropped stay bounded.
        self.forgotten.truncate(self.cap);
        self.swept = (self.map.len(), now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: Duration = Duration::from_secs(60);

    fn stream(kept: &mut Kept, id: u64, window: Duration) -> Arc<StreamLog> {
        let log = StreamLog::new(id, 16);
        kept.insert(id, log.clone(), window);
        log
    }

    #[tokio::test(start_paused = true)]
    async fn streams_ended_within_the_window_stay_resumable() {
        let mut kept = Kept::new(1000, 32);
        stream(&mut kept, 1, WINDOW).finish(Some(bytes::Bytes::from_static(b"{}")));
        for id in 2..=101 {
            stream(&mut kept, id, WINDOW).finish(None);
        }
        tokio::time::advance(WINDOW / 2).await;
        stream(&mut kept, 102, WINDOW);
        assert!(kept.get(1).is_some(), "ended 30 s ago: resumable");
        assert_eq!(kept.map.len(), 102);
    }

    #[tokio::test(start_paused = true)]
    async fn streams_over_for_a_window_are_forgotten() {
        let mut kept = Kept::new(1000, 32);
        stream(&mut kept, 1, WINDOW).finish(None);
        stream(&mut kept, 2, WINDOW);
        tokio::time::advance(WINDOW).await;
        stream(&mut kept, 3, WINDOW);
        assert!(kept.get(1).is_none(), "ended a window ago");
        assert!(kept.get(2).is_some(), "still running");
        assert_eq!(kept.map.len(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_long_session_costs_o1_per_stream() {
        let mut kept = Kept::new(1000, 32);
        stream(&mut kept, 0, WINDOW);
        let n = 10_000;
        for id in 1..=n {
            stream(&mut kept, id, WINDOW).finish(None);
            tokio::time::advance(Duration::from_secs(1)).await;
            // Within the window: 60 ended streams and the running one; at most twice that
            // before a sweep.
            assert!(
                kept.map.len() <= 2 * 61 + 1,
                "{} streams kept",
                kept.map.len()
            );
        }
        assert!(kept.get(0).is_some());
        // Sweeping at every new stream looked at ~61 streams each time (608,170 here).
        let n = n as usize;
        assert!(
            kept.visits <= 3 * n,
            "{} visits for {n} streams",
            kept.visits
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_fast_client_keeps_a_bounded_number_of_ended_streams() {
        let mut kept = Kept::new(64, 32);
        let running: Vec<_> = (0..32).map(|id| stream(&mut kept, id, WINDOW)).collect();
        let n = 10_000;
        for id in 32..n {
            stream(&mut kept, id, WINDOW).finish(None);
            tokio::time::advance(Duration::from_micros(100)).await;
            assert!(
                kept.map.len() <= 64 + 32 + 1,
                "{} streams kept",
                kept.map.len()
            );
        }
        assert!(
            running.iter().all(|log| kept.get(log.id).is_some()),
            "running: kept"
        );
        assert!(kept.get(n - 1).is_some(), "the latest ended stream is kept");
        assert!(
            kept.get(32).is_none(),
            "the oldest ended stream is forgotten"
        );
        assert!(kept.visits <= 10 * n as usize, "{} visits", kept.visits);
    }

    #[tokio::test(start_paused = true)]
    async fn forgotten_streams_are_dropped_as_new_ones_come_and_never_pile_up() {
        let mut kept = Kept::new(8, 4);
        let first = Arc::downgrade(&stream(&mut kept, 0, WINDOW));
        kept.get(0).expect("kept").finish(None);
        let mut forgotten_at = None;
        for id in 1..1000 {
            stream(&mut kept, id, WINDOW).finish(None);
            assert!(kept.forgotten.len() <= kept.cap, "{}", kept.forgotten.len());
            if forgotten_at.is_none() && kept.get(0).is_none() {
                forgotten_at = Some(id);
            }
        }
        let at = forgotten_at.expect("the oldest stream is forgotten");
        assert!(at < 20, "forgotten at the {at}th stream");
        assert!(first.upgrade().is_none(), "and its log dropped");
        // Nothing new comes for a window: the next stream's sweep forgets every ended one,
        // and the following streams drop them.
        tokio::time::advance(WINDOW).await;
        let weak: Vec<_> = (990..1000)
            .filter_map(|id| kept.get(id))
            .map(|log| Arc::downgrade(&log))
            .collect();
        for id in 1000..1000 + kept.cap as u64 {
            stream(&mut kept, id, WINDOW);
        }
        assert!(weak.iter().all(|w| w.upgrade().is_none()), "all dropped");
    }

    #[tokio::test(start_paused = true)]
    async fn expired_streams_are_swept_once_the_map_doubles() {
        let mut kept = Kept::new(1000, 32);
        for id in 0..16 {
            stream(&mut kept, id, WINDOW).finish(None);
        }
        tokio::time::advance(WINDOW / 2).await;
        // Within the window: nothing expired yet; the count alone triggers sweeps.
        let later: Vec<_> = (16..64).map(|id| stream(&mut kept, id, WINDOW)).collect();
        assert_eq!(kept.map.len(), 64, "nothing expired: all kept");
        tokio::time::advance(WINDOW / 2).await;
        for log in &later {
            log.finish(None);
        }
        tokio::time::advance(Duration::from_secs(1)).await;
        // The first 16 expired a moment ago; the map has doubled since the last sweep.
        stream(&mut kept, 64, WINDOW);
        assert_eq!(kept.map.len(), 49);
    }
}
