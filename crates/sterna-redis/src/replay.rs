//! Single-use states across the fleet: `SET key 1 NX EXAT expiry` — atomic in Redis, so
//! of any number of concurrent retries of one state on any replicas, exactly one wins.

use super::{Redis, hex};
use futures_util::future::BoxFuture;
use sterna::server::state::{ReplayError, ReplayStore};

/// A [`ReplayStore`] in Redis. Keys expire with the state they record.
#[derive(Debug, Clone)]
pub struct RedisReplayStore {
    redis: Redis,
}

impl RedisReplayStore {
    pub(crate) fn new(redis: Redis) -> Self {
        Self { redis }
    }
}

impl ReplayStore for RedisReplayStore {
    fn consume(&self, id: [u8; 16], expires_at: u64) -> BoxFuture<'_, Result<bool, ReplayError>> {
        let key = self.redis.key("replay", &hex(&id));
        let mut conn = self.redis.conn.clone();
        Box::pin(async move {
            let set: Option<String> = redis::cmd("SET")
                .arg(&key)
                .arg(1)
                .arg("NX")
                .arg("EXAT")
                .arg(expires_at.max(1))
                .query_async(&mut conn)
                .await
                .map_err(|e| ReplayError::Unavailable(Box::new(e)))?;
            Ok(set.is_some())
        })
    }
}
