//! The connections [`HttpServer`](super::HttpServer) is serving, so that a full server
//! makes room: when every slot is taken, the connection quiet the longest (no request in
//! flight for at least a second: an idle keep-alive, a socket that sent nothing, a head
//! never finished) is closed for the new one, as nginx drains its idle keep-alive connections. Connections
//! busy with requests (a stream being read, a call running) keep their slots, so holding
//! a slot costs a client a request in flight, which its other shares bound, instead of an
//! idle socket.

use super::conn::Activity;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How long a connection must have been quiet to be closed for another: a client between
/// two requests, or one whose request is on its way, keeps its connection.
const MIN_QUIET: Duration = Duration::from_secs(1);

/// The connections being served.
#[derive(Debug, Default)]
pub(crate) struct Served {
    conns: Mutex<HashMap<u64, Conn>>,
    next: AtomicU64,
}

#[derive(Debug)]
struct Conn {
    activity: Arc<Activity>,
    /// Cancelled when the connection is asked to make room.
    evict: CancellationToken,
}

/// A connection's place in [`Served`], left when dropped (the connection ended).
#[derive(Debug)]
pub(crate) struct Entry {
    served: Arc<Served>,
    id: u64,
}

impl Served {
    /// Registers a connection; `evict` is cancelled when it should close to make room.
    pub(crate) fn add(
        self: &Arc<Self>,
        activity: Arc<Activity>,
        evict: CancellationToken,
    ) -> (Entry, CancellationToken) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Conn {
            activity,
            evict: evict.clone(),
        };
        self.lock().insert(id, conn);
        let entry = Entry {
            served: self.clone(),
            id,
        };
        (entry, evict)
    }

    /// Asks the connection quiet the longest (at least [`MIN_QUIET`]) to close, unless one
    /// asked before is still quiet and closing (one slot is freed at a time). `false` when
    /// none could be asked: every connection has a request in flight, or was quiet for
    /// less.
    pub(crate) fn make_room(&self) -> bool {
        let conns = self.lock();
        let quiet = |c: &Conn| c.activity.quiet();
        if conns
            .values()
            .any(|c| c.evict.is_cancelled() && quiet(c).is_some())
        {
            return true;
        }
        let now = Instant::now();
        let idlest = conns
            .values()
            .filter(|c| !c.evict.is_cancelled())
            .filter_map(|c| Some((quiet(c)?, c)))
            .filter(|(since, _)| *since + MIN_QUIET <= now)
            .min_by_key(|(since, _): &(Instant, &Conn)| *since);
        match idlest {
            Some((_, c)) => {
                c.evict.cancel();
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Conn>> {
        self.conns.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.served.lock().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_longest_quiet_connection_is_asked_and_busy_ones_never() {
        let served = Arc::new(Served::default());
        let (old, new, busy) = (
            Arc::new(Activity::default()),
            Arc::new(Activity::default()),
            Arc::new(Activity::default()),
        );
        let (_e1, busy_evict) = served.add(busy.clone(), CancellationToken::new());
        let _in_flight = busy.start();
        let (_e2, old_evict) = served.add(old.clone(), CancellationToken::new());
        tokio::time::advance(Duration::from_secs(1)).await;
        drop(new.start());
        let (_e3, new_evict) = served.add(new.clone(), CancellationToken::new());
        // `old` has been quiet for 1.5 s, `new` for 0.5 s.
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(served.make_room());
        assert!(old_evict.is_cancelled(), "quiet for 1.5 s");
        // While it is closing, no second one is asked.
        assert!(served.make_room());
        assert!(!new_evict.is_cancelled());
        drop(_e2);
        assert!(!served.make_room(), "the other was quiet for 0.5 s only");
        assert!(!new_evict.is_cancelled());
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(served.make_room());
        assert!(new_evict.is_cancelled());
        drop(_e3);
        assert!(!served.make_room(), "only a busy connection is left");
        assert!(!busy_evict.is_cancelled());
    }
}
