//! Settings of the HTTP endpoint.

use std::time::Duration;

/// Which `Origin` (and `Host`) values are accepted; anything else is 403 (DNS-rebinding
/// protection).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OriginPolicy {
    /// Local use: `Host` must be `localhost`, `127.0.0.1` or `[::1]` (any port), and an
    /// `Origin`, when present, must point at one of those. The default.
    Localhost,
    /// Exactly these origins (`https://app.example.com`); requests without `Origin` (not
    /// from a browser) pass. `Host` is not checked (proxies rewrite it).
    Allow(Vec<String>),
    /// No check at all. Only behind something that does it for you.
    DangerousAny,
}

/// Settings of the HTTP endpoint.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    pub(crate) origins: OriginPolicy,
    pub(crate) max_body: usize,
    pub(crate) timeout: Option<Duration>,
    pub(crate) keep_alive: Duration,
    /// 2025-11-25 sessions (see `HttpConfig::sessions`).
    #[cfg(feature = "legacy")]
    pub(crate) sessions: super::SessionConfig,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            origins: OriginPolicy::Localhost,
            max_body: 4 * 1024 * 1024,
            timeout: Some(Duration::from_secs(300)),
            keep_alive: Duration::from_secs(15),
            #[cfg(feature = "legacy")]
            sessions: super::SessionConfig::default(),
        }
    }
}

impl HttpConfig {
    /// Default settings: localhost origins, 4 MiB bodies, 5 minute requests, keep-alive
    /// comments every 15 s on streams.
    pub fn new() -> Self {
        Self::default()
    }

    /// The origin policy.
    pub fn origins(mut self, policy: OriginPolicy) -> Self {
        self.origins = policy;
        self
    }

    /// The largest request body in bytes; larger ones get 413.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// How long a request may run (`None`: no limit). A request that runs out gets a
    /// JSON-RPC error and HTTP 504; its handler is stopped. (`subscriptions/listen` streams
    /// are not limited.)
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// How often an idle stream sends an SSE comment to keep proxies from closing it.
    pub fn keep_alive(mut self, every: Duration) -> Self {
        self.keep_alive = every;
        self
    }
}
