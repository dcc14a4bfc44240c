//! Where legacy HTTP sessions are kept: a small trait, and a bounded in-memory store.
//! A session that is not used for its idle time expires and everything it held goes.
//! Each client (its [`QuotaKey`]) may hold a bounded share of the sessions.

use crate::fast_map::FastMap;
use crate::legacy::SessionRecord;
use crate::server::QuotaKey;
use crate::server::quota::Holdings;
use futures_util::future::{BoxFuture, ready};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// Why a session store could not answer.
#[derive(Debug)]
#[non_exhaustive]
pub enum SessionError {
    /// The store holds as many live sessions as it may (new sessions are refused with
    /// 503 until some expire or end).
    Full,
    /// The client (its [`QuotaKey`]) already holds `limit` live sessions, its share (new
    /// sessions of this client are refused with 429 until one of its own expires or
    /// ends; other clients are unaffected).
    QuotaExceeded {
        /// The store's per-principal limit.
        limit: usize,
    },
    /// The store is unreachable or failed.
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full => f.write_str("too many sessions"),
            Self::QuotaExceeded { limit } => {
                write!(f, "this client holds {limit} sessions, its share")
            }
            Self::Unavailable(e) => write!(f, "session store unavailable: {e}"),
        }
    }
}

impl std::error::Error for SessionError {}

/// Keeps the records of legacy (2025-11-25) HTTP sessions. Every operation refreshes
/// nothing by itself: callers [`touch`](Self::touch) a session when it is used.
///
/// `owner` is the client a session counts against: a store refuses a new session of an
/// owner that already holds its share ([`SessionError::QuotaExceeded`]).
pub trait SessionStore: Send + Sync + fmt::Debug + 'static {
    /// Stores a new session of `owner`, to expire after `idle` without use.
    fn create(
        &self,
        id: &str,
        owner: &QuotaKey,
        record: SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'_, Result<(), SessionError>>;

    /// The session's record, if it exists and has not expired; refreshes its idle time.
    /// `owner` is the client using it now (a store may keep its count of `owner`'s
    /// sessions in step; the record says whose session it is). Shared, not copied: a
    /// store that keeps records in memory hands out the one it holds.
    fn touch(
        &self,
        id: &str,
        owner: &QuotaKey,
        idle: Duration,
    ) -> BoxFuture<'_, Result<Option<Arc<SessionRecord>>, SessionError>>;

    /// Replaces the record of an existing session (log level, subscriptions …).
    fn update(
        &self,
        id: &str,
        record: SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'_, Result<(), SessionError>>;

    /// Ends a session of `owner`; `true` when it existed.
    fn remove(&self, id: &str, owner: &QuotaKey) -> BoxFuture<'_, Result<bool, SessionError>>;
}

struct Entry {
    record: Arc<SessionRecord>,
    until: Instant,
    owner: QuotaKey,
}

#[derive(Default)]
struct Inner {
    map: FastMap<String, Entry>,
    holdings: Holdings,
}

impl Inner {
    fn forget(&mut self, id: &str) -> Option<Entry> {
        let entry = self.map.remove(id)?;
        self.holdings.remove(&entry.owner, id);
        Some(entry)
    }

    fn sweep(&mut self, now: Instant) {
        let Inner { map, holdings } = self;
        map.retain(|id, e| {
            let keep = e.until > now;
            if !keep {
                holdings.remove(&e.owner, id);
            }
            keep
        });
    }
}

/// An in-process [`SessionStore`] holding at most `capacity` unexpired sessions, at most
/// [`per_principal`](Self::per_principal) of them for one client.
pub struct MemorySessionStore {
    inner: Mutex<Inner>,
    capacity: usize,
    per_principal: usize,
    swept: Mutex<Instant>,
}

impl fmt::Debug for MemorySessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemorySessionStore")
            .field("capacity", &self.capacity)
            .field("per_principal", &self.per_principal)
            .field("sessions", &self.len())
            .finish()
    }
}

impl Default for MemorySessionStore {
    fn default() -> Self {
        Self::with_capacity(10_000)
    }
}

