//! Each client's share of what it holds open: `subscriptions/listen` streams (a stream
//! holds its connection and a place in the broadcast of changes for as long as the
//! client keeps it) and, over HTTP, requests in flight (each holds a connection or an
//! HTTP/2 stream, and a task). One client holds at most a fixed number at once (per
//! process), so one client opening them without end leaves every other client served.

use super::QuotaKey;
use super::quota::limit_error;
use crate::fast_map::FastMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use sterna_types::error::{ErrorCode, ErrorObject};

/// How many `subscriptions/listen` streams one client (an authenticated principal, or an
/// anonymous peer address: see [`QuotaKey`]) may hold open at once by default (see
/// [`ServerBuilder::listens_per_principal`](super::ServerBuilder::listens_per_principal)).
pub const DEFAULT_LISTENS_PER_PRINCIPAL: usize = 16;

/// What a share counts, as its refusal names it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Share {
    /// The setting that sets the share (`data.limit` of the refusal).
    pub(crate) setting: &'static str,
    /// What is counted, plural ("subscriptions/listen streams").
    pub(crate) what: &'static str,
    /// What the client can do about it.
    pub(crate) remedy: &'static str,
}

/// The share of open `subscriptions/listen` streams.
pub(crate) const LISTENS: Share = Share {
    setting: "listens_per_principal",
    what: "subscriptions/listen streams",
    remedy: "end one before opening another",
};

/// What each client holds of one kind: a counter per client, found by one lookup when a
/// place is taken and given back by an atomic decrement (no lock, no lookup).
#[derive(Debug)]
pub(crate) struct Places {
    limit: usize,
    share: Share,
    open: Mutex<Counters>,
}

#[derive(Debug, Default)]
struct Counters {
    by_key: FastMap<QuotaKey, Arc<AtomicUsize>>,
    /// The size at which counters no place holds any more are swept: twice what the last
    /// sweep kept (at least [`SWEEP_AT_LEAST`]), so a sweep costs O(1) per taken place.
    sweep_at: usize,
}

/// Below this many counters none are swept.
const SWEEP_AT_LEAST: usize = 64;

/// A place taken by one stream or request; given back when dropped (it ended, or its
/// client went away).
#[derive(Debug)]
pub(crate) struct Place {
    held: Arc<AtomicUsize>,
}

impl Places {
    pub(crate) fn new(limit: usize, share: Share) -> Arc<Self> {
        Arc::new(Self {
            limit: limit.max(1),
            share,
            open: Mutex::default(),
        })
    }

    /// A place for one more of `key`, or the refusal (`-32603`) that names the limit.
    pub(crate) fn take(&self, key: QuotaKey) -> Result<Place, ErrorObject> {
        let held = self.counter(key);
        let limit = self.limit;
        let taken = held.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < limit).then_some(n + 1)
        });
        match taken {
            Ok(_) => Ok(Place { held }),
            Err(_) => Err(self.refusal()),
        }
    }

    /// The counter of `key` (swept counters of clients that hold nothing first, when
    /// there are many).
    fn counter(&self, key: QuotaKey) -> Arc<AtomicUsize> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let Counters { by_key, sweep_at } = &mut *open;
        if by_key.len() >= (*sweep_at).max(SWEEP_AT_LEAST) {
            // Only the map holds it, and it counts nothing: no place can come back to it.
            by_key.retain(|_, held| Arc::strong_count(held) > 1);
            *sweep_at = 2 * by_key.len();
        }
        by_key.entry(key).or_default().clone()
    }

    /// The refusal (`-32603`) that names the limit.
    pub(crate) fn refusal(&self) -> ErrorObject {
        let Share {
            setting,
            what,
            remedy,
        } = self.share;
        let msg = format!(
            "Too many {what}: this client already holds {}, its share of the server ({setting}); {remedy}",
            self.limit
        );
        limit_error(ErrorCode::INTERNAL_ERROR, msg, setting, self.limit)
    }

    #[cfg(test)]
    fn held(&self, key: &QuotaKey) -> usize {
        let open = self.open.lock().unwrap();
        open.by_key
            .get(key)
            .map_or(0, |h| h.load(Ordering::Acquire))
    }

    #[cfg(test)]
    fn counters(&self) -> usize {
        self.open.lock().unwrap().by_key.len()
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.held.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::Principal;

    #[test]
    fn a_client_holds_at_most_its_share_and_gets_places_back() {
        let l = Places::new(2, LISTENS);
        let (a, b) = (
            QuotaKey::of(&Principal::new("a")),
            QuotaKey::of(&Principal::new("b")),
        );
        let one = l.take(a.clone()).unwrap();
        let _two = l.take(a.clone()).unwrap();
        let refused = l.take(a.clone()).unwrap_err();
        assert_eq!(
            refused.data.as_ref().unwrap()["limit"],
            "listens_per_principal"
        );
        let _other = l.take(b.clone()).expect("another client is unaffected");
        drop(one);
        let _three = l
            .take(a.clone())
            .expect("a place given back is taken again");
        drop((_two, _three, _other));
        assert_eq!(l.held(&a), 0);
    }

    #[test]
    fn counters_of_clients_that_hold_nothing_are_swept() {
        let l = Places::new(1, LISTENS);
        let key = |i: usize| QuotaKey::of(&Principal::new(format!("client-{i}")));
        let kept = l.take(key(0)).unwrap();
        for i in 1..10_000 {
            drop(l.take(key(i)).unwrap());
            assert!(
                l.counters() <= 2 * SWEEP_AT_LEAST,
                "{} counters",
                l.counters()
            );
        }
        assert_eq!(l.held(&key(0)), 1, "a held place survives every sweep");
        assert!(l.take(key(0)).is_err(), "and still counts");
        drop(kept);
        assert!(l.take(key(0)).is_ok());
    }
}
