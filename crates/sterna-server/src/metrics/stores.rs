//! Store latency: each store a server is given is wrapped in [`Timed`], which records how
//! long every call took in `sterna_store_seconds{store, op}` (handles registered when
//! the server is built; a call costs a second box and two clock reads). The core's stores
//! are timed here; a wing times its own (`tasks::timed`, `http::legacy::timed`).

use super::STORE_SECONDS;
use futures_util::future::BoxFuture;
use metrics::Histogram;
use std::sync::Arc;
use std::time::Instant;

/// A store whose calls are timed. `N` operations, in the order of `ops`.
pub(crate) struct Timed<S: ?Sized, const N: usize> {
    pub(crate) inner: Arc<S>,
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
    pub(crate) fn time<'a, T: 'a>(&self, i: usize, fut: BoxFuture<'a, T>) -> BoxFuture<'a, T> {
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
        fn consume(
            &self,
            id: [u8; 16],
            owner: &QuotaKey,
            at: u64,
        ) -> BoxFuture<'_, Result<bool, ReplayError>> {
            self.time(0, self.inner.consume(id, owner, at))
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
