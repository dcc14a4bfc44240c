//! 2025-11-25 session records in Redis: any replica serves any session's requests.
//! Records are JSON under `{prefix}:session:{id}`, expiring after their idle time, which
//! every use refreshes (`GETEX`). A record and its share are in two slots of a cluster:
//! they are written by separate commands. Each client holds at most
//! [`per_principal`](RedisSessionStore::per_principal) sessions across the fleet (its
//! share, kept in `{prefix}:share:session:{quota key}`).

use super::Redis;
use super::shares::{REFRESH, Shares, Taken};
use futures_util::future::{BoxFuture, try_join};
use std::sync::Arc;
use std::time::Duration;
use sterna::server::QuotaKey;
use sterna::server::http::{SessionError, SessionStore};
use sterna::server::legacy::SessionRecord;

/// A [`SessionStore`] in Redis.
#[derive(Debug, Clone)]
pub struct RedisSessionStore {
    redis: Redis,
    shares: Shares,
}

impl RedisSessionStore {
    pub(crate) fn new(redis: Redis) -> Self {
        Self {
            redis,
            shares: Shares::new("session", 100),
        }
    }

    /// How many live sessions one client (an authenticated principal, or an anonymous
    /// peer address: see [`QuotaKey`]) may hold across the fleet (default 100).
    pub fn per_principal(mut self, limit: usize) -> Self {
        self.shares = Shares::new("session", limit);
        self
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
    /// still exists (`XX`). `false` when the condition did not hold.
    async fn put(
        &self,
        id: &str,
        record: SessionRecord,
        idle: Duration,
        condition: &'static str,
    ) -> Result<bool, SessionError> {
        let key = self.redis.key("session", id);
        let mut conn = self.redis.conn.clone();
        let json = serde_json::to_string(&record).map_err(unavailable)?;
        let set: Option<String> = redis::cmd("SET")
            .arg(&key)
            .arg(json)
            .arg(condition)
            .arg("PX")
            .arg(millis(idle))
            .query_async(&mut conn)
            .await
            .map_err(unavailable)?;
        Ok(set.is_some())
    }

    async fn create_now(
        &self,
        id: &str,
        owner: &QuotaKey,
        record: SessionRecord,
        idle: Duration,
    ) -> Result<(), SessionError> {
        let mut conn = self.redis.conn.clone();
        let shares = &self.shares;
        let taken = shares
            .take(&self.redis, &mut conn, owner, id, millis(idle))
            .await
            .map_err(unavailable)?;
        if taken == Taken::Refused {
            return Err(SessionError::QuotaExceeded {
                limit: shares.limit,
            });
        }
        if !self.put(id, record, idle, "NX").await? && taken == Taken::New {
            // Ids are random: a taken one is another client's session.
            tracing::warn!("a new session's id was taken already; the record was kept");
            let redis = &self.redis;
            shares
                .give_back(redis, &mut conn, owner, id)
                .await
                .map_err(unavailable)?;
        }
        Ok(())
    }
}

impl SessionStore for RedisSessionStore {
    fn create(
        &self,
        id: &str,
        owner: &QuotaKey,
        record: SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'_, Result<(), SessionError>> {
        let (id, owner) = (id.to_owned(), owner.clone());
        Box::pin(async move { self.create_now(&id, &owner, record, idle).await })
    }

    /// `GETEX` and, in the same round trip, the owner's share of the session refreshed
    /// (a no-op when `owner` is not the client that holds it).
    fn touch(
        &self,
        id: &str,
        owner: &QuotaKey,
        idle: Duration,
    ) -> BoxFuture<'_, Result<Option<Arc<SessionRecord>>, SessionError>> {
        let key = self.redis.key("session", id);
        let share = self.shares.key(&self.redis, owner);
        let id = id.to_owned();
        let conn = self.redis.conn.clone();
        Box::pin(async move {
            // Two keys in two slots (of a cluster): sent together, not as one pipeline.
            let (mut a, mut b) = (conn.clone(), conn);
            let getex = redis::cmd("GETEX")
                .arg(&key)
                .arg("PX")
                .arg(millis(idle))
                .to_owned();
            let refresh = redis::cmd("EVAL")
                .arg(REFRESH)
                .arg(1)
                .arg(share)
                .arg(id)
                .arg(millis(idle))
                .to_owned();
            let (json, _): (Option<String>, i64) = try_join(
                getex.query_async::<Option<String>>(&mut a),
                refresh.query_async::<i64>(&mut b),
            )
            .await
            .map_err(unavailable)?;
            match json {
                None => Ok(None),
                Some(j) => serde_json::from_str(&j)
                    .map(|r| Some(Arc::new(r)))
                    .map_err(unavailable),
            }
        })
    }

    fn update(
        &self,
        id: &str,
        record: SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'_, Result<(), SessionError>> {
        let id = id.to_owned();
        Box::pin(async move { self.put(&id, record, idle, "XX").await.map(drop) })
    }

    fn remove(&self, id: &str, owner: &QuotaKey) -> BoxFuture<'_, Result<bool, SessionError>> {
        let key = self.redis.key("session", id);
        let share = self.shares.key(&self.redis, owner);
        let id = id.to_owned();
        let conn = self.redis.conn.clone();
        Box::pin(async move {
            let (mut a, mut b) = (conn.clone(), conn);
            let del = redis::cmd("DEL").arg(&key).to_owned();
            let zrem = redis::cmd("ZREM").arg(share).arg(id).to_owned();
            let (n, _): (u64, u64) = try_join(
                del.query_async::<u64>(&mut a),
                zrem.query_async::<u64>(&mut b),
            )
            .await
            .map_err(unavailable)?;
            Ok(n > 0)
        })
    }
}
