//! Redis for a fleet of sterna replicas behind a load balancer.
//!
//! A 2026-07-28 flow needs nothing shared but the state keys: any replica opens any
//! replica's `requestState`. What must be shared lives here:
//!
//! | what | type | sterna trait |
//! |---|---|---|
//! | single-use states, consumed at most once across the fleet | [`RedisReplayStore`] | [`ReplayStore`](sterna::server::state::ReplayStore) |
//! | task records (`io.modelcontextprotocol/tasks`), so any replica polls, updates, cancels and runs any task | [`RedisTaskStore`] | [`TaskStore`](sterna::server::tasks::TaskStore) |
//! | sealed payloads of stored states (the client carries a reference) | [`RedisStateStore`] | [`StateStore`](sterna::server::state::StateStore) |
//! | 2025-11-25 session records, so any replica serves any session | [`RedisSessionStore`] | [`SessionStore`](sterna::server::http::SessionStore) |
//! | the `jti` of DPoP proofs accepted (RFC 9449), so a proof replayed to another replica is refused | [`RedisProofCache`] | [`ProofReplayCache`](sterna::server::http::auth::ProofReplayCache) |
//! | the events of 2025-11-25 sessions' streams, so any replica resumes a stream (`Last-Event-ID`) | [`RedisStreamStore`] | [`StreamStore`](sterna::server::http::StreamStore) |
//! | list and resource changes to every replica's listeners; answers (only to pushes that wait for one), cancellations and session ends to the replica running the request | [`RedisBus`] | [`Changes::forward_with`](sterna::server::Changes::forward_with), [`SessionBus`](sterna::server::http::SessionBus) |
//!
//! Each client (its [`QuotaKey`](sterna::server::QuotaKey)) holds a bounded share of the
//! sessions, tasks and stored states across the fleet (`per_principal` on each store; a
//! sorted set per client, `{prefix}:share:{kind}:{key}`, taken by one atomic script).
//!
//! Every key starts with a prefix (default `sterna`) and every command touches one key,
//! so the layout works on a Redis Cluster too. When Redis cannot be reached, the affected
//! requests fail with a clear error and work again when it is back; nothing fails open (a
//! single-use state is never accepted twice because Redis blinked).
//!
//! ```no_run
//! # async fn run() -> Result<(), redis::RedisError> {
//! let redis = sterna_redis::Redis::connect("redis://127.0.0.1:6379/").await?;
//! let server = sterna::server::Server::builder("demo", "1.0.0")
//!     .state_keys(sterna::server::state::StateKeys::from_env("STERNA_STATE_KEYS").expect("keys"))
//!     .replay_store(std::sync::Arc::new(redis.replay_store()))
//!     // Stored-state mode: sealed payloads above 4 KiB live in Redis.
//!     .state_store(
//!         std::sync::Arc::new(redis.state_store()),
//!         sterna::server::state::StoreStates::Above(4096),
//!     )
//!     .build()
//!     .expect("valid");
//! # let _ = server;
//! # Ok(()) }
//! ```

mod bus;
mod proofs;
mod replay;
mod sessions;
mod shares;
mod states;
mod streams;
mod tasks;

pub use bus::RedisBus;
pub use proofs::RedisProofCache;
pub use replay::RedisReplayStore;
pub use sessions::RedisSessionStore;
pub use states::RedisStateStore;
pub use streams::RedisStreamStore;
pub use tasks::RedisTaskStore;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use std::fmt;
use std::time::Duration;

/// A connection to Redis, shared by the stores (a multiplexed connection that reconnects
/// on its own), and the prefix of every key.
#[derive(Clone)]
pub struct Redis {
    pub(crate) client: redis::Client,
    pub(crate) conn: ConnectionManager,
    pub(crate) prefix: String,
}

impl fmt::Debug for Redis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redis")
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl Redis {
    /// Connects to `url` (`redis://host:port/db`). Commands time out after 2 s; a lost
    /// connection is re-established when next needed (three quick attempts, so a request
    /// during an outage fails within about a second instead of waiting out a long backoff).
    pub async fn connect(url: &str) -> Result<Self, redis::RedisError> {
        let client = redis::Client::open(url)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(2)))
            .set_number_of_retries(3)
            .set_max_delay(Duration::from_millis(500));
        let conn = client.get_connection_manager_with_config(config).await?;
        Ok(Self {
            client,
            conn,
            prefix: "sterna".to_owned(),
        })
    }

    /// Prefixes every key with `prefix` instead of `sterna` (several fleets, one Redis).
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The store of consumed single-use states.
    pub fn replay_store(&self) -> RedisReplayStore {
        RedisReplayStore::new(self.clone())
    }

    /// The store of task records.
    pub fn task_store(&self) -> RedisTaskStore {
        RedisTaskStore::new(self.clone())
    }

    /// The store of stored states' sealed payloads (stored-state mode).
    pub fn state_store(&self) -> RedisStateStore {
        RedisStateStore::new(self.clone())
    }

    /// The cache of DPoP proofs accepted (for
    /// [`DpopBuilder::replay_cache`](sterna::server::http::auth::DpopBuilder::replay_cache)).
    pub fn proof_cache(&self) -> RedisProofCache {
        RedisProofCache::new(self.clone())
    }

    /// The shared event logs of 2025-11-25 sessions' streams (resumable on any replica).
    pub fn stream_store(&self) -> RedisStreamStore {
        RedisStreamStore::new(self.clone())
    }

    /// The store of 2025-11-25 session records.
    pub fn session_store(&self) -> RedisSessionStore {
        RedisSessionStore::new(self.clone())
    }

    pub(crate) fn key(&self, kind: &str, id: &str) -> String {
        format!("{}:{kind}:{id}", self.prefix)
    }
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
