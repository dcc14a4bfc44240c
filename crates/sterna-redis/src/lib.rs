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
//! sessions, tasks, stored states and consumed single-use states across the fleet (`per_principal` on each store; a
//! sorted set per client, `{prefix}:share:{kind}:{key}`, taken by one atomic script).
//!
//! Every key starts with a prefix (default `sterna`) and every command and script touches
//! one key (commands sent together touch one key each and are not a transaction), so the
//! layout works on a Redis Cluster: [`Redis::connect`] takes a cluster as
//! `redis+cluster://host1:port1,host2:port2/` (any of its nodes; the rest are discovered),
//! and the [bus](RedisBus) uses sharded pub/sub there (`SPUBLISH`/`SSUBSCRIBE`). Where a
//! replica can be promoted, [`RedisReplayStore::replicas`] keeps acknowledged consumptions
//! across a failover. [`Redis::check_settings`] checks the user's commands and persistence
//! at startup; `rediss://` needs the feature `tls`. When Redis cannot be reached, the
//! affected requests fail with a clear error and work again when it is back; nothing fails
//! open (a single-use state is never accepted twice because Redis blinked).
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
mod settings;
mod shares;
mod states;
mod streams;
mod tasks;

pub use bus::RedisBus;
pub use proofs::RedisProofCache;
pub use replay::RedisReplayStore;
pub use sessions::RedisSessionStore;
pub use settings::SettingsError;
pub use states::RedisStateStore;
pub use streams::RedisStreamStore;
pub use tasks::RedisTaskStore;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};
use std::fmt;
use std::time::Duration;

/// How long a command may take, and a connection attempt.
const TIMEOUT: Duration = Duration::from_secs(2);

/// A connection to Redis, shared by the stores (a multiplexed connection that reconnects
/// on its own), and the prefix of every key.
#[derive(Clone)]
pub struct Redis {
    pub(crate) target: Target,
    pub(crate) conn: Conn,
    pub(crate) prefix: String,
}

/// What [`Redis::connect`] connected to.
#[derive(Clone)]
pub(crate) enum Target {
    /// One Redis (with its replicas behind it, if any).
    Single(redis::Client),
    /// A Redis Cluster: the URLs of the nodes given (each `redis://` or `rediss://`), and
    /// the root CA (PEM) to trust for TLS.
    Cluster(Vec<String>, Option<Vec<u8>>),
}

