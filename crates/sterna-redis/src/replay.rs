//! Single-use states across the fleet: `SET key 1 NX EXAT expiry` — atomic in Redis, so
//! of any number of concurrent retries of one state on any replicas, exactly one wins.
//!
//! A consumed state's key must outlive nothing but its own expiry, so Redis must never
//! evict it: only `maxmemory-policy noeviction` guarantees that (every other policy may
//! evict keys with a TTL, and these have one). The store reads the policy (`CONFIG GET`,
//! or `INFO memory` where `CONFIG` is refused, as on some managed services) before the
//! first consumption and again every minute, and refuses single-use states while the
//! policy evicts or cannot be read.
//!
//! Redis replicates asynchronously: a primary that dies right after recording a
//! consumption may take it along, and the replica promoted in its place would accept the
//! state again. With [`replicas(n)`](RedisReplayStore::replicas) a consumption is
//! acknowledged only once `n` replicas have it (`WAIT n`, in the same round trip as the
//! `SET`); when fewer confirm in time the consumption is taken back (a script deletes the
//! key if it still holds this consumer's token) and the call fails with `-32603`:
//! nothing ran, the client retries the same state. No acknowledged consumption is lost
//! with one primary.
//!
//! Each client holds at most [`per_principal`](RedisReplayStore::per_principal) unexpired
//! consumed states across the fleet (its share, kept in `{prefix}:share:replay:{quota
//! key}`), taken before the `SET`: a replay of a state the client consumed finds its entry
//! there and is answered as a replay, whatever the share.

use super::shares::{Shares, Taken};
use super::{Redis, hex, ms_until};
use futures_util::future::BoxFuture;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use sterna::server::QuotaKey;
use sterna::server::state::{ReplayError, ReplayStore};

/// What the last look at the policy found.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    /// `noeviction`.
    Safe,
    /// Why consumed states could be forgotten.
    Unsafe(String),
}

#[derive(Debug)]
struct Policy {
    every: Duration,
    /// The operator vouches for `noeviction` (where the policy cannot be read).
    assumed: bool,
    last: Mutex<Option<(Instant, Verdict)>>,
}

/// A [`ReplayStore`] in Redis. Keys expire with the state they record; Redis must run
/// with `maxmemory-policy noeviction` (see the module docs), otherwise every single-use
/// call is refused with `-32603`.
#[derive(Debug, Clone)]
pub struct RedisReplayStore {
    redis: Redis,
    policy: Arc<Policy>,
    /// Replicas that must have a consumption before it is acknowledged (0: none).
    replicas: u32,
    shares: Shares,
}

/// How long a consumption waits for its replicas.
const WAIT_MS: u64 = 500;

/// Takes back a consumption its replicas did not confirm (nothing ran for it), when the
/// key still holds this consumer's token. KEYS[1] the state's key; ARGV[1] the token.
const UNDO: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0";

impl RedisReplayStore {
    pub(crate) fn new(redis: Redis) -> Self {
        Self {
            redis,
            policy: Arc::new(Policy {
                every: Duration::from_secs(60),
                assumed: false,
                last: Mutex::new(None),
            }),
            replicas: 0,
            shares: Shares::new("replay", 1000),
        }
    }

    /// How many unexpired consumed states one client (an authenticated principal, or an
    /// anonymous peer address: see [`QuotaKey`]) may hold across the fleet (default
    /// 1,000; each single-use call it completes holds one until its state would have
    /// expired). Beyond it a single-use call is refused with `-32603` naming
    /// `per_principal`, and other clients are served.
    pub fn per_principal(mut self, limit: usize) -> Self {
        self.shares = Shares::new("replay", limit);
        self
    }

    /// Acknowledges a consumption only once `n` replicas of its primary have it (`WAIT`,
    /// up to 500 ms; default 0). Set 1 where a replica can be promoted (a Redis Cluster
    /// with replicas, a managed Redis with failover): a consumption acknowledged by a
    /// primary that then dies is not lost with it. When fewer replicas confirm, the
    /// consumption is taken back and the request fails with `-32603` (retry later).
    pub fn replicas(mut self, n: u32) -> Self {
        self.replicas = n;
        self
    }

    /// How often the eviction policy is read again (default every minute; a policy
    /// changed at runtime is seen within this).
    pub fn recheck_every(self, every: Duration) -> Self {
        let assumed = self.policy.assumed;
        self.with_policy(every, assumed)
    }

