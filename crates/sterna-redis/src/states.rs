//! Stored states across the fleet: `SET key payload PXAT expiry` on issue, `GET key` on the
//! retry. One key per state, so the layout works on a Redis Cluster.

use super::{Redis, hex};
use futures_util::future::BoxFuture;
use sterna::state::{StateStore, StoreError};

/// A [`StateStore`] in Redis: `<prefix>:state:<id>` holds a sealed payload until the
/// state expires. The reference's MAC is checked before this store is asked, so a forged
/// id never reaches Redis.
#[derive(Debug, Clone)]
pub struct RedisStateStore {
    redis: Redis,
}

impl RedisStateStore {
    pub(crate) fn new(redis: Redis) -> Self {
        Self { redis }
    }
}

fn unavailable(e: redis::RedisError) -> StoreError {
    StoreError::Unavailable(Box::new(e))
}

impl StateStore for RedisStateStore {
    fn put(
        &self,
        id: [u8; 16],
        sealed: Vec<u8>,
        expires_at: u64,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let key = self.redis.key("state", &hex(&id));
        let mut conn = self.redis.conn.clone();
        Box::pin(async move {
            redis::cmd("SET")
                .arg(&key)
                .arg(sealed)
                .arg("EXAT")
                .arg(expires_at.max(1))
                .query_async::<()>(&mut conn)
                .await
                .map_err(unavailable)
        })
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
