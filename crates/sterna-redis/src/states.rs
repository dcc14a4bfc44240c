//! Stored states across the fleet: `SET key payload EXAT expiry` on issue, `GET key` on the
//! retry. One key per state, so the layout works on a Redis Cluster. Each client holds at
//! most [`per_principal`](RedisStateStore::per_principal) unexpired states across the
//! fleet (its share, kept in `{prefix}:share:state:{quota key}`).

use super::shares::{Shares, Taken};
use super::{Redis, hex, ms_until};
use futures_util::future::BoxFuture;
use sterna::server::QuotaKey;
use sterna::server::state::{StateStore, StoreError};

/// A [`StateStore`] in Redis: `<prefix>:state:<id>` holds a sealed payload until the
/// state expires. The reference's MAC is checked before this store is asked, so a forged
/// id never reaches Redis.
#[derive(Debug, Clone)]
pub struct RedisStateStore {
    redis: Redis,
    shares: Shares,
}

impl RedisStateStore {
    pub(crate) fn new(redis: Redis) -> Self {
        Self {
            redis,
            shares: Shares::new("state", 1000),
        }
    }

    /// How many unexpired stored states one client (an authenticated principal, or an
    /// anonymous peer address: see [`QuotaKey`]) may hold across the fleet (default
    /// 1,000; each round of a flow that stores its state adds one for the state TTL).
    pub fn per_principal(mut self, limit: usize) -> Self {
        self.shares = Shares::new("state", limit);
        self
    }

    async fn put_now(
        &self,
        id: [u8; 16],
        owner: &QuotaKey,
        sealed: Vec<u8>,
        expires_at: u64,
    ) -> Result<(), StoreError> {
        let entry = hex(&id);
        let mut conn = self.redis.conn.clone();
        let ttl_ms = ms_until(expires_at);
        let shares = &self.shares;
        let taken = shares
            .take(&self.redis, &mut conn, owner, &entry, ttl_ms)
            .await
            .map_err(unavailable)?;
        if taken == Taken::Refused {
            return Err(StoreError::QuotaExceeded {
                limit: shares.limit,
            });
        }
        redis::cmd("SET")
            .arg(self.redis.key("state", &entry))
            .arg(sealed)
            .arg("EXAT")
            .arg(expires_at.max(1))
            .query_async::<()>(&mut conn)
            .await
            .map_err(unavailable)
    }
}

fn unavailable(e: redis::RedisError) -> StoreError {
    StoreError::Unavailable(Box::new(e))
}

impl StateStore for RedisStateStore {
    fn put(
        &self,
        id: [u8; 16],
        owner: &QuotaKey,
        sealed: Vec<u8>,
        expires_at: u64,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let owner = owner.clone();
        Box::pin(async move { self.put_now(id, &owner, sealed, expires_at).await })
    }

    fn get(&self, id: [u8; 16]) -> BoxFuture<'_, Result<Option<Vec<u8>>, StoreError>> {
        let key = self.redis.key("state", &hex(&id));
        let mut conn = self.redis.conn.clone();
        Box::pin(async move {
            redis::cmd("GET")
                .arg(&key)
                .query_async::<Option<Vec<u8>>>(&mut conn)
                .await
                .map_err(unavailable)
        })
    }
}
