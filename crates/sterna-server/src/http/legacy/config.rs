//! How 2025-11-25 sessions are kept over HTTP: store, bus, shared streams, expiry, limits.

use super::{MemorySessionStore, SessionBus, SessionLimits, SessionStore, StreamStore};
use std::sync::Arc;
use std::time::Duration;

/// Settings of 2025-11-25 sessions over HTTP.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) bus: Option<Arc<dyn SessionBus>>,
    pub(crate) streams: Option<Arc<dyn StreamStore>>,
    pub(crate) idle: Duration,
    pub(crate) resume_window: Duration,
    pub(crate) retry: Duration,
    pub(crate) limits: SessionLimits,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            store: Arc::new(MemorySessionStore::default()),
            bus: None,
            streams: None,
            idle: Duration::from_secs(30 * 60),
            resume_window: Duration::from_secs(60),
            retry: Duration::from_secs(3),
            limits: SessionLimits::default(),
        }
    }
}

impl SessionConfig {
    /// In-memory sessions (at most 10 000, 100 per client, expiring after 30 minutes
    /// unused), with the default [`SessionLimits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// What one session may hold and do (sizes of its record, requests in flight,
    /// pending pushes, what it may publish to the fleet).
    pub fn limits(mut self, limits: SessionLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Where sessions are kept (default: in memory, this process only).
    pub fn store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = store;
        self
    }

    /// How replicas reach each other (answers to pushed questions, cancellations and
    /// session ends that arrive at another replica than the one running the request).
    /// Without it, route legacy traffic sticky by `Mcp-Session-Id`.
    pub fn bus(mut self, bus: Arc<dyn SessionBus>) -> Self {
        self.bus = Some(bus);
        self
    }

    /// Where the events of sessions' streams are shared, so that a client whose stream
    /// broke resumes it with `Last-Event-ID` on any replica (a Redis stream per session
    /// with `sterna-redis`). Without it (the default) the events stay in the memory of
    /// the replica running the request, and only it can resume the stream (another one
    /// answers `400`): route `GET`s that carry `Last-Event-ID` sticky then.
    pub fn streams(mut self, store: Arc<dyn StreamStore>) -> Self {
        self.streams = Some(store);
        self
    }

    /// How long an unused session lives (default 30 minutes).
    pub fn idle(mut self, idle: Duration) -> Self {
        self.idle = idle;
        self
    }

    /// How long a request whose stream broke waits for the client to resume it before
    /// it is cancelled (default 60 s).
    pub fn resume_window(mut self, window: Duration) -> Self {
        self.resume_window = window;
        self
    }

    /// The reconnection delay announced in priming events (`retry`, default 3 s).
    pub fn retry(mut self, retry: Duration) -> Self {
        self.retry = retry;
        self
    }
}
