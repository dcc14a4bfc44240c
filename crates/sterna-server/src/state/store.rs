//! Stored-state mode: where sealed payloads live when the client carries only a reference.
//!
//! A flow whose answers would make `requestState` large can keep its sealed payload on the
//! server side: the client then carries a 71-character reference (see
//! [`ServerBuilder::state_store`](crate::server::ServerBuilder::state_store)). The store
//! never decides anything: what it returns is opened and checked exactly like an inline
//! state. It must be shared by every replica that can receive the retry: use
//! [`MemoryStateStore`] for one process, a shared store (Redis) for a fleet. Each client
//! (its [`QuotaKey`]) may hold a bounded share of the entries.

use crate::server::QuotaKey;
use crate::server::quota::Expiries;
use futures_util::future::BoxFuture;
use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

/// When a server keeps a flow's sealed payload in its [`StateStore`] instead of in the
/// `requestState` itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StoreStates {
    /// Always inline (the default): the store is only read, for references issued earlier.
    #[default]
    Never,
    /// Every state is stored; the client carries only a reference.
    Always,
    /// States whose inline form would be longer than this many bytes are stored.
    Above(usize),
}

impl StoreStates {
    /// Whether a state of `inline_len` bytes (as the client would see it) is stored.
    pub(crate) fn stores(self, inline_len: usize) -> bool {
        match self {
            Self::Never => false,
            Self::Always => true,
            Self::Above(limit) => inline_len > limit,
        }
    }
}

/// Why a [`StateStore`] could not answer.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The store is full of unexpired entries (fail closed).
    Full,
    /// The client (its [`QuotaKey`]) already holds `limit` unexpired entries, its share
    /// (its flows cannot store another state until one expires; other clients are
    /// unaffected).
    QuotaExceeded {
        /// The store's per-principal limit.
        limit: usize,
    },
    /// The store is unreachable or failed.
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full => f.write_str("state store is full"),
            Self::QuotaExceeded { limit } => {
                write!(f, "this client holds {limit} stored states, its share")
            }
            Self::Unavailable(e) => write!(f, "state store unavailable: {e}"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Full | Self::QuotaExceeded { .. } => None,
            Self::Unavailable(e) => Some(e.as_ref()),
        }
    }
}

/// Keeps sealed state payloads under random ids until they expire.
///
/// Implementations only store bytes: they are sealed and bound before `put`, and opened
/// and checked after `get`.
pub trait StateStore: Send + Sync + fmt::Debug + 'static {
    /// Keeps `sealed` of `owner` under `id` until `expires_at` (Unix seconds). Refused
    /// with [`StoreError::QuotaExceeded`] when `owner` already holds its share of
    /// unexpired entries.
    fn put(
        &self,
        id: [u8; 16],
        owner: &QuotaKey,
        sealed: Vec<u8>,
        expires_at: u64,
    ) -> BoxFuture<'_, Result<(), StoreError>>;

    /// The bytes kept under `id`; `None` when there are none (never stored, expired or
    /// evicted).
    fn get(&self, id: [u8; 16]) -> BoxFuture<'_, Result<Option<Vec<u8>>, StoreError>>;
}

const SHARDS: usize = 16;

struct Shard {
    map: HashMap<[u8; 16], (u64, Vec<u8>)>,
    bytes: usize,
}

/// An in-process [`StateStore`]: bounded in entries and bytes, with expiring entries,
/// and at most [`per_principal`](Self::per_principal) entries for one client. When full
/// of unexpired entries it refuses new ones (the request fails) rather than forget a flow
/// in flight.
pub struct MemoryStateStore {
    shards: Vec<Mutex<Shard>>,
    entries: usize,
    bytes: usize,
    owners: Mutex<Expiries>,
    per_principal: usize,
}

impl fmt::Debug for MemoryStateStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryStateStore")
            .field("max_entries", &(self.entries * SHARDS))
            .field("max_bytes", &(self.bytes * SHARDS))
            .field("per_principal", &self.per_principal)
            .finish()
    }
}

impl Default for MemoryStateStore {
    /// At most 100,000 entries and 256 MiB, 1,000 entries per client.
    fn default() -> Self {
        Self::with_limits(100_000, 256 << 20)
    }
}

impl MemoryStateStore {
    /// How many unexpired entries one client (an authenticated principal, or an
    /// anonymous peer address: see [`QuotaKey`]) may hold (default 1,000). Each round of
    /// a flow that stores its state adds one, which lives for the state TTL.
    pub fn per_principal(mut self, limit: usize) -> Self {
        self.per_principal = limit.max(1);
        self
    }

    /// A store of at most about `max_entries` unexpired entries holding at most about
    /// `max_bytes` in all (1,000 entries per client).
    pub fn with_limits(max_entries: usize, max_bytes: usize) -> Self {
        let shard = || {
            Mutex::new(Shard {
                map: HashMap::new(),
                bytes: 0,
            })
        };
        Self {
            shards: (0..SHARDS).map(|_| shard()).collect(),
            entries: max_entries.div_ceil(SHARDS).max(1),
            bytes: max_bytes.div_ceil(SHARDS).max(1),
            owners: Mutex::default(),
            per_principal: 1000,
        }
    }

