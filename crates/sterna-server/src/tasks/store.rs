//! Where task records live: a [`TaskStore`] holds one versioned record per task, and
//! every change is a compare-and-swap on the version, so concurrent `tasks/update`s,
//! cancels and runs on any number of replicas never lose each other's writes.
//!
//! The store sees records as opaque bytes; the SDK encodes and decodes them (and does
//! all the logic: outstanding questions, answers, status), so a store is a few lines.
//! Each client (its [`QuotaKey`]) may hold a bounded share of the records.

use crate::server::QuotaKey;
use crate::server::quota::Holdings;
use futures_util::future::BoxFuture;
use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::watch;

/// Why a store could not answer.
#[derive(Debug)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// The store holds as many live tasks as it may (fail closed: no new task).
    Full,
    /// The client (its [`QuotaKey`]) already holds `limit` live task records, its share
    /// (its new tasks are refused until one of its own expires; other clients are
    /// unaffected).
    QuotaExceeded {
        /// The store's per-principal limit.
        limit: usize,
    },
    /// The store is unreachable or failed.
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full => f.write_str("task store is full"),
            Self::QuotaExceeded { limit } => {
                write!(f, "this client holds {limit} live tasks, its share")
            }
            Self::Unavailable(e) => write!(f, "task store unavailable: {e}"),
        }
    }
}

impl std::error::Error for TaskStoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Full | Self::QuotaExceeded { .. } => None,
            Self::Unavailable(e) => Some(e.as_ref()),
        }
    }
}

/// A record as stored: its bytes and its version (bumped by every successful swap).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTask {
    /// Incremented by each [`swap`](TaskStore::swap); 1 after [`create`](TaskStore::create).
    pub version: u64,
    /// The encoded record (opaque to the store).
    pub bytes: Vec<u8>,
}

/// Holds task records, shared by every replica that may serve a task's `tasks/*`.
///
/// Every method touches one record. `keep` is how long the record must stay readable
/// from now; after that the store may forget it.
pub trait TaskStore: Send + Sync + fmt::Debug + 'static {
    /// Stores a new record of `owner` at version 1. `Ok(false)` when the id is taken.
    /// Must be readable by every replica when it returns (a `tasks/get` follows at once).
    /// Refused with [`TaskStoreError::QuotaExceeded`] when `owner` already holds its
    /// share of unexpired records.
    fn create(
        &self,
        id: &str,
        owner: &QuotaKey,
        bytes: Vec<u8>,
        keep: Duration,
    ) -> BoxFuture<'_, Result<bool, TaskStoreError>>;

    /// The record, if the store still has it.
    fn load(&self, id: &str) -> BoxFuture<'_, Result<Option<StoredTask>, TaskStoreError>>;

    /// Replaces the record if it is still at `version` (then at `version + 1`).
    /// `Ok(false)` when another writer got there first (or the record is gone).
    fn swap(
        &self,
        id: &str,
        version: u64,
        bytes: Vec<u8>,
        keep: Duration,
    ) -> BoxFuture<'_, Result<bool, TaskStoreError>>;

    /// The record's version, without its bytes: what a running task polls to notice a
    /// cancel written by another replica. The default reads the whole record; a store
    /// that can answer with less should.
    fn version(&self, id: &str) -> BoxFuture<'_, Result<Option<u64>, TaskStoreError>> {
        let load = self.load(id);
        Box::pin(async move { Ok(load.await?.map(|s| s.version)) })
    }

    /// For a store that sees every change itself (one kept in this process): a future
    /// that resolves once record `id` is no longer at `version` (swapped, gone, expired),
    /// so a running task waits without reading anything. `None` (the default): running
    /// tasks poll [`version`](Self::version) instead, every 0.5 s at first, backing off
    /// to every 5 s, so a cancel on another replica stops the run within about 5 s (the
    /// task itself is `cancelled` at once).
    fn changed(&self, id: &str, version: u64) -> Option<BoxFuture<'static, ()>> {
        let _ = (id, version);
        None
    }
}

