//! 2025-11-25 session records in Redis: any replica serves any session's requests.
//! Records are JSON under `{prefix}:session:{id}`, expiring after their idle time, which
//! every use refreshes (`GETEX`).

use super::Redis;
use futures_util::future::BoxFuture;
use redis::AsyncCommands;
use std::time::Duration;
use sterna::http::{SessionError, SessionRecord, SessionStore};

/// A [`SessionStore`] in Redis.
#[derive(Debug, Clone)]
pub struct RedisSessionStore {
    redis: Redis,
}

impl RedisSessionStore {
    pub(crate) fn new(redis: Redis) -> Self {
        Self { redis }
    }
}

fn unavailable(e: impl std::error::Error + Send + Sync + 'static) -> SessionError {
    SessionError::Unavailable(Box::new(e))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl RedisSessionStore {
    /// Writes `record` with the idle expiry, only if the session is new (`NX`) or only if it
    /// still exists (`XX`).
    fn put(
        &self,
        id: &str,
        record: SessionRecord,
        idle: Duration,
        condition: &'static str,
    ) -> BoxFuture<'_, Result<(), SessionError>> {
        let key = self.redis.key("session", id);
        let mut conn = self.redis.conn.clone();
        Box::pin(async move {
            let json = serde_json::to_string(&record).map_err(unavailable)?;
            let _: Option<String> = redis::cmd("SET")
                .arg(&key)
                .arg(json)
                .arg(condition)
                .arg("PX")
                .arg(millis(idle))
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok(())
        })
    }
}

impl SessionStore for RedisSessionStore {
    fn create(
        &self,
        id: &str,
        record: SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'_, Result<(), SessionError>> {
        self.put(id, record, idle, "NX")
    }

    fn touch(
        &self,
        id: &str,
        idle: Duration,
    ) -> BoxFuture<'_, Result<Option<SessionRecord>, SessionError>> {
        let key = self.redis.key("session", id);
        let mut conn = self.redis.conn.clone();
        Box::pin(async move {
            let json: Option<String> = redis::cmd("GETEX")
                .arg(&key)
                .arg("PX")
                .arg(millis(idle))
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            match json {
                None => Ok(None),
                Some(j) => serde_json::from_str(&j).map(Some).map_err(unavailable),
            }
        })
    }

    fn update(
        &self,
        id: &str,
        record: SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'_, Result<(), SessionError>> {
        self.put(id, record, idle, "XX")
    }

    fn remove(&self, id: &str) -> BoxFuture<'_, Result<bool, SessionError>> {
        let key = self.redis.key("session", id);
        let mut conn = self.redis.conn.clone();
        Box::pin(async move {
            let n: u64 = conn.del(&key).await.map_err(unavailable)?;
            Ok(n > 0)
        })
    }
}
