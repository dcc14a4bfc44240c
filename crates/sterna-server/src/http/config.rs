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
///
/// | setting | default | beyond it |
/// |---|---|---|
/// | [`max_body`](Self::max_body) | 4 MiB | 413 |
/// | [`timeout`](Self::timeout) | 5 minutes per request (after its body) | 504 |
/// | [`header_timeout`](Self::header_timeout) | 30 s to send the headers | connection closed |
/// | [`body_timeout`](Self::body_timeout) | 30 s to send the whole body | 408, connection closed |
/// | [`max_connections`](Self::max_connections) | [`DEFAULT_MAX_CONNECTIONS`] (1024), at most ¾ of `ulimit -n` | the longest idle connection closes for the new one; waits in the accept queue while all are busy |
/// | [`http2_max_streams`](Self::http2_max_streams) | 100 streams open at once per HTTP/2 connection | `RST_STREAM(REFUSED_STREAM)` |
/// | [`max_header_list`](Self::max_header_list) | 16 KiB of HTTP/2 headers per request | stream refused |
/// | [`requests_per_client`](Self::requests_per_client) | [`DEFAULT_REQUESTS_PER_CLIENT`] (128) requests in flight per client | 429 |
/// | [`trusted_proxies`](Self::trusted_proxies) | none: the TCP peer is the client | 400 for a trusted proxy's unreadable `X-Forwarded-For` (or `Forwarded`) |
///
/// The header deadline (on HTTP/2: the idle deadline of a connection with no stream
/// open), the connection limit, the trusted proxies and the HTTP/2 settings are
/// [`HttpServer`](super::HttpServer)'s; the others hold wherever
/// [`McpService`](super::McpService) is mounted, per request, so per HTTP/2 stream too.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    pub(crate) origins: OriginPolicy,
    pub(crate) max_body: usize,
    pub(crate) timeout: Option<Duration>,
    pub(crate) keep_alive: Duration,
    /// 2025-11-25 sessions (see `HttpConfig::sessions`).
    #[cfg(feature = "legacy")]
    pub(crate) sessions: super::SessionConfig,
    pub(crate) header_timeout: Duration,
    pub(crate) body_timeout: Option<Duration>,
    pub(crate) max_connections: Option<usize>,
    pub(crate) http2: bool,
    pub(crate) http2_max_streams: u32,
    pub(crate) max_header_list: u32,
    pub(crate) proxies: super::TrustedProxies,
    pub(crate) requests_per_client: usize,
}

/// The most connections [`HttpServer`](super::HttpServer) serves at once by default (also
/// capped at three quarters of the process's open-file limit).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// How many requests one client (an authenticated principal, or an anonymous peer
/// address: see [`QuotaKey`](crate::server::QuotaKey)) may have in flight at once by
/// default, on one endpoint (see [`HttpConfig::requests_per_client`]).
pub const DEFAULT_REQUESTS_PER_CLIENT: usize = 128;

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            origins: OriginPolicy::Localhost,
            max_body: 4 * 1024 * 1024,
            timeout: Some(Duration::from_secs(300)),
            keep_alive: Duration::from_secs(15),
            #[cfg(feature = "legacy")]
            sessions: super::SessionConfig::default(),
            header_timeout: Duration::from_secs(30),
            body_timeout: Some(Duration::from_secs(30)),
            max_connections: None,
            http2: true,
            http2_max_streams: 100,
            max_header_list: 16 * 1024,
            proxies: super::TrustedProxies::default(),
            requests_per_client: DEFAULT_REQUESTS_PER_CLIENT,
        }
    }
}

impl HttpConfig {
    /// Default settings: localhost origins, 4 MiB bodies, 5 minute requests, keep-alive
    /// comments every 15 s on streams; against slow or idle clients, 30 s to send the
    /// headers, 30 s to send the body, and at most [`DEFAULT_MAX_CONNECTIONS`] connections
    /// (fewer when the open-file limit is low).
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

    /// How long a client has to send a request's headers, from the moment the connection
    /// is ready for them (a new connection, or a keep-alive one after its last answer);
    /// beyond it the connection is shut down, and dropped half a second later if a head is
    /// still arriving. Default 30 s. Applies to
    /// [`HttpServer`](super::HttpServer) (a server of your own sets its own).
    pub fn header_timeout(mut self, limit: Duration) -> Self {
        self.header_timeout = limit;
        self
    }