/// The connection the stores send their commands on: one Redis, or a cluster (commands
/// routed by their key's slot, following `MOVED`/`ASK` and failovers).
#[derive(Clone)]
pub(crate) enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Single(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Single(c) => c.req_packed_commands(cmd, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}

impl fmt::Debug for Redis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redis")
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl Redis {
    /// Connects to `url`:
    ///
    /// - `redis://[user:password@]host:port/db` (or `rediss://` for TLS): one Redis;
    /// - `redis+cluster://[user:password@]host1:port1,host2:port2/` (or
    ///   `rediss+cluster://`): a Redis Cluster, through any of the nodes listed (the others
    ///   are discovered; list several so that one being down does not matter). Same as
    ///   [`connect_cluster`](Self::connect_cluster) with each node's URL.
    ///
    /// Commands time out after 2 s; a lost connection is re-established when next needed
    /// (three quick attempts, so a request during an outage fails within about a second
    /// instead of waiting out a long backoff).
    ///
    /// `rediss://` needs the feature `tls`; the server's certificate is checked against
    /// the platform's roots (or those given to `connect_with_root_ca`, feature `tls`).
    pub async fn connect(url: &str) -> Result<Self, redis::RedisError> {
        Self::connect_trusting(url, None).await
    }

    /// Connects like [`connect`](Self::connect), trusting only `root_ca_pem` (PEM
    /// certificates) for a `rediss://` server's certificate: a private CA's.
    #[cfg(feature = "tls")]
    pub async fn connect_with_root_ca(
        url: &str,
        root_ca_pem: &[u8],
    ) -> Result<Self, redis::RedisError> {
        Self::connect_trusting(url, Some(root_ca_pem.to_vec())).await
    }

    async fn connect_trusting(
        url: &str,
        root_ca: Option<Vec<u8>>,
    ) -> Result<Self, redis::RedisError> {
        #[cfg(feature = "tls")]
        if url.starts_with("rediss") {
            // The process's rustls provider, when no other part installed one.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        if let Some(nodes) = cluster_nodes(url)? {
            let conn = cluster_client(&nodes, None, root_ca.as_deref())?
                .get_async_connection()
                .await?;
            return Ok(Self {
                target: Target::Cluster(nodes, root_ca),
                conn: Conn::Cluster(conn),
                prefix: "sterna".to_owned(),
            });
        }
        let client = single_client(url, root_ca)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(TIMEOUT))
            .set_response_timeout(Some(TIMEOUT))
            .set_number_of_retries(3)
            .set_max_delay(Duration::from_millis(500));
        let conn = client.get_connection_manager_with_config(config).await?;
        Ok(Self {
            target: Target::Single(client),
            conn: Conn::Single(conn),
            prefix: "sterna".to_owned(),
        })
    }

    /// Connects to a Redis Cluster through `nodes` (`redis://host:port` or
    /// `rediss://host:port` each, with the same user and password): commands go to the
    /// primary of their key's slot, following `MOVED`/`ASK` redirections while slots move
    /// and the new primary after a failover. A command that cannot be served within 2 s
    /// (a primary down and not yet replaced) fails: the request that needed it gets
    /// `-32603` and may be retried; nothing is accepted unchecked.
    pub async fn connect_cluster<S: AsRef<str>>(nodes: &[S]) -> Result<Self, redis::RedisError> {
        let nodes: Vec<String> = nodes.iter().map(|n| n.as_ref().to_owned()).collect();
        let conn = cluster_client(&nodes, None, None)?
            .get_async_connection()
            .await?;
        Ok(Self {
            target: Target::Cluster(nodes, None),
            conn: Conn::Cluster(conn),
            prefix: "sterna".to_owned(),
        })
    }

    /// Whether this is a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self.target, Target::Cluster(..))
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

    /// Sends `cmd` to the Redis, or to every primary of the cluster: their answers.
    pub(crate) async fn on_every_primary<T: redis::FromRedisValue>(
        &self,
        cmd: &Cmd,
    ) -> Result<Vec<T>, redis::RedisError> {
        match self.conn.clone() {
            Conn::Single(mut c) => Ok(vec![cmd.query_async(&mut c).await?]),
            Conn::Cluster(mut c) => {
                let routing = redis::cluster_routing::RoutingInfo::MultiNode((
                    redis::cluster_routing::MultipleNodeRoutingInfo::AllMasters,
                    None,
                ));
                let answers = c.route_command(cmd.clone(), routing).await?;
                let Value::Map(answers) = answers else {
                    return Ok(vec![redis::from_redis_value(answers)?]);
                };
                answers
                    .into_iter()
                    .map(|(_, v)| redis::from_redis_value(v).map_err(Into::into))
                    .collect()
            }
        }
    }

    pub(crate) fn key(&self, kind: &str, id: &str) -> String {
        format!("{}:{kind}:{id}", self.prefix)
    }
}

/// A cluster client on `nodes`: commands time out after 2 s, each retried on another
/// node (after a redirection or a failover) within that time. With `push`, it speaks RESP3
/// and hands what the nodes push (sharded pub/sub messages) to it.
pub(crate) fn cluster_client(
    nodes: &[String],
    push: Option<tokio::sync::mpsc::UnboundedSender<redis::PushInfo>>,
    root_ca: Option<&[u8]>,
) -> Result<redis::cluster::ClusterClient, redis::RedisError> {
    let mut builder = redis::cluster::ClusterClientBuilder::new(nodes.to_vec());
    if let Some(pem) = root_ca {
        builder = with_root_ca(builder, pem)?;
    }
    let mut builder = builder
        .connection_timeout(TIMEOUT)
        .response_timeout(TIMEOUT)
        .retries(3)
        .min_retry_wait(50)
        .max_retry_wait(500);
    if let Some(push) = push {
        builder = builder
            .use_protocol(redis::ProtocolVersion::RESP3)
            .push_sender(push);
    }
    builder.build()
}

