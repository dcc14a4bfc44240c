//! Single use: at-most-once consumption of a state.
//!
//! Integrity, expiry and binding do not stop a client from sending the same valid state
//! twice. A tool that must not run twice for one answer (a payment, a one-time
//! redemption) marks itself single-use; the server then consumes each state's unique id in
//! a [`ReplayStore`] before the handler runs, and refuses a state seen before.
//!
//! The store must be shared by every replica that can receive the retry: use
//! [`MemoryReplayStore`] for one process, a shared store (Redis) for a fleet. Each client
//! (its [`QuotaKey`]) may hold a bounded share of the consumed states: one client
//! redeeming states as fast as it can fills its own share, never the whole store.
//!
//! A store must never forget a consumed state before it expires. One that could (a Redis
//! whose `maxmemory-policy` evicts keys; a memory store that dropped entries when full)
//! would let a replay run again, so single use fails closed instead: the call is refused
//! with `-32603` naming the reason ([`ReplayError::Unreliable`], [`ReplayError::Full`]),
//! and [`Server::check_single_use`](crate::Server::check_single_use) says so at startup.

use crate::server::QuotaKey;
use crate::server::quota::Expiries;
use futures_util::future::BoxFuture;
use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};
use sterna_types::error::ErrorObject;

/// Why the store could not answer.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReplayError {
    /// The store is full of unexpired entries (fail closed).
    Full,
    /// The client (its [`QuotaKey`]) already holds `limit` unexpired consumed states, its
    /// share of the store.
    QuotaExceeded {
        /// The share.
        limit: usize,
    },
    /// The store is unreachable or failed.
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
    /// The store cannot promise to keep every consumed state until it expires (why, for
    /// the operator: e.g. Redis's `maxmemory-policy` evicts keys), so no single-use state
    /// is accepted (fail closed).
    Unreliable(String),
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full => f.write_str("replay store is full"),
            Self::QuotaExceeded { limit } => {
                write!(f, "this client holds {limit} consumed states, its share")
            }
            Self::Unavailable(e) => write!(f, "replay store unavailable: {e}"),
            Self::Unreliable(why) => {
                write!(f, "replay store cannot guarantee single use: {why}")
            }
        }
    }
}

impl std::error::Error for ReplayError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Full | Self::QuotaExceeded { .. } | Self::Unreliable(_) => None,
            Self::Unavailable(e) => Some(e.as_ref()),
        }
    }
}

impl ReplayError {
    /// What the client hears (`-32603`): the reason, without the operator's details (a
    /// share names its limit in `data`, as every share does).
    pub(crate) fn to_client(&self) -> ErrorObject {
        let msg = match self {
            Self::QuotaExceeded { limit } => {
                let msg = format!(
                    "Single-use call refused: this client already holds {limit} consumed single-use states, its share of the replay store (its per_principal limit); retry once one has expired"
                );
                let code = sterna_types::error::ErrorCode::INTERNAL_ERROR;
                return crate::server::quota::limit_error(code, msg, "per_principal", *limit);
            }
            Self::Full => "Single-use call refused: the replay store is full; retry later",
            Self::Unreliable(_) => {
                "Single-use call refused: single use cannot be guaranteed (the replay store \
                 may forget consumed states; see the server's log)"
            }
            Self::Unavailable(_) => {
                "Temporarily unavailable: the replay store cannot be reached; retry the same \
                 request later"
            }
        };
        ErrorObject::internal(msg.to_owned())
    }
}

/// Records which states were consumed.
pub trait ReplayStore: Send + Sync + fmt::Debug + 'static {
    /// Marks `id`, a state of `owner`, consumed until `expires_at` (Unix seconds). Returns
    /// `true` the first time, `false` when it was already consumed. Must be atomic across
    /// concurrent callers. A first consumption counts against `owner`'s share: refused
    /// with [`ReplayError::QuotaExceeded`] when `owner` already holds its share of
    /// unexpired entries (a replay is still answered `false`). A store that cannot keep
    /// the entry until `expires_at` (see [`check`](Self::check)) answers `Err` rather than
    /// `Ok(true)`.
    fn consume(
        &self,
        id: [u8; 16],
        owner: &QuotaKey,
        expires_at: u64,
    ) -> BoxFuture<'_, Result<bool, ReplayError>>;

    /// Whether the store can keep every consumed state until it expires:
    /// [`ReplayError::Unreliable`] when it might forget one (then single-use states are
    /// refused), [`ReplayError::Unavailable`] when that cannot be known now. Asked at
    /// startup by [`Server::check_single_use`](crate::Server::check_single_use). The
    /// default answers `Ok` (for stores that never evict).
    fn check(&self) -> BoxFuture<'_, Result<(), ReplayError>> {
        Box::pin(std::future::ready(Ok(())))
    }
}

const SHARDS: usize = 16;

/// An in-process [`ReplayStore`]: bounded, with expiring entries, and at most
/// [`per_principal`](Self::per_principal) entries for one client.
pub struct MemoryReplayStore {
    shards: Vec<Mutex<HashMap<[u8; 16], u64>>>,
    per_shard: usize,
    owners: Mutex<Expiries>,
    per_principal: usize,
}

