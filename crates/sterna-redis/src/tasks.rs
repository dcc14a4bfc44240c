//! Task records across the fleet: one hash per task (`v` the version, `d` the record),
//! created with a script (`EVAL`) that refuses a taken id, swapped with one that
//! compares the version first. Both run atomically in Redis, so concurrent `tasks/update`s and
//! cancels on any replicas serialise on the record. Each client holds at most
//! [`per_principal`](RedisTaskStore::per_principal) unexpired records across the fleet
//! (its share, kept in `{prefix}:share:task:{quota key}`).

use super::Redis;
use super::shares::{Shares, Taken};
use futures_util::future::BoxFuture;
use std::time::Duration;
use sterna::server::QuotaKey;
use sterna::server::tasks::{StoredTask, TaskStore, TaskStoreError};

const CREATE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', 1, 'd', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1";

const SWAP: &str = r"
if redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'd', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1";

/// A [`TaskStore`] in Redis. A record expires with its task (its TTL plus a grace).
#[derive(Debug, Clone)]
pub struct RedisTaskStore {
    redis: Redis,
    shares: Shares,
}

impl RedisTaskStore {
    pub(crate) fn new(redis: Redis) -> Self {
        Self {
            redis,
            shares: Shares::new("task", 100),
        }
    }

    /// How many unexpired task records one client (an authenticated principal, or an
    /// anonymous peer address: see [`QuotaKey`]) may hold across the fleet (default 100).
    pub fn per_principal(mut self, limit: usize) -> Self {
        self.shares = Shares::new("task", limit);
        self
    }

    async fn create_now(
        &self,
        id: &str,
        owner: &QuotaKey,
        bytes: Vec<u8>,
        keep: Duration,
    ) -> Result<bool, TaskStoreError> {
        let mut conn = self.redis.conn.clone();
        let shares = &self.shares;
        let redis = &self.redis;
        let taken = shares
            .take(redis, &mut conn, owner, id, millis(keep))
            .await
            .map_err(unavailable)?;
        if taken == Taken::Refused {
            return Err(TaskStoreError::QuotaExceeded {
                limit: shares.limit,
            });
        }
        let created: i64 = redis::cmd("EVAL")
            .arg(CREATE)
            .arg(1)
            .arg(redis.key("task", id))
            .arg(bytes)
            .arg(millis(keep))
            .query_async(&mut conn)
            .await
            .map_err(unavailable)?;
        if created != 1 && taken == Taken::New {
            shares
                .give_back(redis, &mut conn, owner, id)
                .await
                .map_err(unavailable)?;
        }
        Ok(created == 1)
    }
}

fn unavailable(e: redis::RedisError) -> TaskStoreError {
    TaskStoreError::Unavailable(Box::new(e))
}

fn millis(d: Duration) -> u64 {
    (d.as_millis() as u64).max(1)
}

impl TaskStore for RedisTaskStore {
    fn create(
        &self,
        id: &str,
        owner: &QuotaKey,
        bytes: Vec<u8>,
        keep: Duration,
    ) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        let (id, owner) = (id.to_owned(), owner.clone());
        Box::pin(async move { self.create_now(&id, &owner, bytes, keep).await })
    }

    fn load(&self, id: &str) -> BoxFuture<'_, Result<Option<StoredTask>, TaskStoreError>> {
        let key = self.redis.key("task", id);
        let mut conn = self.redis.conn.clone();
        Box::pin(async move {
            let (v, d): (Option<u64>, Option<Vec<u8>>) = redis::cmd("HMGET")
                .arg(key)
                .arg("v")
                .arg("d")
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok(v.zip(d)
                .map(|(version, bytes)| StoredTask { version, bytes }))
        })
    }

    fn swap(
        &self,
        id: &str,
        version: u64,
        bytes: Vec<u8>,
        keep: Duration,
    ) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        let key = self.redis.key("task", id);
        let mut conn = self.redis.conn.clone();
        Box::pin(async move {
            let swapped: i64 = redis::cmd("EVAL")
                .arg(SWAP)
                .arg(1)
                .arg(key)
                .arg(version.to_string())
                .arg(version + 1)
                .arg(bytes)
                .arg(millis(keep))
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok(swapped == 1)
        })
    }

    /// `HGET v`: what a running task polls (the record itself is read only when the
    /// version moved).
    fn version(&self, id: &str) -> BoxFuture<'_, Result<Option<u64>, TaskStoreError>> {
        let key = self.redis.key("task", id);
        let mut conn = self.redis.conn.clone();
        Box::pin(async move {
            redis::cmd("HGET")
                .arg(key)
                .arg("v")
                .query_async(&mut conn)
                .await
                .map_err(unavailable)
        })
    }
}
