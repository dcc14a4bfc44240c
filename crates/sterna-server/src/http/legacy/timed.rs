//! The session and stream stores, timed (`sterna_store_seconds{store="session"|"stream"}`).

use crate::http::{
    SessionError, SessionStore, StreamAppend, StreamPage, StreamRead, StreamStore, StreamStoreError,
};
use crate::legacy::SessionRecord;
use crate::metrics::stores::Timed;
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
    ) -> BoxFuture<'_, Result<Option<Arc<SessionRecord>>, SessionError>> {
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
