//! The DPoP replay cache (RFC 9449 §11.1): each proof's `jti` is accepted once while its
//! `iat` is within the window. The trait, with a bounded in-memory implementation for one
//! process; `sterna-redis` has one shared by a fleet.

use futures_util::future::BoxFuture;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

/// One use of a DPoP proof: whose (the principal), which (its `jti`), and until when it
/// must be remembered (Unix seconds: the end of the window its `iat` allows). Both names
/// are kept as 128-bit SHA-256 prefixes, so entries have a fixed size whatever the client
/// sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProofUse {
    owner: [u8; 16],
    jti: [u8; 16],
    expires_at: u64,
}

fn digest(s: &str) -> [u8; 16] {
    let full = Sha256::digest(s.as_bytes());
    let mut out = [0; 16];
    out.copy_from_slice(&full[..16]);
    out
}

impl ProofUse {
    /// The use of proof `jti` by `owner` (a principal id), remembered until `expires_at`.
    pub fn new(owner: &str, jti: &str, expires_at: u64) -> Self {
        Self {
            owner: digest(owner),
            jti: digest(jti),
            expires_at,
        }
    }

    /// Whose proof it is (a digest of the principal id).
    pub fn owner(&self) -> [u8; 16] {
        self.owner
    }

    /// Which proof it is (a digest of its `jti`).
    pub fn jti(&self) -> [u8; 16] {
        self.jti
    }

    /// Until when it must be remembered (Unix seconds).
    pub fn expires_at(&self) -> u64 {
        self.expires_at
    }
}

/// Why a proof cache could not record a use.
#[derive(Debug)]
#[non_exhaustive]
pub enum ProofCacheError {
    /// The principal already holds `limit` proofs within the window: its share of the
    /// cache (429; other principals go on).
    QuotaExceeded {
        /// The per-principal limit.
        limit: usize,
    },
    /// The cache is full (503).
    Full,
    /// The cache cannot be reached (503): a proof is never accepted because it blinked.
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for ProofCacheError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::QuotaExceeded { limit } => {
                write!(f, "this principal used {limit} proofs within the window")
            }
            Self::Full => f.write_str("the proof cache is full"),
            Self::Unavailable(e) => write!(f, "the proof cache is unavailable: {e}"),
        }
    }
}

impl std::error::Error for ProofCacheError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Unavailable(e) => Some(&**e),
            _ => None,
        }
    }
}

/// Where the `jti` of accepted DPoP proofs are remembered. Every replica that can receive
/// a request must share it, else a proof replayed to another replica passes.
pub trait ProofReplayCache: Send + Sync + 'static {
    /// Records `proof`: `Ok(true)` the first time, `Ok(false)` when its owner used it
    /// before (a replay). Atomic: of concurrent uses of one proof, one gets `true`.
    fn first_use(&self, proof: ProofUse) -> BoxFuture<'_, Result<bool, ProofCacheError>>;
}

/// A [`ProofReplayCache`] in this process's memory: at most
/// [`per_principal`](Self::per_principal) proofs per principal (default 4,096) and
/// [`capacity`](Self::capacity) in all (default 262,144, about 15 MB), each kept until
/// its window ends. Fine for one replica; a fleet needs a shared one (`sterna-redis`).
pub struct MemoryProofCache {
    per_principal: usize,
    capacity: usize,
    inner: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    by_owner: HashMap<[u8; 16], HashMap<[u8; 16], u64>>,
    total: usize,
    /// When the whole cache was last swept (at most once a second, so a cache full of
    /// live entries does not cost a sweep per request).
    swept_at: u64,
}

impl Entries {
    /// Drops the expired uses of `owner`.
    fn prune(&mut self, owner: &[u8; 16], now: u64) {
        if let Some(uses) = self.by_owner.get_mut(owner) {
            let before = uses.len();
            uses.retain(|_, until| *until > now);
            self.total -= before - uses.len();
            if uses.is_empty() {
                self.by_owner.remove(owner);
            }
        }
    }

    /// Drops every expired use, unless that was done this second.
    fn sweep(&mut self, now: u64) {
        if self.swept_at == now {
            return;
        }
        self.swept_at = now;
        let owners: Vec<[u8; 16]> = self.by_owner.keys().copied().collect();
        for owner in owners {
            self.prune(&owner, now);
        }
    }
}

impl fmt::Debug for MemoryProofCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryProofCache")
            .field("per_principal", &self.per_principal)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl Default for MemoryProofCache {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryProofCache {
    /// An empty cache with the default bounds.
    pub fn new() -> Self {
        Self {
            per_principal: 4096,
            capacity: 262_144,
            inner: Mutex::default(),
        }
    }

    /// How many proofs one principal may have in the cache at once (its proofs of the
    /// last window).
    pub fn per_principal(mut self, limit: usize) -> Self {
        self.per_principal = limit.max(1);
        self
    }

    /// How many proofs the cache holds in all.
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    fn record(&self, proof: ProofUse, now: u64) -> Result<bool, ProofCacheError> {
        let mut e = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        e.prune(&proof.owner, now);
        let held = e.by_owner.get(&proof.owner).map_or(0, HashMap::len);
        if e.by_owner
            .get(&proof.owner)
            .is_some_and(|uses| uses.contains_key(&proof.jti))
        {
            return Ok(false);
        }
        if held >= self.per_principal {
            return Err(ProofCacheError::QuotaExceeded {
                limit: self.per_principal,
            });
        }
        if e.total >= self.capacity {
            e.sweep(now);
            if e.total >= self.capacity {
                return Err(ProofCacheError::Full);
            }
        }
        e.by_owner
            .entry(proof.owner)
            .or_default()
            .insert(proof.jti, proof.expires_at);
        e.total += 1;
        Ok(true)
    }
}

impl ProofReplayCache for MemoryProofCache {
    fn first_use(&self, proof: ProofUse) -> BoxFuture<'_, Result<bool, ProofCacheError>> {
        let now = crate::state::unix_now();
        Box::pin(std::future::ready(self.record(proof, now)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn once_per_window_bounded_per_principal() {
        let cache = MemoryProofCache::new().per_principal(2).capacity(3);
        let at = |o: &str, j: &str, until: u64| ProofUse::new(o, j, until);
        assert!(cache.record(at("alice", "1", 100), 10).unwrap());
        assert!(!cache.record(at("alice", "1", 100), 11).unwrap(), "replay");
        assert!(cache.record(at("bob", "1", 100), 11).unwrap(), "per owner");
        assert!(cache.record(at("alice", "2", 100), 12).unwrap());
        assert!(matches!(
            cache.record(at("alice", "3", 100), 12),
            Err(ProofCacheError::QuotaExceeded { limit: 2 })
        ));
        assert!(matches!(
            cache.record(at("carol", "1", 100), 12),
            Err(ProofCacheError::Full)
        ));
        // After the window, the entries make room (and the jti would fail on iat).
        assert!(cache.record(at("alice", "3", 200), 100).unwrap());
        assert!(cache.record(at("carol", "1", 200), 100).unwrap());
    }
}