/// A client of one Redis, trusting `root_ca` (PEM) for TLS when given.
fn single_client(url: &str, root_ca: Option<Vec<u8>>) -> Result<redis::Client, redis::RedisError> {
    match root_ca {
        None => redis::Client::open(url),
        #[cfg(feature = "tls")]
        Some(pem) => redis::Client::build_with_tls(
            url,
            redis::TlsCertificates {
                client_tls: None,
                root_cert: Some(pem),
            },
        ),
        #[cfg(not(feature = "tls"))]
        Some(_) => Err(no_tls()),
    }
}

#[cfg(feature = "tls")]
fn with_root_ca(
    builder: redis::cluster::ClusterClientBuilder,
    pem: &[u8],
) -> Result<redis::cluster::ClusterClientBuilder, redis::RedisError> {
    Ok(builder.certs(redis::TlsCertificates {
        client_tls: None,
        root_cert: Some(pem.to_vec()),
    }))
}

#[cfg(not(feature = "tls"))]
fn with_root_ca(
    _: redis::cluster::ClusterClientBuilder,
    _: &[u8],
) -> Result<redis::cluster::ClusterClientBuilder, redis::RedisError> {
    Err(no_tls())
}

#[cfg(not(feature = "tls"))]
fn no_tls() -> redis::RedisError {
    redis::RedisError::from((
        redis::ErrorKind::InvalidClientConfig,
        "TLS needs sterna-redis's feature tls",
    ))
}

/// The nodes of a `redis+cluster://` (or `rediss+cluster://`) URL, each as a `redis://`
/// (`rediss://`) URL with the user, password and path; `None` for any other URL.
fn cluster_nodes(url: &str) -> Result<Option<Vec<String>>, redis::RedisError> {
    let (scheme, rest) = if let Some(rest) = url.strip_prefix("redis+cluster://") {
        ("redis", rest)
    } else if let Some(rest) = url.strip_prefix("rediss+cluster://") {
        ("rediss", rest)
    } else {
        return Ok(None);
    };
    let (authority, path) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    let (user, hosts) = match authority.rsplit_once('@') {
        Some((user, hosts)) => (format!("{user}@"), hosts),
        None => (String::new(), authority),
    };
    let nodes: Vec<String> = hosts
        .split(',')
        .filter(|h| !h.is_empty())
        .map(|h| format!("{scheme}://{user}{h}{path}"))
        .collect();
    if nodes.is_empty() {
        return Err(redis::RedisError::from((
            redis::ErrorKind::InvalidClientConfig,
            "a redis+cluster:// URL names no node",
        )));
    }
    Ok(Some(nodes))
}

/// Milliseconds from now (this process's clock) until `expires_at` (Unix seconds); 0 when
/// it has passed.
pub(crate) fn ms_until(expires_at: u64) -> u64 {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    expires_at.saturating_mul(1000).saturating_sub(now_ms)
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::cluster_nodes;

    #[test]
    fn a_cluster_url_names_its_nodes() {
        assert_eq!(cluster_nodes("redis://a:1/").unwrap(), None);
        assert_eq!(
            cluster_nodes("redis+cluster://u:p@a:1,b:2/").unwrap(),
            Some(vec![
                "redis://u:p@a:1/".to_owned(),
                "redis://u:p@b:2/".to_owned()
            ])
        );
        assert_eq!(
            cluster_nodes("rediss+cluster://a:1").unwrap(),
            Some(vec!["rediss://a:1".to_owned()])
        );
        assert!(cluster_nodes("redis+cluster:///").is_err());
    }
}