impl fmt::Debug for MemoryReplayStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryReplayStore")
            .field("capacity", &(self.per_shard * SHARDS))
            .field("per_principal", &self.per_principal)
            .finish()
    }
}

impl Default for MemoryReplayStore {
    fn default() -> Self {
        Self::with_capacity(100_000)
    }
}

impl MemoryReplayStore {
    /// A store holding at most about `capacity` unexpired entries. When full, it refuses
    /// new states (fail closed) rather than forget unexpired ones. One client may hold a
    /// tenth of it, at most 1,000 entries (see [`per_principal`](Self::per_principal)).
    pub fn with_capacity(capacity: usize) -> Self {
        let per_shard = capacity.div_ceil(SHARDS).max(1);
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            per_shard,
            owners: Mutex::default(),
            per_principal: (capacity / 10).clamp(1, DEFAULT_PER_PRINCIPAL),
        }
    }

    /// How many unexpired consumed states one client (an authenticated principal, or an
    /// anonymous peer address: see [`QuotaKey`]) may hold. Each single-use call a client
    /// completes holds one until its state would have expired. Default: a tenth of the
    /// capacity, at most 1,000.
    pub fn per_principal(mut self, limit: usize) -> Self {
        self.per_principal = limit.max(1);
        self
    }

    /// A replay first (it is answered `false` whatever the share), then the owner's
    /// share, then the shard's bound.
    fn consume_now(
        &self,
        id: [u8; 16],
        owner: &QuotaKey,
        expires_at: u64,
        now: u64,
    ) -> Result<bool, ReplayError> {
        let shard = &self.shards[usize::from(id[0]) % SHARDS];
        let mut map = shard.lock().unwrap_or_else(|p| p.into_inner());
        if map.get(&id).is_some_and(|&exp| exp >= now) {
            return Ok(false);
        }
        let mut owners = self.owners.lock().unwrap_or_else(|p| p.into_inner());
        if !owners.has_room(owner, self.per_principal, now) {
            return Err(ReplayError::QuotaExceeded {
                limit: self.per_principal,
            });
        }
        if map.len() >= self.per_shard {
            map.retain(|_, exp| *exp >= now);
            if map.len() >= self.per_shard {
                return Err(ReplayError::Full);
            }
        }
        map.insert(id, expires_at);
        owners.record(owner, expires_at, now);
        Ok(true)
    }
}

/// The most consumed states one client may hold in a [`MemoryReplayStore`] by default.
const DEFAULT_PER_PRINCIPAL: usize = 1_000;

pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl ReplayStore for MemoryReplayStore {
    fn consume(
        &self,
        id: [u8; 16],
        owner: &QuotaKey,
        expires_at: u64,
    ) -> BoxFuture<'_, Result<bool, ReplayError>> {
        let r = self.consume_now(id, owner, expires_at, unix_now());
        Box::pin(std::future::ready(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> QuotaKey {
        QuotaKey::of(&crate::server::Principal::new(s))
    }

    #[test]
    fn once_and_bounded() {
        let s = MemoryReplayStore::with_capacity(SHARDS).per_principal(10);
        let (id, a) = ([3u8; 16], key("a"));
        assert!(matches!(s.consume_now(id, &a, 100, 50), Ok(true)));
        assert!(matches!(s.consume_now(id, &a, 100, 60), Ok(false)));
        // After expiry the entry no longer counts (the state itself is expired by then).
        assert!(matches!(s.consume_now(id, &a, 200, 101), Ok(true)));
        let other = [3u8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert!(matches!(
            s.consume_now(other, &a, 300, 150),
            Err(ReplayError::Full)
        ));
        assert!(matches!(s.consume_now(other, &a, 300, 250), Ok(true)));
    }

    #[test]
    fn one_client_fills_its_share_never_the_store() {
        let s = MemoryReplayStore::with_capacity(1_000).per_principal(3);
        let (a, b) = (key("a"), key("b"));
        for i in 0..3u8 {
            assert!(matches!(s.consume_now([i; 16], &a, 100, 50), Ok(true)));
        }
        let r = s.consume_now([9; 16], &a, 100, 50);
        assert!(
            matches!(r, Err(ReplayError::QuotaExceeded { limit: 3 })),
            "{r:?}"
        );
        // A replay of a state it consumed is still told it is one, share or not.
        assert!(matches!(s.consume_now([1; 16], &a, 100, 60), Ok(false)));
        // Another client is served; the first again once its entries expire.
        assert!(matches!(s.consume_now([9; 16], &b, 100, 50), Ok(true)));
        assert!(matches!(s.consume_now([10; 16], &a, 300, 101), Ok(true)));
        let e = ReplayError::QuotaExceeded { limit: 3 }.to_client();
        assert_eq!(e.data.as_ref().unwrap()["limit"], "per_principal");
        assert_eq!(e.data.as_ref().unwrap()["max"], 3);
    }

    #[test]
    fn the_default_share_is_a_tenth_of_the_store_at_most_1000() {
        let share = |c: usize| MemoryReplayStore::with_capacity(c).per_principal;
        assert_eq!(share(100_000), 1_000);
        assert_eq!(share(640), 64);
        assert_eq!(share(5), 1);
    }
}
