//! Where legacy HTTP sessions are kept: a small trait, and a bounded in-memory store.
//! A session that is not used for its idle time expires and everything it held goes.

use crate::server::legacy::SessionRecord;
use futures_util::future::{BoxFuture, ready};
use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// Why a session store could not answer.
#[derive(Debug)]
#[non_exhaustive]
pub enum SessionError {
    /// The store holds as many live sessions as it may (new sessions are refused with
    /// 503 until some expire or end).
    Full,
    /// The store is unreachable or failed.
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full => f.write_str("too many sessions"),
            Self::Unavailable(e) => write!(f, "session store unavailable: {e}"),
        }
    }
}

impl std::error::Error for SessionError {}

/// Keeps the records of legacy (2025-11-25) HTTP sessions. Every operation refreshes
/// nothing by itself: callers [`touch`](Self::touch) a session when it is used.
pub trait SessionStore: Send + Sync + fmt::Debug + 'static {
    /// Stores a new session, to expire after `idle` without use.
    fn create(
        &self,
        id: &str,
        record: SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'_, Result<(), SessionError>>;

    /// The session's record, if it exists and has not expired; refreshes its idle time.
    fn touch(
        &self,
        id: &str,
        idle: Duration,
    ) -> BoxFuture<'_, Result<Option<SessionRecord>, SessionError>>;

    /// Replaces the record of an existing session (log level, subscriptions …).
    fn update(
        &self,
        id: &str,
        record: SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'_, Result<(), SessionError>>;

    /// Ends a session; `true` when it existed.
    fn remove(&self, id: &str) -> BoxFuture<'_, Result<bool, SessionError>>;
}

/// An in-process [`SessionStore`] holding at most `capacity` unexpired sessions.
pub struct MemorySessionStore {
    sessions: Mutex<HashMap<String, (SessionRecord, Instant)>>,
    capacity: usize,
    swept: Mutex<Instant>,
}

impl fmt::Debug for MemorySessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemorySessionStore")
            .field("capacity", &self.capacity)
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
    /// A store of at most `capacity` live sessions.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            sessions: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
            swept: Mutex::new(Instant::now()),
        }
    }

    /// How many sessions it holds (expired ones included until they are swept).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (SessionRecord, Instant)>> {
        let mut map = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        // Expired sessions go at most once a second, whatever else happens.
        let now = Instant::now();
        let mut swept = self.swept.lock().unwrap_or_else(|p| p.into_inner());
        if now.duration_since(*swept) >= Duration::from_secs(1) {
            *swept = now;
            map.retain(|_, (_, until)| *until > now);
            map.shrink_to_fit();
        }
        map
    }

    fn insert(&self, id: &str, record: SessionRecord, idle: Duration) -> Result<(), SessionError> {
        let mut map = self.lock();
        if map.len() >= self.capacity {
            let now = Instant::now();
            map.retain(|_, (_, until)| *until > now);
            if map.len() >= self.capacity {
                return Err(SessionError::Full);
            }
        }
        map.insert(id.to_owned(), (record, Instant::now() + idle));
        Ok(())
    }

    fn get(&self, id: &str, idle: Duration) -> Option<SessionRecord> {
        let mut map = self.lock();
        let now = Instant::now();
        match map.get_mut(id) {
            Some((record, until)) if *until > now => {
                *until = now + idle;
                Some(record.clone())
            }
            Some(_) => {
                map.remove(id);
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
        record: SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'_, Result<(), SessionError>> {
        Box::pin(ready(self.insert(id, record, idle)))
    }

    fn touch(
        &self,
        id: &str,
        idle: Duration,
    ) -> BoxFuture<'_, Result<Option<SessionRecord>, SessionError>> {
        Box::pin(ready(Ok(self.get(id, idle))))
    }

    fn update(
        &self,
        id: &str,
        record: SessionRecord,
        idle: Duration,
    ) -> BoxFuture<'_, Result<(), SessionError>> {
        let mut map = self.lock();
        if let Some(slot) = map.get_mut(id) {
            *slot = (record, Instant::now() + idle);
        }
        Box::pin(ready(Ok(())))
    }

    fn remove(&self, id: &str) -> BoxFuture<'_, Result<bool, SessionError>> {
        Box::pin(ready(Ok(self.lock().remove(id).is_some())))
    }
}
