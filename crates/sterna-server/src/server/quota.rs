//! Fair shares of the bounded stores: whose share an entry counts against (the one place
//! that decides it), and the bookkeeping the in-memory stores use to enforce shares.
//!
//! Every store a client can fill (2025 sessions, task records, stored states) gives each
//! [`QuotaKey`] at most a fixed number of entries, so one client exhausting its share
//! leaves every other client unaffected. The key of an authenticated caller is its
//! principal; the key of an anonymous caller is its network peer (an IPv4 address, or the
//! /64 of an IPv6 address), or one shared key when the transport did not say.

use super::Principal;
use sha2::{Digest, Sha256};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;
use sterna_types::error::{ErrorCode, ErrorObject};

/// Whose share of a bounded store an entry counts against.
///
/// Opaque and fixed-length (a digest, so principal ids and addresses never appear in a
/// store's keys): `p…` for an authenticated principal, `a…` for an anonymous caller at
/// a known peer, `a-unknown` for anonymous callers whose peer the transport did not give
/// (they all share one key).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct QuotaKey(Arc<str>);

/// The key every anonymous caller without a known peer shares.
const UNKNOWN_PEER: &str = "a-unknown";

impl QuotaKey {
    /// The key of `principal`: its id when authenticated, else its peer (see
    /// [`Principal::with_peer`]).
    pub fn of(principal: &Principal) -> Self {
        match (principal.id(), principal.peer()) {
            (Some(id), _) => recent::key_of_id(id, |id| Self::digest('p', id.as_bytes())),
            (None, Some(peer)) => recent::key_of_peer(share(peer), |share| {
                Self::digest('a', peer_share(*share).as_bytes())
            }),
            (None, None) => recent::key_of_unknown(|| Self(Arc::from(UNKNOWN_PEER))),
        }
    }

    fn digest(kind: char, what: &[u8]) -> Self {
        let d = Sha256::new()
            .chain_update(b"sterna quota key\0")
            .chain_update([kind as u8, 0])
            .chain_update(what)
            .finalize();
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut s = String::with_capacity(33);
        s.push(kind);
        for b in &d[..16] {
            s.push(char::from(HEX[usize::from(b >> 4)]));
            s.push(char::from(HEX[usize::from(b & 0xf)]));
        }
        Self(Arc::from(s))
    }

    /// The key as text (safe in a Redis key: `[a-z0-9-]`, at most 33 characters).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The share an anonymous peer gets: its IPv4 address, or the /64 of an IPv6 address (one
/// host usually holds a whole /64). An IPv4-mapped IPv6 address counts as the IPv4 one.
fn share(peer: IpAddr) -> IpAddr {
    match peer.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        v4 => v4,
    }
}

/// A [`share`] as text.
fn peer_share(share: IpAddr) -> String {
    match share {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("{v6}/64"),
    }
}

/// The keys this thread computed lately, so that a client's every request does not hash
/// its id or address again (a key is a pure function of either). At most `MAX` of each,
/// forgotten all at once when full.
mod recent {
    use super::QuotaKey;
    use crate::fast_map::FastMap;
    use std::borrow::Borrow;
    use std::cell::RefCell;
    use std::hash::Hash;
    use std::net::IpAddr;
    use std::sync::Arc;

    pub(super) const MAX: usize = 256;

    #[derive(Default)]
    struct Recent {
        ids: FastMap<Arc<str>, QuotaKey>,
        peers: FastMap<IpAddr, QuotaKey>,
        unknown: Option<QuotaKey>,
    }

    thread_local! {
        static RECENT: RefCell<Recent> = RefCell::default();
    }

    pub(super) fn key_of_id(id: &str, make: impl FnOnce(&str) -> QuotaKey) -> QuotaKey {
        RECENT.with_borrow_mut(|r| remembered(&mut r.ids, id, |id: &str| Arc::from(id), make))
    }

    pub(super) fn key_of_peer(share: IpAddr, make: impl FnOnce(&IpAddr) -> QuotaKey) -> QuotaKey {
        RECENT.with_borrow_mut(|r| remembered(&mut r.peers, &share, |s| *s, make))
    }

