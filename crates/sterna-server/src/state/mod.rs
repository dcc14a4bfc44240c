//! `requestState` protection.
//!
//! Every `requestState` a sterna server emits is sealed with XChaCha20-Poly1305 under a key
//! from a [`StateKeys`] ring and bound (as associated data) to the audience (server name),
//! the principal, the method, the target (tool or prompt name, resource URI) and a digest
//! of the canonical arguments. It carries its issue and expiry times (default TTL 10
//! minutes). Every incoming state is opened and checked **before any handler code runs**;
//! any failure — tampered, truncated, expired, another principal, another tool or other
//! arguments, an unknown key, oversized — is answered with `-32602` and a message that
//! says nothing more than "invalid requestState".
//!
//! In stored-state mode (see [`StateStore`]) the sealed payload stays on the server side
//! and the client carries a short MAC'd reference to it; what the store returns is opened
//! and checked like an inline state.

mod canon;
pub(crate) mod codec;
pub(crate) mod digest;
mod flow;
mod keys;
mod random;
mod replay;
#[cfg(feature = "tasks")]
pub(crate) mod sealed;
mod store;
pub(crate) mod stored;
#[cfg(test)]
mod tamper;
mod xchacha;

pub(crate) use codec::{Binding, Carried, FlowState};
pub(crate) use flow::{Refused, SealError};
#[cfg(feature = "jwt")]
pub(crate) use keys::fill_random;
pub use keys::{KEY_LEN, KeyError, StateKeys};
pub(crate) use random::fill_unique;
#[cfg(any(feature = "legacy", feature = "tasks"))]
pub(crate) use random::random_id;
pub(crate) use replay::unix_now;
pub use replay::{MemoryReplayStore, ReplayError, ReplayStore};
pub use store::{MemoryStateStore, StateStore, StoreError, StoreStates};

use std::sync::Arc;
use std::time::Duration;

/// How states are protected and for how long they live.
#[derive(Clone)]
pub(crate) struct StateConfig {
    pub(crate) keys: Arc<StateKeys>,
    pub(crate) ttl: Duration,
    pub(crate) max_len: usize,
    pub(crate) skew: Duration,
    pub(crate) replay: Option<Arc<dyn ReplayStore>>,
    /// Where stored states live (none: every state inline, references refused).
    pub(crate) store: Option<Arc<dyn StateStore>>,
    pub(crate) store_when: StoreStates,
    /// The longest sealed payload kept in (or accepted from) the store.
    pub(crate) max_stored_len: usize,
    pub(crate) clock: fn() -> u64,
}

impl std::fmt::Debug for StateConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateConfig")
            .field("keys", &self.keys)
            .field("ttl", &self.ttl)
            .field("max_len", &self.max_len)
            .field("skew", &self.skew)
            .field("replay", &self.replay)
            .field("store", &self.store)
            .field("store_when", &self.store_when)
            .field("max_stored_len", &self.max_stored_len)
            .finish()
    }
}

impl StateConfig {
    pub(crate) fn new(keys: StateKeys) -> Self {
        Self {
            keys: Arc::new(keys),
            ttl: Duration::from_secs(600),
            max_len: 64 * 1024,
            skew: Duration::from_secs(5),
            replay: None,
            store: None,
            store_when: StoreStates::Never,
            max_stored_len: 1 << 20,
            clock: unix_now,
        }
    }

    pub(crate) fn now(&self) -> u64 {
        (self.clock)()
    }
}

/// Entry points for the benchmarks and fuzzers (not a stable API; feature `internals`).
#[cfg(feature = "internals")]
#[doc(hidden)]
#[path = "bench.rs"]
pub mod __bench;