struct Entry {
    stored: StoredTask,
    until: std::time::Instant,
    owner: QuotaKey,
    /// Wakes the tasks waiting on this record (created when the first one waits; a
    /// swap sends, a removal drops it).
    changed: Option<watch::Sender<()>>,
}

#[derive(Default)]
struct Inner {
    map: HashMap<String, Entry>,
    holdings: Holdings,
}

/// An in-process [`TaskStore`] (one process only): bounded, with expiring records, and
/// at most [`per_principal`](Self::per_principal) of them for one client.
pub struct MemoryTaskStore {
    inner: Mutex<Inner>,
    capacity: usize,
    per_principal: usize,
}

impl fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryTaskStore")
            .field("capacity", &self.capacity)
            .field("per_principal", &self.per_principal)
            .finish()
    }
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::with_capacity(10_000)
    }
}

impl MemoryTaskStore {
    /// A store holding at most `capacity` unexpired records (100 per client); when full,
    /// new tasks are refused rather than live ones forgotten.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            inner: Mutex::default(),
            capacity: capacity.max(1),
            per_principal: 100,
        }
    }

    /// How many unexpired records one client (an authenticated principal, or an
    /// anonymous peer address: see [`QuotaKey`]) may hold (default 100).
    pub fn per_principal(mut self, limit: usize) -> Self {
        self.per_principal = limit.max(1);
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn create_now(
        &self,
        id: &str,
        owner: &QuotaKey,
        bytes: Vec<u8>,
        keep: Duration,
    ) -> Result<bool, TaskStoreError> {
        let now = std::time::Instant::now();
        let mut guard = self.lock();
        let Inner { map, holdings } = &mut *guard;
        if map.get(id).is_some_and(|e| e.until > now) {
            return Ok(false);
        }
        if holdings.count(owner) >= self.per_principal {
            let live = |id: &str| map.get(id).is_some_and(|e| e.until > now);
            for dead in holdings.prune(owner, live) {
                map.remove(&dead);
            }
            if holdings.count(owner) >= self.per_principal {
                return Err(TaskStoreError::QuotaExceeded {
                    limit: self.per_principal,
                });
            }
        }
        if map.len() >= self.capacity {
            map.retain(|id, e| {
                let keep = e.until > now;
                if !keep {
                    holdings.remove(&e.owner, id);
                }
                keep
            });
            if map.len() >= self.capacity {
                return Err(TaskStoreError::Full);
            }
        }
        let stored = StoredTask { version: 1, bytes };
        let entry = Entry {
            stored,
            until: now + keep,
            owner: owner.clone(),
            changed: None,
        };
        if let Some(old) = map.insert(id.to_owned(), entry) {
            holdings.remove(&old.owner, id);
        }
        holdings.add(owner, id);
        Ok(true)
    }

    fn load_now(&self, id: &str) -> Option<StoredTask> {
        let now = std::time::Instant::now();
        let inner = self.lock();
        inner
            .map
            .get(id)
            .filter(|e| e.until > now)
            .map(|e| e.stored.clone())
    }

    fn load_version(&self, id: &str) -> Option<u64> {
        let now = std::time::Instant::now();
        let inner = self.lock();
        inner
            .map
            .get(id)
            .filter(|e| e.until > now)
            .map(|e| e.stored.version)
    }

    fn swap_now(&self, id: &str, version: u64, bytes: Vec<u8>, keep: Duration) -> bool {
        let now = std::time::Instant::now();
        let mut inner = self.lock();
        match inner.map.get_mut(id) {
            Some(e) if e.until > now && e.stored.version == version => {
                e.stored = StoredTask {
                    version: version + 1,
                    bytes,
                };
                e.until = now + keep;
                if let Some(tx) = &e.changed {
                    tx.send_replace(());
                }
                true
            }
            _ => false,
        }
    }
}