impl MemorySessionStore {
    /// A store of at most `capacity` live sessions, 100 per client.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            inner: Mutex::default(),
            capacity: capacity.max(1),
            per_principal: 100,
            swept: Mutex::new(Instant::now()),
        }
    }

    /// How many live sessions one client (an authenticated principal, or an anonymous
    /// peer address: see [`QuotaKey`]) may hold (default 100).
    pub fn per_principal(mut self, limit: usize) -> Self {
        self.per_principal = limit.max(1);
        self
    }

    /// How many sessions it holds (expired ones included until they are swept).
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.lock_at(Instant::now())
    }

    /// The map, swept of expired sessions if a second has passed since the last sweep.
    fn lock_at(&self, now: Instant) -> std::sync::MutexGuard<'_, Inner> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        // Expired sessions go at most once a second, whatever else happens.
        let mut swept = self.swept.lock().unwrap_or_else(|p| p.into_inner());
        if now.duration_since(*swept) >= Duration::from_secs(1) {
            *swept = now;
            inner.sweep(now);
            inner.map.shrink_to_fit();
        }
        inner
    }

    fn insert(
        &self,
        id: &str,
        owner: &QuotaKey,
        record: SessionRecord,
        idle: Duration,
    ) -> Result<(), SessionError> {
        let mut inner = self.lock();
        let now = Instant::now();
        if inner.holdings.count(owner) >= self.per_principal {
            let Inner { map, holdings } = &mut *inner;
            let live = |id: &str| map.get(id).is_some_and(|e| e.until > now);
            for dead in holdings.prune(owner, live) {
                map.remove(&dead);
            }
            if inner.holdings.count(owner) >= self.per_principal {
                return Err(SessionError::QuotaExceeded {
                    limit: self.per_principal,
                });
            }
        }
        if inner.map.len() >= self.capacity {
            inner.sweep(now);
            if inner.map.len() >= self.capacity {
                return Err(SessionError::Full);
            }
        }
        let entry = Entry {
            record: Arc::new(record),
            until: now + idle,
            owner: owner.clone(),
        };
        inner.forget(id);
        inner.holdings.add(owner, id);
        inner.map.insert(id.to_owned(), entry);
        Ok(())
    }

    fn get(&self, id: &str, idle: Duration) -> Option<Arc<SessionRecord>> {
        let now = Instant::now();
        let mut inner = self.lock_at(now);
        match inner.map.get_mut(id) {
            Some(e) if e.until > now => {
                e.until = now + idle;
                Some(e.record.clone())
            }
            Some(_) => {
                inner.forget(id);
                None
            }
            None => None,
        }
    }
}

impl SessionStore for MemorySessionStore {
    fn create(
        &self,
        id: &str,
        owner: &QuotaKey,
        record: SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'_, Result<(), SessionError>> {
        Box::pin(ready(self.insert(id, owner, record, idle)))
    }

    fn touch(
        &self,
        id: &str,
        _owner: &QuotaKey,
        idle: Duration,
    ) -> BoxFuture<'_, Result<Option<Arc<SessionRecord>>, SessionError>> {
        Box::pin(ready(Ok(self.get(id, idle))))
    }

    fn update(
        &self,
        id: &str,
        record: SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'_, Result<(), SessionError>> {
        let mut inner = self.lock();
        if let Some(e) = inner.map.get_mut(id) {
            e.record = Arc::new(record);
            e.until = Instant::now() + idle;
        }
        Box::pin(ready(Ok(())))
    }

    fn remove(&self, id: &str, _owner: &QuotaKey) -> BoxFuture<'_, Result<bool, SessionError>> {
        Box::pin(ready(Ok(self.lock().forget(id).is_some())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::Principal;

    fn record() -> SessionRecord {
        SessionRecord {
            version: "2025-11-25".into(),
            capabilities: Default::default(),
            client: sterna_types::meta::Implementation::new("t", "1"),
            initialized: false,
            log_level: None,
            subscriptions: Default::default(),
            principal: None,
            dpop_jkt: None,
        }
    }

    #[tokio::test]
    async fn one_client_exhausting_its_share_leaves_the_others_theirs() {
        let store = MemorySessionStore::with_capacity(10).per_principal(3);
        let idle = Duration::from_secs(60);
        let flood = QuotaKey::of(&Principal::anonymous().with_peer([10, 0, 0, 1].into()));
        let calm = QuotaKey::of(&Principal::anonymous().with_peer([10, 0, 0, 2].into()));
        for i in 0..3 {
            store
                .create(&format!("f{i}"), &flood, record(), idle)
                .await
                .unwrap();
        }
        let refused = store.create("f3", &flood, record(), idle).await;
        assert!(matches!(
            refused,
            Err(SessionError::QuotaExceeded { limit: 3 })
        ));
        store.create("c0", &calm, record(), idle).await.unwrap();
        // Ending one of its sessions gives the client its slot back.
        assert!(store.remove("f0", &flood).await.unwrap());
        store.create("f3", &flood, record(), idle).await.unwrap();
        // Expired sessions count for nobody.
        let short = Duration::from_millis(1);
        store.create("c1", &calm, record(), short).await.unwrap();
        store.create("c2", &calm, record(), short).await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        store.create("c3", &calm, record(), idle).await.unwrap();
        store.create("c4", &calm, record(), idle).await.unwrap();
        assert_eq!(store.len(), 6);
    }
}
