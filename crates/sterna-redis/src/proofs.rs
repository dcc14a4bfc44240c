//! DPoP proofs across the fleet: each principal's proofs (their `jti` digests) in one
//! sorted set, `{prefix}:dpop:{principal digest}`, scored by when each may be forgotten
//! (the end of its `iat` window, Redis's clock). One script on that one key records a
//! proof or reports a replay, so of a proof sent to several replicas at once exactly one
//! is accepted, and the layout works on a Redis Cluster.

use super::{Redis, hex, ms_until};
use futures_util::future::BoxFuture;
use sterna::server::http::auth::{ProofCacheError, ProofReplayCache, ProofUse};

/// Drops the forgotten members; 0 when the proof is a member (a replay); -1 when the
/// principal holds `limit` others; else adds it (1) and keeps the set until its last member
/// may be forgotten. KEYS[1] the set; ARGV: proof, time to remember it (ms), limit.
const RECORD: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return -1 end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1";

/// A [`ProofReplayCache`] in Redis, shared by every replica: a proof accepted by one is a
/// replay on all. Each principal holds at most [`per_principal`](Self::per_principal)
/// proofs at once (the proofs of its last window); when Redis cannot be reached, proofs
/// are refused (503), never accepted unchecked.
#[derive(Debug, Clone)]
pub struct RedisProofCache {
    redis: Redis,
    per_principal: usize,
}

impl RedisProofCache {
    pub(crate) fn new(redis: Redis) -> Self {
        Self {
            redis,
            per_principal: 4096,
        }
    }

    /// How many proofs one principal may have in the cache at once, across the fleet
    /// (default 4,096).
    pub fn per_principal(mut self, limit: usize) -> Self {
        self.per_principal = limit.max(1);
        self
    }
}

impl ProofReplayCache for RedisProofCache {
    fn first_use(&self, proof: ProofUse) -> BoxFuture<'_, Result<bool, ProofCacheError>> {
        let key = self.redis.key("dpop", &hex(&proof.owner()));
        let mut conn = self.redis.conn.clone();
        let ttl_ms = ms_until(proof.expires_at()).max(1);
        let limit = self.per_principal;
        Box::pin(async move {
            let recorded: i64 = redis::cmd("EVAL")
                .arg(RECORD)
                .arg(1)
                .arg(&key)
                .arg(hex(&proof.jti()))
                .arg(ttl_ms)
                .arg(limit)
                .query_async(&mut conn)
                .await
                .map_err(|e| ProofCacheError::Unavailable(Box::new(e)))?;
            match recorded {
                1 => Ok(true),
                0 => Ok(false),
                _ => Err(ProofCacheError::QuotaExceeded { limit }),
            }
        })
    }
}