    fn shard(&self, id: &[u8; 16]) -> std::sync::MutexGuard<'_, Shard> {
        self.shards[usize::from(id[0]) % SHARDS]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// The owner's share first (counted by expiry, exactly), then the shard's bounds.
    fn put_now(
        &self,
        id: [u8; 16],
        owner: &QuotaKey,
        sealed: Vec<u8>,
        exp: u64,
        now: u64,
    ) -> Result<(), StoreError> {
        let mut owners = self.owners.lock().unwrap_or_else(|p| p.into_inner());
        if !owners.has_room(owner, self.per_principal, now) {
            return Err(StoreError::QuotaExceeded {
                limit: self.per_principal,
            });
        }
        self.put_in_shard(id, sealed, exp, now)?;
        owners.record(owner, exp, now);
        Ok(())
    }

    fn put_in_shard(
        &self,
        id: [u8; 16],
        sealed: Vec<u8>,
        exp: u64,
        now: u64,
    ) -> Result<(), StoreError> {
        let mut s = self.shard(&id);
        let fits = |s: &Shard| s.map.len() < self.entries && s.bytes + sealed.len() <= self.bytes;
        if !fits(&s) {
            s.map.retain(|_, (e, _)| *e >= now);
            s.bytes = s.map.values().map(|(_, b)| b.len()).sum();
            if !fits(&s) {
                return Err(StoreError::Full);
            }
        }
        s.bytes += sealed.len();
        if let Some((_, old)) = s.map.insert(id, (exp, sealed)) {
            s.bytes -= old.len();
        }
        Ok(())
    }

    fn get_now(&self, id: &[u8; 16], now: u64) -> Option<Vec<u8>> {
        let s = self.shard(id);
        s.map
            .get(id)
            .filter(|(exp, _)| *exp >= now)
            .map(|(_, b)| b.clone())
    }
}

impl StateStore for MemoryStateStore {
    fn put(
        &self,
        id: [u8; 16],
        owner: &QuotaKey,
        sealed: Vec<u8>,
        expires_at: u64,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let r = self.put_now(id, owner, sealed, expires_at, super::unix_now());
        Box::pin(std::future::ready(r))
    }

    fn get(&self, id: [u8; 16]) -> BoxFuture<'_, Result<Option<Vec<u8>>, StoreError>> {
        let r = self.get_now(&id, super::unix_now());
        Box::pin(std::future::ready(Ok(r)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_expiring() {
        let s = MemoryStateStore::with_limits(SHARDS, SHARDS * 10);
        let o = QuotaKey::of(&crate::server::Principal::new("o"));
        let id = [1u8; 16];
        s.put_now(id, &o, vec![7; 4], 100, 50).unwrap();
        assert_eq!(s.get_now(&id, 60), Some(vec![7; 4]));
        assert_eq!(s.get_now(&id, 101), None, "expired");
        assert_eq!(s.get_now(&[2u8; 16], 60), None);
        // One entry per shard: a second unexpired one is refused, an expired one makes room.
        let other = [1u8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert!(matches!(
            s.put_now(other, &o, vec![0; 4], 300, 90),
            Err(StoreError::Full)
        ));
        s.put_now(other, &o, vec![0; 4], 300, 150).unwrap();
        // Bytes are bounded too.
        let big = [3u8; 16];
        assert!(matches!(
            s.put_now(big, &o, vec![0; 11], 300, 150),
            Err(StoreError::Full)
        ));
        assert!(StoreStates::Above(10).stores(11));
        assert!(!StoreStates::Above(10).stores(10));
        assert!(StoreStates::Always.stores(0) && !StoreStates::Never.stores(1 << 20));
    }

    #[test]
    fn one_client_exhausting_its_share_leaves_the_others_theirs() {
        use crate::server::Principal;
        let s = MemoryStateStore::with_limits(1000, 1 << 20).per_principal(2);
        let flood = QuotaKey::of(&Principal::new("flood"));
        let calm = QuotaKey::of(&Principal::new("calm"));
        s.put_now([1; 16], &flood, vec![1], 100, 10).unwrap();
        s.put_now([2; 16], &flood, vec![1], 200, 10).unwrap();
        assert!(matches!(
            s.put_now([3; 16], &flood, vec![1], 200, 10),
            Err(StoreError::QuotaExceeded { limit: 2 })
        ));
        s.put_now([4; 16], &calm, vec![1], 200, 10).unwrap();
        // Once one of its entries expired, the client has room again.
        s.put_now([3; 16], &flood, vec![1], 300, 101).unwrap();
        // A refusal for size does not use up the share.
        let tiny = MemoryStateStore::with_limits(SHARDS, SHARDS).per_principal(1);
        assert!(matches!(
            tiny.put_now([5; 16], &calm, vec![0; 2], 300, 10),
            Err(StoreError::Full)
        ));
        tiny.put_now([5; 16], &calm, vec![0; 1], 300, 10).unwrap();
    }
}
