//! The task store, timed (`sterna_store_seconds{store="task"}`).

use super::{StoredTask, TaskStore, TaskStoreError};
use crate::metrics::stores::Timed;
use crate::server::QuotaKey;
use futures_util::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;

/// The task store, timed.
pub(crate) fn task(s: Arc<dyn TaskStore>) -> Arc<dyn TaskStore> {
    Arc::new(Timed::new(s, "task", ["create", "load", "swap", "version"]))
}

impl TaskStore for Timed<dyn TaskStore, 4> {
    fn create(
        &self,
        id: &str,
        owner: &QuotaKey,
        bytes: Vec<u8>,
        keep: Duration,
    ) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        self.time(0, self.inner.create(id, owner, bytes, keep))
    }

    fn load(&self, id: &str) -> BoxFuture<'_, Result<Option<StoredTask>, TaskStoreError>> {
        self.time(1, self.inner.load(id))
    }

    fn swap(
        &self,
        id: &str,
        version: u64,
        bytes: Vec<u8>,
        keep: Duration,
    ) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        self.time(2, self.inner.swap(id, version, bytes, keep))
    }

    fn version(&self, id: &str) -> BoxFuture<'_, Result<Option<u64>, TaskStoreError>> {
        self.time(3, self.inner.version(id))
    }

    fn changed(&self, id: &str, version: u64) -> Option<BoxFuture<'static, ()>> {
        self.inner.changed(id, version)
    }
}
