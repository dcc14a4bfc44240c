//! Per-client shares of a store, across the fleet: one sorted set per client and kind
//! (`{prefix}:share:{kind}:{quota key}`) whose members are the client's entries, scored
//! by when they expire (Redis's clock). Taking a share is one script on that one key, so
//! concurrent creations on any replicas cannot exceed it, and the layout works on a
//! Redis Cluster.

use super::{Conn, Redis};
use sterna::server::QuotaKey;

/// Drops the expired members, refuses (0) when the client holds `limit` others, else adds
/// the entry (1), or moves its expiry when it held it already (2), and keeps the set
/// itself until its last member expires. KEYS[1] the set; ARGV: entry, time to live
/// (ms), limit.
const TAKE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not held and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
if held then return 2 end
return 1";

/// What [`Shares::take`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Taken {
    /// The client holds its share already: refused.
    Refused,
    /// A new share (give it back if the entry is not created after all).
    New,
    /// The client held this entry's share already (its expiry moved).
    Again,
}

/// Moves an entry's expiry when it is a member (a session used again). KEYS[1] the set;
/// ARGV: entry, time to live (ms).
pub(crate) const REFRESH: &str = r"
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1";

/// The shares of one kind of entry (sessions, tasks, states).
#[derive(Debug, Clone)]
pub(crate) struct Shares {
    kind: &'static str,
    /// How many unexpired entries one client may hold.
    pub(crate) limit: usize,
}

impl Shares {
    pub(crate) fn new(kind: &'static str, limit: usize) -> Self {
        Self {
            kind,
            limit: limit.max(1),
        }
    }

    /// The set of `owner`'s entries.
    pub(crate) fn key(&self, redis: &Redis, owner: &QuotaKey) -> String {
        redis.key(&format!("share:{}", self.kind), owner.as_str())
    }

    /// Takes a share for `entry` of `owner` for `ttl_ms`, unless `owner` holds its share
    /// already.
    pub(crate) async fn take(
        &self,
        redis: &Redis,
        conn: &mut Conn,
        owner: &QuotaKey,
        entry: &str,
        ttl_ms: u64,
    ) -> Result<Taken, redis::RedisError> {
        let taken: i64 = redis::cmd("EVAL")
            .arg(TAKE)
            .arg(1)
            .arg(self.key(redis, owner))
            .arg(entry)
            .arg(ttl_ms.max(1))
            .arg(self.limit)
            .query_async(conn)
            .await?;
        Ok(match taken {
            0 => Taken::Refused,
            1 => Taken::New,
            _ => Taken::Again,
        })
    }

    /// Gives `entry`'s share back (it ended before it expired).
    pub(crate) async fn give_back(
        &self,
        redis: &Redis,
        conn: &mut Conn,
        owner: &QuotaKey,
        entry: &str,
    ) -> Result<(), redis::RedisError> {
        redis::cmd("ZREM")
            .arg(self.key(redis, owner))
            .arg(entry)
            .query_async::<()>(conn)
            .await
    }
}