    /// The key remembered under `source`, else `make`'s, remembered (the map emptied first
    /// when it holds `MAX`).
    fn remembered<K, Q>(
        map: &mut FastMap<K, QuotaKey>,
        source: &Q,
        own: impl FnOnce(&Q) -> K,
        make: impl FnOnce(&Q) -> QuotaKey,
    ) -> QuotaKey
    where
        K: Borrow<Q> + Hash + Eq,
        Q: Hash + Eq + ?Sized,
    {
        if let Some(k) = map.get(source) {
            return k.clone();
        }
        if map.len() >= MAX {
            map.clear();
        }
        let k = make(source);
        map.insert(own(source), k.clone());
        k
    }

    pub(super) fn key_of_unknown(make: impl FnOnce() -> QuotaKey) -> QuotaKey {
        RECENT.with_borrow_mut(|r| r.unknown.get_or_insert_with(make).clone())
    }
}

impl fmt::Display for QuotaKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for QuotaKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "QuotaKey({})", self.0)
    }
}

/// A refusal because a limit was hit: the message names it for people, `data` for
/// programs (`{"limit": <its name in the configuration>, "max": <its value>}`).
pub(crate) fn limit_error(
    code: ErrorCode,
    message: String,
    limit: &str,
    max: usize,
) -> ErrorObject {
    ErrorObject::new(code, message).with_data(serde_json::json!({ "limit": limit, "max": max }))
}

#[cfg(any(feature = "tasks", all(feature = "http", feature = "legacy")))]
/// Which entries of an in-memory store (sessions, tasks) each key holds. The store keeps
/// it in step with its own map: [`add`](Self::add) on insert, [`remove`](Self::remove)
/// whenever an entry leaves, and [`prune`](Self::prune) a key's expired entries before
/// refusing it.
#[derive(Debug, Default)]
pub(crate) struct Holdings {
    by_key: HashMap<QuotaKey, std::collections::HashSet<String>>,
}

#[cfg(any(feature = "tasks", all(feature = "http", feature = "legacy")))]
impl Holdings {
    /// How many entries `key` holds (expired ones not yet removed included).
    pub(crate) fn count(&self, key: &QuotaKey) -> usize {
        self.by_key
            .get(key)
            .map_or(0, std::collections::HashSet::len)
    }

    /// The entries of `key` that `live` says are gone: forgotten here, returned so the
    /// store removes them too.
    pub(crate) fn prune(&mut self, key: &QuotaKey, live: impl Fn(&str) -> bool) -> Vec<String> {
        let Some(ids) = self.by_key.get_mut(key) else {
            return Vec::new();
        };
        let dead: Vec<String> = ids.iter().filter(|id| !live(id)).cloned().collect();
        for id in &dead {
            ids.remove(id);
        }
        if ids.is_empty() {
            self.by_key.remove(key);
        }
        dead
    }

    pub(crate) fn add(&mut self, key: &QuotaKey, id: &str) {
        self.by_key
            .entry(key.clone())
            .or_default()
            .insert(id.to_owned());
    }

    pub(crate) fn remove(&mut self, key: &QuotaKey, id: &str) {
        if let Some(ids) = self.by_key.get_mut(key) {
            ids.remove(id);
            if ids.is_empty() {
                self.by_key.remove(key);
            }
        }
    }
}

/// When each key's entries of an in-memory store expire, for entries whose expiry never
/// moves (stored states): a key's count is exact without looking at the entries.
#[derive(Debug, Default)]
pub(crate) struct Expiries {
    by_key: HashMap<QuotaKey, BinaryHeap<Reverse<u64>>>,
    swept: u64,
}

impl Expiries {
    /// Whether `key` holds fewer than `limit` entries unexpired at `now`.
    pub(crate) fn has_room(&mut self, key: &QuotaKey, limit: usize, now: u64) -> bool {
        let Some(heap) = self.by_key.get_mut(key) else {
            return limit > 0;
        };
        while heap.peek().is_some_and(|Reverse(exp)| *exp < now) {
            heap.pop();
        }
        heap.len() < limit
    }