    /// Trusts that Redis runs with `maxmemory-policy noeviction` without reading it: for
    /// a managed Redis that refuses both `CONFIG` and `INFO` (set the policy in its
    /// parameter group first). Without this, such a Redis gets no single-use states.
    pub fn assume_noeviction(self) -> Self {
        let every = self.policy.every;
        self.with_policy(every, true)
    }

    fn with_policy(self, every: Duration, assumed: bool) -> Self {
        Self {
            redis: self.redis,
            policy: Arc::new(Policy {
                every,
                assumed,
                last: Mutex::new(None),
            }),
            replicas: self.replicas,
            shares: self.shares,
        }
    }

    /// The policy's verdict, read again when older than `every`.
    async fn verdict(&self) -> Result<(), ReplayError> {
        if self.policy.assumed {
            return Ok(());
        }
        let cached = self
            .policy
            .last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let verdict = match cached {
            Some((at, v)) if at.elapsed() < self.policy.every => v,
            previous => {
                let v = self.read_policy().await?;
                self.remember(previous.map(|(_, v)| v), v.clone());
                v
            }
        };
        match verdict {
            Verdict::Safe => Ok(()),
            Verdict::Unsafe(why) => Err(ReplayError::Unreliable(why)),
        }
    }

    fn remember(&self, previous: Option<Verdict>, now: Verdict) {
        if previous.as_ref() != Some(&now) {
            match &now {
                Verdict::Safe => {
                    tracing::info!("Redis maxmemory-policy is noeviction: single use is guaranteed")
                }
                Verdict::Unsafe(why) => tracing::error!(
                    reason = %why,
                    "single-use states are refused: Redis could forget consumed ones"
                ),
            }
        }
        *self.policy.last.lock().unwrap_or_else(|p| p.into_inner()) = Some((Instant::now(), now));
    }

    /// Reads `maxmemory-policy`: `CONFIG GET`, else `INFO memory`. `Err` when Redis
    /// cannot be reached (nothing is concluded then).
    async fn read_policy(&self) -> Result<Verdict, ReplayError> {
        let config: Result<Vec<Vec<String>>, redis::RedisError> = self
            .redis
            .on_every_primary(redis::cmd("CONFIG").arg("GET").arg("maxmemory-policy"))
            .await;
        let refused = match config {
            Ok(pairs) => {
                return Ok(worst(
                    pairs
                        .iter()
                        .map(|pair| judge(pair.get(1).map(String::as_str))),
                ));
            }
            Err(e) if unreachable(&e) => return Err(ReplayError::Unavailable(Box::new(e))),
            Err(e) => e,
        };
        let info: Result<Vec<String>, redis::RedisError> = self
            .redis
            .on_every_primary(redis::cmd("INFO").arg("memory"))
            .await;
        match info {
            Ok(texts) => Ok(worst(texts.iter().map(|t| judge(info_policy(t))))),
            Err(e) if unreachable(&e) => Err(ReplayError::Unavailable(Box::new(e))),
            Err(e) => Ok(Verdict::Unsafe(format!(
                "Redis maxmemory-policy cannot be read (CONFIG: {refused}; INFO: {e}); \
                 set it to noeviction and use RedisReplayStore::assume_noeviction"
            ))),
        }
    }
}

/// Safe when every node (every primary of a cluster) is; else the first unsafe verdict.
fn worst(verdicts: impl Iterator<Item = Verdict>) -> Verdict {
    let mut any = false;
    for v in verdicts {
        any = true;
        if v != Verdict::Safe {
            return v;
        }
    }
    if any {
        Verdict::Safe
    } else {
        Verdict::Unsafe("Redis did not say its maxmemory-policy".to_owned())
    }
}

/// A random token for one consumption.
fn token() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    let a = h.finish();
    h.write_u64(a);
    format!("{a:016x}{:016x}", h.finish())
}

/// Whether Redis was not reached at all (as opposed to refusing a command).
fn unreachable(e: &redis::RedisError) -> bool {
    e.is_io_error() || e.is_timeout() || e.is_connection_dropped() || e.is_connection_refusal()
}

/// `maxmemory_policy:…` from the `INFO memory` text.
fn info_policy(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|l| l.strip_prefix("maxmemory_policy:"))
        .map(str::trim)
}

