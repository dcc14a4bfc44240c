//! Task records across the fleet: one hash per task (`v` the version, `d` the record),
//! created with a script (`EVAL`) that refuses a taken id, swapped with one that
//! compares the version first. Both run atomically in Redis, so concurrent `tasks/update`s and
//! cancels on any replicas serialise on the record.

use super::Redis;
use futures_util::future::BoxFuture;
use std::time::Duration;
use sterna::server::{StoredTask, TaskStore, TaskStoreError};

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
}

impl RedisTaskStore {
    pub(crate) fn new(redis: Redis) -> Self {
        Self { redis }
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
        bytes: Vec<u8>,
        keep: Duration,
    ) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        let key = self.redis.key("task", id);
        let mut conn = self.redis.conn.clone();
        Box::pin(async move {
            let created: i64 = redis::cmd("EVAL")
                .arg(CREATE)
                .arg(1)
                .arg(key)
                .arg(bytes)
                .arg(millis(keep))
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok(created == 1)
        })
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
