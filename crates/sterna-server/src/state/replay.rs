//! Single use: at-most-once consumption of a state.
//!
//! Integrity, expiry and binding do not stop a client from sending the same valid state
//! twice. A tool that must not run twice for one answer (a payment, a one-time
//! redemption) marks itself single-use; the server then consumes each state's unique id in
//! a [`ReplayStore`] before the handler runs, and refuses a state seen before.
//!
//! The store must be shared by every replica that can receive the retry: use
//! [`MemoryReplayStore`] for one process, a shared store (Redis) for a fleet.
//!
//! A store must never forget a consumed state before it expires. One that could (a Redis
//! whose `maxmemory-policy` evicts keys; a memory store that dropped entries when full)
//! would let a replay run again, so single use fails closed instead: the call is refused
//! with `-32603` naming the reason ([`ReplayError::Unreliable`], [`ReplayError::Full`]),
//! and [`Server::check_single_use`](crate::Server::check_single_use) says so at startup.

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
            Self::Full | Self::Unreliable(_) => None,
            Self::Unavailable(e) => Some(e.as_ref()),
        }
    }
}

impl ReplayError {
    /// What the client hears (`-32603`): the reason, without the operator's details.
    pub(crate) fn to_client(&self) -> ErrorObject {
        ErrorObject::internal(match self {
            Self::Full => {
                "Single-use call refused: the replay store is full; retry later".to_owned()
            }
            Self::Unreliable(_) => "Single-use call refused: single use cannot be guaranteed \
                 (the replay store may forget consumed states; see the server's log)"
                .to_owned(),
            Self::Unavailable(_) => "Temporarily unavailable: the replay store cannot be \
                 reached; retry the same request later"
                .to_owned(),
        })
    }
}

/// Records which states were consumed.
pub trait ReplayStore: Send + Sync + fmt::Debug + 'static {
    /// Marks `id` consumed until `expires_at` (Unix seconds). Returns `true` the first time,
    /// `false` when it was already consumed. Must be atomic across concurrent callers.
    /// A store that cannot keep the entry until `expires_at` (see
    /// [`check`](Self::check)) answers `Err` rather than `Ok(true)`.
    fn consume(&self, id: [u8; 16], expires_at: u64) -> BoxFuture<'_, Result<bool, ReplayError>>;

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

/// An in-process [`ReplayStore`]: bounded, with expiring entries.
pub struct MemoryReplayStore {
    shards: Vec<Mutex<HashMap<[u8; 16], u64>>>,
    per_shard: usize,
}

impl fmt::Debug for MemoryReplayStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryReplayStore")
            .field("capacity", &(self.per_shard * SHARDS))
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
    /// new states (fail closed) rather than forget unexpired ones.
    pub fn with_capacity(capacity: usize) -> Self {
        let per_shard = capacity.div_ceil(SHARDS).max(1);
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            per_shard,
        }
    }

    fn consume_now(&self, id: [u8; 16], expires_at: u64, now: u64) -> Result<bool, ReplayError> {
        let shard = &self.shards[usize::from(id[0]) % SHARDS];
        let mut map = shard.lock().unwrap_or_else(|p| p.into_inner());
        if map.get(&id).is_some_and(|&exp| exp >= now) {
            return Ok(false);
        }
        if map.len() >= self.per_shard {
            map.retain(|_, exp| *exp >= now);
            if map.len() >= self.per_shard {
                return Err(ReplayError::Full);
            }
        }
        map.insert(id, expires_at);
        Ok(true)
    }
}

pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl ReplayStore for MemoryReplayStore {
    fn consume(&self, id: [u8; 16], expires_at: u64) -> BoxFuture<'_, Result<bool, ReplayError>> {
        let r = self.consume_now(id, expires_at, unix_now());
        Box::pin(std::future::ready(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn once_and_bounded() {
        let s = MemoryReplayStore::with_capacity(SHARDS);
        let id = [3u8; 16];
        assert!(matches!(s.consume_now(id, 100, 50), Ok(true)));
        assert!(matches!(s.consume_now(id, 100, 60), Ok(false)));
        // After expiry the entry no longer counts (the state itself is expired by then).
        assert!(matches!(s.consume_now(id, 200, 101), Ok(true)));
        let other = [3u8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert!(matches!(
            s.consume_now(other, 300, 150),
            Err(ReplayError::Full)
        ));
        assert!(matches!(s.consume_now(other, 300, 250), Ok(true)));
    }
}
