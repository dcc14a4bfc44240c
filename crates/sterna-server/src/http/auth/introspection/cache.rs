//! The cache of introspection answers: bounded, with grants and refusals kept apart.
//!
//! Anyone can make the resource server introspect (and cache a refusal for) as many
//! made-up tokens as they like; only the authorization server can make grants. So refusals
//! live in a pool of their own: a flood of random tokens only pushes out other refusals,
//! never the grants of real users. When a pool is full, the entry that expires first
//! makes room (an expired one when there is one; with a single TTL, the oldest), in
//! `O(log n)` per insert.

use super::super::error::TokenRejection;
use crate::server::AccessGrant;
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// A SHA-256 of the token (the token itself is never kept).
pub(super) type Key = [u8; 32];

/// Grants and refusals, each pool bounded.
pub(super) struct AnswerCache {
    grants: Pool<AccessGrant>,
    refusals: Pool<TokenRejection>,
}

impl AnswerCache {
    /// At most `grants` grants and `refusals` refusals.
    pub(super) fn new(grants: usize, refusals: usize) -> Self {
        Self {
            grants: Pool::new(grants),
            refusals: Pool::new(refusals),
        }
    }

    /// The answer for `key`, unless it is missing or expired at `now`.
    pub(super) fn get(
        &mut self,
        key: &Key,
        now: Instant,
    ) -> Option<Result<AccessGrant, TokenRejection>> {
        if let Some(grant) = self.grants.get(key, now) {
            return Some(Ok(grant));
        }
        self.refusals.get(key, now).map(Err)
    }

    /// Keeps `answer` for `key` until `until`.
    pub(super) fn insert(
        &mut self,
        key: Key,
        answer: Result<AccessGrant, TokenRejection>,
        until: Instant,
    ) {
        match answer {
            Ok(grant) => {
                self.refusals.remove(&key);
                self.grants.insert(key, grant, until);
            }
            Err(refusal) => {
                self.grants.remove(&key);
                self.refusals.insert(key, refusal, until);
            }
        }
    }
}

/// A bounded map whose entries expire, indexed by expiry for eviction.
struct Pool<T> {
    capacity: usize,
    entries: HashMap<Key, Entry<T>>,
    /// Every entry by `(until, seq)`: the first one is the next to go.
    by_expiry: BTreeMap<(Instant, u64), Key>,
    next_seq: u64,
}

struct Entry<T> {
    value: T,
    until: Instant,
    seq: u64,
}

impl<T: Clone> Pool<T> {
    fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            entries: HashMap::new(),
            by_expiry: BTreeMap::new(),
            next_seq: 0,
        }
    }

    fn get(&mut self, key: &Key, now: Instant) -> Option<T> {
        let entry = self.entries.get(key)?;
        if now < entry.until {
            return Some(entry.value.clone());
        }
        self.remove(key);
        None
    }

    fn remove(&mut self, key: &Key) {
        if let Some(e) = self.entries.remove(key) {
            self.by_expiry.remove(&(e.until, e.seq));
        }
    }

    fn insert(&mut self, key: Key, value: T, until: Instant) {
        self.remove(&key);
        if self.entries.len() >= self.capacity
            && let Some((_, first)) = self.by_expiry.pop_first()
        {
            self.entries.remove(&first);
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.by_expiry.insert((until, seq), key);
        self.entries.insert(key, Entry { value, until, seq });
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        debug_assert_eq!(self.entries.len(), self.by_expiry.len());
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn key(n: u32) -> Key {
        let mut k = [0u8; 32];
        k[..4].copy_from_slice(&n.to_be_bytes());
        k
    }

    #[test]
    fn a_full_pool_drops_the_entry_that_expires_first() {
        let now = Instant::now();
        let s = Duration::from_secs(1);
        let mut pool = Pool::new(3);
        pool.insert(key(1), "long", now + 100 * s);
        pool.insert(key(2), "expired", now - s);
        pool.insert(key(3), "short", now + 10 * s);
        pool.insert(key(4), "new", now + 50 * s);
        assert_eq!(pool.len(), 3);
        assert_eq!(pool.get(&key(2), now), None, "the expired one went first");
        pool.insert(key(5), "newer", now + 60 * s);
        assert_eq!(pool.len(), 3);
        assert_eq!(
            pool.get(&key(3), now),
            None,
            "then the one closest to expiry"
        );
        for (k, v) in [(1, "long"), (4, "new"), (5, "newer")] {
            assert_eq!(pool.get(&key(k), now), Some(v));
        }
        // Replacing an entry does not grow the pool.
        pool.insert(key(1), "again", now + 100 * s);
        assert_eq!((pool.len(), pool.get(&key(1), now)), (3, Some("again")));
        // An expired entry is dropped when read.
        assert_eq!(pool.get(&key(4), now + 55 * s), None);
        assert_eq!(pool.len(), 2);
    }

    #[test]
    fn refusals_never_push_out_grants() {
        let now = Instant::now();
        let until = now + Duration::from_secs(60);
        let mut cache = AnswerCache::new(4, 4);
        let grant = AccessGrant::new("https://as", "alice");
        cache.insert(key(0), Ok(grant), until);
        for n in 1..1000 {
            cache.insert(key(n), Err(TokenRejection::Unknown), until);
        }
        assert_eq!(cache.refusals.len(), 4);
        assert!(matches!(cache.get(&key(0), now), Some(Ok(g)) if g.subject() == "alice"));
        assert!(matches!(
            cache.get(&key(999), now),
            Some(Err(TokenRejection::Unknown))
        ));
        // A token refused earlier and granted now is only a grant.
        cache.insert(key(999), Ok(AccessGrant::new("https://as", "bob")), until);
        assert!(matches!(cache.get(&key(999), now), Some(Ok(_))));
        assert_eq!(cache.refusals.len(), 3);
    }
}