    /// How long a client has to send the whole body of a request, from the end of its
    /// headers (`None`: no limit). A body still incomplete then gets 408 and the
    /// connection closes. Default 30 s; raise it with [`max_body`](Self::max_body) for
    /// large bodies over slow links. It is the
    /// [`BodyTimeoutLayer`](super::layers::BodyTimeoutLayer) of [`McpService`](super::McpService),
    /// so it holds wherever the service is mounted.
    pub fn body_timeout(mut self, limit: Option<Duration>) -> Self {
        self.body_timeout = limit;
        self
    }

    /// The most connections [`HttpServer`](super::HttpServer) serves at once. When every
    /// slot is taken, the connection idle the longest (no request in flight for at least a
    /// second) is closed to serve a new one; only while no connection is idle that long do
    /// new ones wait in the listener's accept queue. Default [`DEFAULT_MAX_CONNECTIONS`],
    /// lowered to three quarters of the process's open-file limit (`ulimit -n`) when that
    /// is smaller, so the process keeps descriptors for everything else. A value set here
    /// is used as it is (at least 1).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = Some(n.max(1));
        self
    }

    /// Whether [`HttpServer`](super::HttpServer) speaks HTTP/2 (default yes): prior-knowledge
    /// h2c on a plain socket (told apart from HTTP/1.1 by the client's first bytes), and
    /// `h2` offered by ALPN under [`tls`](super::HttpServer::tls). Off: HTTP/1.1 only.
    pub fn http2(mut self, on: bool) -> Self {
        self.http2 = on;
        self
    }

    /// The most streams (requests) one HTTP/2 connection may have open at once, announced
    /// in its settings; more are refused with `RST_STREAM(REFUSED_STREAM)`. Default 100
    /// (RFC 9113's recommended minimum), at least 1. With
    /// [`max_connections`](Self::max_connections) it bounds the requests served at once.
    pub fn http2_max_streams(mut self, n: u32) -> Self {
        self.http2_max_streams = n.max(1);
        self
    }

    /// The largest header list of an HTTP/2 request, in bytes as HTTP/2 counts them (names
    /// and values plus 32 per field), announced in the connection's settings; a larger one
    /// is refused. Default 16 KiB, at least 1 KiB.
    pub fn max_header_list(mut self, bytes: u32) -> Self {
        self.max_header_list = bytes.max(1024);
        self
    }

    /// The proxies in front of [`HttpServer`](super::HttpServer) whose `X-Forwarded-For`
    /// (or, [`reading`](super::TrustedProxies::reading) it, `Forwarded`) names the client
    /// (default none): anonymous clients behind them then hold fair
    /// shares of their own, where otherwise they all count as the proxy. See
    /// [`TrustedProxies`](super::TrustedProxies) for the rule. Where you mount
    /// [`McpService`](super::McpService) yourself, insert the [`PeerAddr`](super::PeerAddr)
    /// that [`TrustedProxies::client`](super::TrustedProxies::client) gives.
    pub fn trusted_proxies(mut self, proxies: super::TrustedProxies) -> Self {
        self.proxies = proxies;
        self
    }

    /// How many requests one client may have in flight at once (default
    /// [`DEFAULT_REQUESTS_PER_CLIENT`], at least 1): from the moment its headers arrive
    /// to the end of its answer, SSE streams included (2025 GET streams, requests waiting
    /// for a pushed question's answer, `subscriptions/listen`), so one client cannot hold
    /// every connection busy. One more is refused before its body is read: 429 with a
    /// JSON-RPC error `-32603` whose `data` names `requests_per_client`. Beyond its
    /// share a client keeps 16 places to let go of it: answers to questions its 2025
    /// sessions were pushed and `notifications/cancelled` for its requests (a POST with
    /// `Mcp-Session-Id` whose body turns out to be anything else gets the same 429), and
    /// DELETEs of those sessions. Otherwise a client
    /// whose every request waits for its answers could never send them. A client is its
    /// [`QuotaKey`](crate::server::QuotaKey); anonymous requests with no
    /// [`PeerAddr`](super::PeerAddr) (an endpoint mounted without one) are not counted,
    /// since they cannot be told apart. Behind a load balancer, set
    /// [`trusted_proxies`](Self::trusted_proxies), or every anonymous client counts as
    /// the balancer.
    pub fn requests_per_client(mut self, n: usize) -> Self {
        self.requests_per_client = n.max(1);
        self
    }
}