impl MemoryTaskStore {
    /// Resolves once `id` is no longer at `version` (ready at once if it is not now).
    fn changed_now(&self, id: &str, version: u64) -> BoxFuture<'static, ()> {
        let now = std::time::Instant::now();
        let mut inner = self.lock();
        let Some(e) = inner
            .map
            .get_mut(id)
            .filter(|e| e.until > now && e.stored.version == version)
        else {
            return Box::pin(std::future::ready(()));
        };
        let mut rx = e
            .changed
            .get_or_insert_with(|| watch::channel(()).0)
            .subscribe();
        let until = tokio::time::Instant::from_std(e.until);
        Box::pin(async move {
            tokio::select! {
                _ = rx.changed() => {}
                () = tokio::time::sleep_until(until) => {}
            }
        })
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(
        &self,
        id: &str,
        owner: &QuotaKey,
        bytes: Vec<u8>,
        keep: Duration,
    ) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        let r = self.create_now(id, owner, bytes, keep);
        Box::pin(std::future::ready(r))
    }

    fn load(&self, id: &str) -> BoxFuture<'_, Result<Option<StoredTask>, TaskStoreError>> {
        Box::pin(std::future::ready(Ok(self.load_now(id))))
    }

    fn swap(
        &self,
        id: &str,
        version: u64,
        bytes: Vec<u8>,
        keep: Duration,
    ) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        Box::pin(std::future::ready(Ok(
            self.swap_now(id, version, bytes, keep)
        )))
    }

    fn version(&self, id: &str) -> BoxFuture<'_, Result<Option<u64>, TaskStoreError>> {
        let v = self.load_version(id);
        Box::pin(std::future::ready(Ok(v)))
    }

    fn changed(&self, id: &str, version: u64) -> Option<BoxFuture<'static, ()>> {
        Some(self.changed_now(id, version))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_capacity() {
        let s = MemoryTaskStore::with_capacity(1);
        let keep = Duration::from_secs(60);
        let o = QuotaKey::of(&crate::server::Principal::new("o"));
        assert!(s.create_now("a", &o, b"1".to_vec(), keep).unwrap());
        assert!(!s.create_now("a", &o, b"x".to_vec(), keep).unwrap());
        let other = QuotaKey::of(&crate::server::Principal::new("other"));
        assert!(matches!(
            s.create_now("b", &other, vec![], keep),
            Err(TaskStoreError::Full)
        ));
        assert!(s.swap_now("a", 1, b"2".to_vec(), keep));
        assert!(
            !s.swap_now("a", 1, b"3".to_vec(), keep),
            "a stale version loses"
        );
        assert_eq!(
            s.load_now("a").unwrap(),
            StoredTask {
                version: 2,
                bytes: b"2".to_vec()
            }
        );
        assert!(s.load_now("b").is_none());
    }

    #[test]
    fn one_client_exhausting_its_share_leaves_the_others_theirs() {
        use crate::server::Principal;
        let s = MemoryTaskStore::with_capacity(100).per_principal(2);
        let keep = Duration::from_secs(60);
        let flood = QuotaKey::of(&Principal::new("flood"));
        let calm = QuotaKey::of(&Principal::new("calm"));
        assert!(s.create_now("f1", &flood, vec![], keep).unwrap());
        assert!(s.create_now("f2", &flood, vec![], keep).unwrap());
        assert!(matches!(
            s.create_now("f3", &flood, vec![], keep),
            Err(TaskStoreError::QuotaExceeded { limit: 2 })
        ));
        assert!(s.create_now("c1", &calm, vec![], keep).unwrap());
        // Expired records count for nobody.
        assert!(s.create_now("c2", &calm, vec![], Duration::ZERO).unwrap());
        assert!(s.create_now("c3", &calm, vec![], keep).unwrap());
        assert!(s.load_now("c2").is_none());
    }
}