    /// Records an entry of `key` expiring at `exp`. Keys whose entries all expired are
    /// forgotten (at most once a second).
    pub(crate) fn record(&mut self, key: &QuotaKey, exp: u64, now: u64) {
        self.by_key
            .entry(key.clone())
            .or_default()
            .push(Reverse(exp));
        if now != self.swept {
            self.swept = now;
            self.by_key.retain(|_, heap| {
                while heap.peek().is_some_and(|Reverse(e)| *e < now) {
                    heap.pop();
                }
                !heap.is_empty()
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_principal_then_the_peer() {
        let v4: IpAddr = "203.0.113.7".parse().unwrap();
        let mapped: IpAddr = "::ffff:203.0.113.7".parse().unwrap();
        let alice = QuotaKey::of(&Principal::new("alice"));
        assert_eq!(alice, QuotaKey::of(&Principal::new("alice").with_peer(v4)));
        assert_ne!(alice, QuotaKey::of(&Principal::new("bob")));
        let anon = QuotaKey::of(&Principal::anonymous().with_peer(v4));
        assert_eq!(
            anon,
            QuotaKey::of(&Principal::anonymous().with_peer(mapped))
        );
        assert_ne!(anon, alice);
        let other: IpAddr = "203.0.113.8".parse().unwrap();
        assert_ne!(anon, QuotaKey::of(&Principal::anonymous().with_peer(other)));
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        let key = |ip| QuotaKey::of(&Principal::anonymous().with_peer(ip));
        assert_eq!(key(a), key(b), "one /64, one share");
        assert_ne!(key(a), key(c));
        assert_eq!(QuotaKey::of(&Principal::anonymous()).as_str(), "a-unknown");
        assert_eq!(alice.as_str().len(), 33);
        assert!(alice.as_str().starts_with('p') && anon.as_str().starts_with('a'));
        // A principal id that looks like an address is still a principal.
        assert_ne!(
            QuotaKey::of(&Principal::new("203.0.113.7")),
            anon,
            "kinds are separated"
        );
    }

    #[test]
    fn keys_are_stable_across_versions() {
        // Stores shared by a fleet (Redis) hold these keys: every replica, whatever its
        // version, must derive the same key for the same client.
        let alice = QuotaKey::of(&Principal::new("alice"));
        assert_eq!(alice.as_str(), "pa6d478b96a53957aa6681d2a862359c3");
        let peer: IpAddr = "127.0.0.2".parse().unwrap();
        let anon = QuotaKey::of(&Principal::anonymous().with_peer(peer));
        assert_eq!(anon.as_str(), "a6b7a6aac11690714d2303d7cd4e158c4");
    }

    #[test]
    fn remembered_keys_are_the_keys_computed_afresh() {
        // More ids and peers than a thread remembers, twice: the second pass reads some
        // keys back and computes the others again.
        for _ in 0..2 {
            for i in 0..(2 * recent::MAX as u32 + 7) {
                let id = format!("client-{i}");
                let by_id = QuotaKey::of(&Principal::new(id.as_str()));
                assert_eq!(by_id, QuotaKey::digest('p', id.as_bytes()));
                let ip = IpAddr::from(i.to_be_bytes());
                let by_peer = QuotaKey::of(&Principal::anonymous().with_peer(ip));
                assert_eq!(by_peer, QuotaKey::digest('a', ip.to_string().as_bytes()));
            }
        }
    }

    #[test]
    fn expiries_count_unexpired_entries_only() {
        let mut e = Expiries::default();
        let k = QuotaKey::of(&Principal::new("k"));
        assert!(e.has_room(&k, 2, 10));
        e.record(&k, 20, 10);
        e.record(&k, 30, 10);
        assert!(!e.has_room(&k, 2, 15));
        assert!(e.has_room(&k, 2, 21), "the first expired");
        assert!(!e.has_room(&k, 0, 0));
        e.record(&QuotaKey::of(&Principal::new("other")), 50, 40);
        assert!(
            e.by_key.len() == 1,
            "keys whose entries all expired are swept"
        );
    }

    #[cfg(any(feature = "tasks", all(feature = "http", feature = "legacy")))]
    #[test]
    fn holdings_prune_what_is_gone() {
        let mut h = Holdings::default();
        let k = QuotaKey::of(&Principal::new("k"));
        h.add(&k, "a");
        h.add(&k, "b");
        assert_eq!(h.count(&k), 2);
        assert_eq!(h.prune(&k, |id| id == "a"), vec!["b".to_owned()]);
        assert_eq!(h.count(&k), 1);
        h.remove(&k, "a");
        assert_eq!(h.count(&k), 0);
        assert!(h.by_key.is_empty());
    }
}