fn judge(policy: Option<&str>) -> Verdict {
    match policy {
        Some("noeviction") => Verdict::Safe,
        Some(p) => Verdict::Unsafe(format!(
            "Redis maxmemory-policy is {p}, which may evict the keys of consumed states \
             (noeviction is required)"
        )),
        None => Verdict::Unsafe("Redis did not say its maxmemory-policy".to_owned()),
    }
}

impl RedisReplayStore {
    /// The owner's share, then the consumption (`SET NX`, and the replicas' word).
    async fn consume_now(
        &self,
        id: [u8; 16],
        owner: &QuotaKey,
        expires_at: u64,
    ) -> Result<bool, ReplayError> {
        self.verdict().await?;
        let entry = hex(&id);
        let key = self.redis.key("replay", &entry);
        let mut conn = self.redis.conn.clone();
        let ttl_ms = ms_until(expires_at);
        let taken = self
            .shares
            .take(&self.redis, &mut conn, owner, &entry, ttl_ms)
            .await
            .map_err(|e| ReplayError::Unavailable(Box::new(e)))?;
        if taken == Taken::Refused {
            return Err(ReplayError::QuotaExceeded {
                limit: self.shares.limit,
            });
        }
        let token = if self.replicas == 0 {
            "1".to_owned()
        } else {
            token()
        };
        let mut set = redis::cmd("SET");
        set.arg(&key)
            .arg(&token)
            .arg("NX")
            .arg("EXAT")
            .arg(expires_at.max(1));
        if self.replicas == 0 {
            // A share taken for a state consumed already (a race of two first tries) is
            // kept until it expires: the count errs towards refusing.
            let set: Option<String> = set
                .query_async(&mut conn)
                .await
                .map_err(|e| ReplayError::Unavailable(Box::new(e)))?;
            return Ok(set.is_some());
        }
        // One round trip, on the key's primary: the SET, then the replicas' word.
        let (set, copies): (Option<String>, u32) = redis::pipe()
            .add_command(set)
            .cmd("WAIT")
            .arg(self.replicas)
            .arg(WAIT_MS)
            .query_async(&mut conn)
            .await
            .map_err(|e| ReplayError::Unavailable(Box::new(e)))?;
        if set.is_none() {
            return Ok(false);
        }
        if copies < self.replicas {
            let undone: Result<i64, _> = redis::cmd("EVAL")
                .arg(UNDO)
                .arg(1)
                .arg(&key)
                .arg(&token)
                .query_async(&mut conn)
                .await;
            if taken == Taken::New && matches!(undone, Ok(1)) {
                let given = self.shares.give_back(&self.redis, &mut conn, owner, &entry);
                if let Err(e) = given.await {
                    tracing::warn!(error = %e, "a share of the replay store was not given back");
                }
            }
            return Err(ReplayError::Unavailable(
                format!(
                    "the consumption reached {copies} of {} replicas within {WAIT_MS} ms ({})",
                    self.replicas,
                    match undone {
                        Ok(1) => "taken back".to_owned(),
                        Ok(_) => "not found to take back".to_owned(),
                        Err(e) => format!("could not be taken back: {e}"),
                    }
                )
                .into(),
            ));
        }
        Ok(true)
    }
}

impl ReplayStore for RedisReplayStore {
    fn consume(
        &self,
        id: [u8; 16],
        owner: &QuotaKey,
        expires_at: u64,
    ) -> BoxFuture<'_, Result<bool, ReplayError>> {
        let owner = owner.clone();
        Box::pin(async move { self.consume_now(id, &owner, expires_at).await })
    }

    fn check(&self) -> BoxFuture<'_, Result<(), ReplayError>> {
        Box::pin(self.verdict())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_noeviction_is_safe() {
        assert_eq!(judge(Some("noeviction")), Verdict::Safe);
        for p in [
            "volatile-lru",
            "allkeys-lru",
            "volatile-ttl",
            "allkeys-random",
        ] {
            assert!(matches!(judge(Some(p)), Verdict::Unsafe(w) if w.contains(p)));
        }
        assert!(matches!(judge(None), Verdict::Unsafe(_)));
        let info = "# Memory\r\nused_memory:1\r\nmaxmemory_policy:volatile-lru\r\nx:1\r\n";
        assert_eq!(info_policy(info), Some("volatile-lru"));
        assert_eq!(info_policy("# Memory\r\n"), None);
    }
}
