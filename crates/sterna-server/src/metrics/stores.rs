//! Store latency: each store a server is given is wrapped in [`Timed`], which records how
//! long every call took in `sterna_store_seconds{store, op}` (handles registered when
//! the server is built; a call costs a second box and two clock reads).

use super::STORE_SECONDS;
use futures_util::future::BoxFuture;
use metrics::Histogram;
use std::sync::Arc;
use std::time::Instant;

/// A store whose calls are timed. `N` operations, in the order of `ops`.
pub(crate) struct Timed<S: ?Sized, const N: usize> {
    inner: Arc<S>,
    hists: [Histogram; N],
}

impl<S: ?Sized + std::fmt::Debug, const N: usize> std::fmt::Debug for Timed<S, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

impl<S: ?Sized, const N: usize> Timed<S, N> {
    /// Wraps `inner` (named `store` in the metric) with operations `ops`.
    pub(crate) fn new(inner: Arc<S>, store: &'static str, ops: [&'static str; N]) -> Self {
        Self {
            inner,
            hists: ops.map(|op| metrics::histogram!(STORE_SECONDS, "store" => store, "op" => op)),
        }
    }

    /// Times operation `i`.
    fn time<'a, T: 'a>(&self, i: usize, fut: BoxFuture<'a, T>) -> BoxFuture<'a, T> {
        let h = self.hists[i].clone();
        Box::pin(async move {
            let started = Instant::now();
            let r = fut.await;
            h.record(started.elapsed().as_secs_f64());
            r
        })
    }
}

mod state {
    use super::Timed;
    use crate::server::QuotaKey;
    use crate::state::{ReplayError, ReplayStore, StateStore, StoreError};
    use futures_util::future::BoxFuture;
    use std::sync::Arc;

    /// The replay store, timed.
    pub(crate) fn replay(s: Arc<dyn ReplayStore>) -> Arc<dyn ReplayStore> {
        Arc::new(Timed::new(s, "replay", ["consume"]))
    }

    /// The state store, timed.
    pub(crate) fn state(s: Arc<dyn StateStore>) -> Arc<dyn StateStore> {
        Arc::new(Timed::new(s, "state", ["put", "get"]))
    }

    impl ReplayStore for Timed<dyn ReplayStore, 1> {
        fn consume(&self, id: [u8; 16], at: u64) -> BoxFuture<'_, Result<bool, ReplayError>> {
            self.time(0, self.inner.consume(id, at))
        }

        fn check(&self) -> BoxFuture<'_, Result<(), ReplayError>> {
            self.inner.check()
        }
    }

    impl StateStore for Timed<dyn StateStore, 2> {
        fn put(
            &self,
            id: [u8; 16],
            owner: &QuotaKey,
            sealed: Vec<u8>,
            expires_at: u64,
        ) -> BoxFuture<'_, Result<(), StoreError>> {
            self.time(0, self.inner.put(id, owner, sealed, expires_at))
        }

        fn get(&self, id: [u8; 16]) -> BoxFuture<'_, Result<Option<Vec<u8>>, StoreError>> {
            self.time(1, self.inner.get(id))
        }
    }
}

pub(crate) use state::{replay, state};

#[cfg(feature = "tasks")]
mod tasks {
    use super::Timed;
    use crate::server::QuotaKey;
    use crate::tasks::{StoredTask, TaskStore, TaskStoreError};
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
}

#[cfg(feature = "tasks")]
pub(crate) use tasks::task;

#[cfg(all(feature = "http", feature = "legacy"))]
mod sessions {
    use super::Timed;
    use crate::http::{
        SessionError, SessionStore, StreamAppend, StreamPage, StreamRead, StreamStore,
        StreamStoreError,
    };
    use crate::legacy::SessionRecord;
    use crate::server::QuotaKey;
    use futures_util::future::BoxFuture;
    use std::sync::Arc;
    use std::time::Duration;

    /// The session store, timed.
    pub(crate) fn session(s: Arc<dyn SessionStore>) -> Arc<dyn SessionStore> {
        Arc::new(Timed::new(
            s,
            "session",
            ["create", "touch", "update", "remove"],
        ))
    }

    /// The stream store, timed.
    pub(crate) fn stream(s: Arc<dyn StreamStore>) -> Arc<dyn StreamStore> {
        Arc::new(Timed::new(
            s,
            "stream",
            ["append", "read", "reading", "is_read"],
        ))
    }

    impl SessionStore for Timed<dyn SessionStore, 4> {
        fn create(
            &self,
            id: &str,
            owner: &QuotaKey,
            record: SessionRecord,
            idle: Duration,
        ) -> BoxFuture<'_, Result<(), SessionError>> {
            self.time(0, self.inner.create(id, owner, record, idle))
        }

        fn touch(
            &self,
            id: &str,
            owner: &QuotaKey,
            idle: Duration,
        ) -> BoxFuture<'_, Result<Option<SessionRecord>, SessionError>> {
            self.time(1, self.inner.touch(id, owner, idle))
        }

        fn update(
            &self,
            id: &str,
            record: SessionRecord,
            idle: Duration,
        ) -> BoxFuture<'_, Result<(), SessionError>> {
            self.time(2, self.inner.update(id, record, idle))
        }

        fn remove(&self, id: &str, owner: &QuotaKey) -> BoxFuture<'_, Result<bool, SessionError>> {
            self.time(3, self.inner.remove(id, owner))
        }
    }

    impl StreamStore for Timed<dyn StreamStore, 4> {
        fn append<'a>(
            &'a self,
            write: StreamAppend<'a>,
        ) -> BoxFuture<'a, Result<(), StreamStoreError>> {
            self.time(0, self.inner.append(write))
        }

        fn read<'a>(
            &'a self,
            read: StreamRead<'a>,
        ) -> BoxFuture<'a, Result<StreamPage, StreamStoreError>> {
            self.time(1, self.inner.read(read))
        }

        fn reading<'a>(
            &'a self,
            session: &'a str,
            stream: u64,
            within: Duration,
        ) -> BoxFuture<'a, Result<(), StreamStoreError>> {
            self.time(2, self.inner.reading(session, stream, within))
        }

        fn is_read<'a>(
            &'a self,
            session: &'a str,
            stream: u64,
        ) -> BoxFuture<'a, Result<bool, StreamStoreError>> {
            self.time(3, self.inner.is_read(session, stream))
        }
    }
}

#[cfg(all(feature = "http", feature = "legacy"))]
pub(crate) use sessions::{session, stream};
