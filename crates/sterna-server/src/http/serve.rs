//! Serving the endpoint in one call.

use super::auth::AuthLayer;
use super::config::HttpConfig;
use super::conn::{self, Activity, Closing, Counted, Http2Limits, Protocols, SpanExecutor};
use super::listen;
use super::routed::{Routed, TextRoute, auth_or_plain};
use super::served::Served;
use super::service::McpService;
use crate::server::Server;
use hyper_util::server::conn::auto;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// Serves a [`Server`] over Streamable HTTP on one path (default `/mcp`), in HTTP/1.1 and
/// HTTP/2 on the same port: prior-knowledge h2c on a plain socket (told apart by the
/// client's first bytes), or, with [`tls`](Self::tls), whichever ALPN agrees (`h2`,
/// `http/1.1`). See [`HttpConfig`] for the bounds (they hold per HTTP/2 stream too).
///
/// ```no_run
/// # async fn run(server: sterna_server::Server) -> std::io::Result<()> {
/// use sterna_server::http::HttpServer;
/// HttpServer::new(server).serve("127.0.0.1:3000".parse().unwrap()).await
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct HttpServer {
    server: Server,
    config: HttpConfig,
    built: Option<McpService>,
    path: Arc<str>,
    auth: Option<AuthLayer>,
    headers: Arc<http::HeaderMap>,
    text: Option<Arc<TextRoute>>,
    #[cfg(feature = "tls")]
    tls: Option<Arc<rustls::ServerConfig>>,
}

impl HttpServer {
    /// Serves `server` at `/mcp` with default settings.
    pub fn new(server: Server) -> Self {
        Self {
            server,
            config: HttpConfig::default(),
            built: None,
            path: Arc::from("/mcp"),
            auth: None,
            headers: Arc::default(),
            text: None,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }

    /// Serves an endpoint built beforehand: one that something else also holds, such as a
    /// fleet's bus that hands it what other replicas publish (`sterna-redis`).
    pub fn from_service(service: McpService) -> Self {
        let mut me = Self::new(service.server().clone());
        me.built = Some(service);
        me
    }

    /// Endpoint settings (replaces the endpoint given to [`from_service`](Self::from_service)).
    pub fn config(mut self, config: HttpConfig) -> Self {
        self.config = config;
        self.built = None;
        self
    }

    /// The most connections served at once (see [`HttpConfig::max_connections`]); keeps
    /// an endpoint given to [`from_service`](Self::from_service).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.config.max_connections = Some(n.max(1));
        self
    }

    /// How long a client has to send a request's headers (see
    /// [`HttpConfig::header_timeout`]); keeps an endpoint given to
    /// [`from_service`](Self::from_service).
    pub fn header_timeout(mut self, limit: Duration) -> Self {
        self.config.header_timeout = limit;
        self
    }

    /// The proxies whose `X-Forwarded-For` (or `Forwarded`) names the client (see
    /// [`HttpConfig::trusted_proxies`]); keeps an endpoint given to
    /// [`from_service`](Self::from_service).
    pub fn trusted_proxies(mut self, proxies: super::TrustedProxies) -> Self {
        self.config.proxies = proxies;
        self
    }

    /// Adds a header to every response of the endpoint, e.g. the name of the replica that
    /// answered (`x-sterna-replica`), to see a load balancer at work. Applies when this
    /// server serves ([`serve`](Self::serve), [`serve_with_shutdown`](Self::serve_with_shutdown)),
    /// not to the service [`into_service`](Self::into_service) returns.
    pub fn response_header(mut self, name: http::HeaderName, value: http::HeaderValue) -> Self {
        Arc::make_mut(&mut self.headers).append(name, value);
        self
    }

    /// The endpoint path (other paths get 404).
    pub fn path(mut self, path: impl Into<Arc<str>>) -> Self {
        self.path = path.into();
        self
    }

    /// Also answers `GET path` with what `render` returns, as `content_type`: a
    /// monitoring document such as Prometheus metrics (`sterna serve --metrics` serves
    /// its exporter's at `/metrics` this way). It sits behind the same authentication as
    /// the endpoint, if any; keep it off the public side of a load balancer.
    pub fn text_route(
        mut self,
        path: impl Into<Arc<str>>,
        content_type: http::HeaderValue,
        render: impl Fn() -> String + Send + Sync + 'static,
    ) -> Self {
        self.text = Some(Arc::new(TextRoute {
            path: path.into(),
            content_type,
            render: Box::new(render),
        }));
        self
    }

    /// Terminates TLS with `config` (rustls): every connection starts with a TLS handshake
    /// (bounded by the [header deadline](HttpConfig::header_timeout)), then speaks what
    /// ALPN agreed: `h2` (HTTP/2) or `http/1.1` (also when the client offers no ALPN). A
    /// config without ALPN protocols gets `h2` and `http/1.1` (only `http/1.1` with
    /// [`HttpConfig::http2`] off); one with its own list keeps it.
    #[cfg(feature = "tls")]
    pub fn tls(mut self, config: Arc<rustls::ServerConfig>) -> Self {
        self.tls = Some(config);
        self
    }

    /// Authenticates every request.
    pub fn auth(mut self, layer: AuthLayer) -> Self {
        self.auth = Some(layer);
        self
    }

    /// The endpoint as a service, for your own HTTP stack.
    pub fn into_service(self) -> McpService {
        match self.built {
            Some(service) => service,
            None => McpService::new(self.server, self.config),
        }
    }

    /// Binds `addr` and serves until Ctrl-C or SIGTERM, then shuts down gracefully.
    pub async fn serve(self, addr: SocketAddr) -> io::Result<()> {
        let listener = TcpListener::bind(addr).await?;
        self.serve_with_shutdown(listener, listen::shutdown_signal())
            .await
    }

    /// Serves on `listener` until `shutdown` completes; then stops accepting, ends
    /// `subscriptions/listen` streams with their closing result, and waits for requests in
    /// flight (at most `grace`, 30 s) before returning.
    ///
    /// Against slow and idle clients ([`HttpConfig`]): at most
    /// [`max_connections`](HttpConfig::max_connections) connections are served at once
    /// (when full, the one idle the longest is closed for a new one; while every
    /// connection is busy, the rest wait in the listener's queue); each has
    /// [`header_timeout`](HttpConfig::header_timeout) to send a request's headers and
    /// [`body_timeout`](HttpConfig::body_timeout) to send its body. A failing `accept`
    /// (out of file descriptors) is retried after a growing pause (up to 1 s) and logged
    /// once per 10 s. At startup, [`Server::check_single_use`] logs an error when
    /// single-use tools cannot be protected.
    ///
    /// The future is boxed: a `main` that awaits it keeps a small stack (the server's
    /// state is on the heap, not copied down the runtime's `block_on`).
    pub fn serve_with_shutdown(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send,
    ) -> impl Future<Output = io::Result<()>> + Send {
        Box::pin(async move {
            let server = self.server.clone();
            // Says at startup (in the log) when single-use tools cannot be protected.
            let _ = server.check_single_use().await;
            let limit = listen::connection_limit(self.config.max_connections);
            let accept = Arc::new(self.accept(limit));
            tracing::debug!(max_connections = limit, "serving");
            let mut shutdown = std::pin::pin!(shutdown);
            tokio::select! {
                () = accept.run(&listener) => {}
                () = &mut shutdown => {}
            }
            drop(listener);
            server.close_subscriptions();
            accept.shutdown.cancel();
            // Every connection holds a permit until it has ended.
            let all = u32::try_from(limit).unwrap_or(u32::MAX);
            tokio::select! {
                _ = accept.permits.acquire_many(all) => {}
                () = tokio::time::sleep(Duration::from_secs(30)) => {
                    tracing::warn!("requests still in flight after 30 s; stopping anyway");
                }
            }
            Ok(())
        })
    }

    /// The accept loop's settings.
    fn accept(self, limit: usize) -> Accept {
        let c = &self.config;
        let limits = Http2Limits {
            max_streams: c.http2_max_streams,
            max_header_list: c.max_header_list,
        };
        let plain = if c.http2 {
            Protocols::Detect
        } else {
            Protocols::Http1
        };
        let build = |p| Arc::new(conn::builder(p, limits));
        Accept {
            path: self.path.clone(),
            auth: self.auth.clone(),
            headers: self.headers.clone(),
            text: self.text.clone(),
            proxies: c.proxies.clone(),
            plain: build(plain),
            #[cfg(feature = "tls")]
            http1: build(Protocols::Http1),
            #[cfg(feature = "tls")]
            http2: build(Protocols::Http2),
            #[cfg(feature = "tls")]
            tls: self.tls.as_ref().map(|t| super::tls::acceptor(t, c.http2)),
            header_timeout: c.header_timeout,
            permits: Arc::new(Semaphore::new(limit)),
            served: Arc::default(),
            shutdown: CancellationToken::new(),
            mcp: self.into_service(),
        }
    }
}

/// How often a full server with every connection busy looks again for one gone idle.
const RECHECK: Duration = Duration::from_millis(100);

/// The accept loop and what each connection gets.
struct Accept {
    path: Arc<str>,
    auth: Option<AuthLayer>,
    headers: Arc<http::HeaderMap>,
    text: Option<Arc<TextRoute>>,
    /// Whose `X-Forwarded-For` names the client.
    proxies: super::TrustedProxies,
    mcp: McpService,
    /// Connections on a plain socket: HTTP/1.1, or h2c when HTTP/2 is on.
    plain: Arc<auto::Builder<SpanExecutor>>,
    /// Under TLS, what ALPN agreed.
    #[cfg(feature = "tls")]
    http1: Arc<auto::Builder<SpanExecutor>>,
    #[cfg(feature = "tls")]
    http2: Arc<auto::Builder<SpanExecutor>>,
    #[cfg(feature = "tls")]
    tls: Option<tokio_rustls::TlsAcceptor>,
    /// The header deadline: also a connection's idle deadline and the TLS handshake's.
    header_timeout: Duration,
    /// One per connection served; the others wait in the listener's queue.
    permits: Arc<Semaphore>,
    /// The connections served, the idlest of which closes when the server is full.
    served: Arc<Served>,
    /// Cancelled at shutdown: every connection shuts down gracefully.
    shutdown: CancellationToken,
}

impl Accept {
    /// Accepts connections for ever (the caller stops it), each served once it has a
    /// permit. When none is left, the connection idle the longest is closed to free one
    /// ([`Served`]); while every connection is busy, the accepted one waits, and the
    /// next ones wait in the listener's queue.
    async fn run(self: &Arc<Self>, listener: &TcpListener) {
        let mut errors = listen::AcceptErrors::default();
        let mut full = listen::Throttle::default();
        loop {
            match listener.accept().await {
                Ok((stream, peer)) => {
                    errors.succeeded();
                    let Some(permit) = self.permit(&mut full).await else {
                        return;
                    };
                    self.serve(stream, peer, permit);
                }
                Err(e) => tokio::time::sleep(errors.failed(&e)).await,
            }
        }
    }

    /// A free slot, made by closing an idle connection when there is none: asked again
    /// every [`RECHECK`] while every connection is busy, since a busy one may go idle
    /// without giving its slot back.
    async fn permit(&self, full: &mut listen::Throttle) -> Option<OwnedSemaphorePermit> {
        loop {
            if let Ok(p) = self.permits.clone().try_acquire_owned() {
                return Some(p);
            }
            if !self.served.make_room()
                && let Some(quiet) = full.note(tokio::time::Instant::now())
            {
                tracing::warn!(
                    repeated = quiet,
                    "connection limit reached with no connection idle for a second; new connections wait (HttpConfig::max_connections)"
                );
            }
            tokio::select! {
                p = self.permits.clone().acquire_owned() => return p.ok(),
                () = tokio::time::sleep(RECHECK) => {}
            }
        }
    }

    fn serve(
        self: &Arc<Self>,
        stream: tokio::net::TcpStream,
        peer: SocketAddr,
        permit: OwnedSemaphorePermit,
    ) {
        let _ = stream.set_nodelay(true);
        let me = self.clone();
        // In the caller's span: its fields (a replica name) tag every message.
        tokio::spawn(tracing::Instrument::in_current_span(async move {
            me.connection(stream, peer).await;
            drop(permit);
        }));
    }

    /// One connection, from its first byte (or TLS handshake) to its end.
    async fn connection(&self, stream: tokio::net::TcpStream, peer: SocketAddr) {
        let activity = Arc::new(Activity::default());
        // Cancelled by the shutdown too (its child): a connection waits on one token for both.
        let evict = self.shutdown.child_token();
        let (_entry, evict) = self.served.add(activity.clone(), evict);
        let close = Closing {
            shutdown: self.shutdown.clone(),
            evict,
        };
        let routed = Routed {
            path: self.path.clone(),
            inner: self.mcp.for_peer(peer),
            headers: self.headers.clone(),
            text: self.text.clone(),
            peer,
            proxies: self.proxies.clone(),
        };
        let service = Counted::new(auth_or_plain(self.auth.as_ref(), routed), activity.clone());
        let idle = self.header_timeout;
        #[cfg(feature = "tls")]
        if let Some(acceptor) = &self.tls {
            let tls = tokio::time::timeout(self.header_timeout, acceptor.accept(stream));
            // A handshake holds its slot with nothing in flight: closed to make room too
            // (and at shutdown, which cancels `evict`).
            let tls = tokio::select! {
                tls = tls => tls,
                () = close.evict.cancelled() => {
                    return tracing::debug!("TLS handshake cut short (making room, or shutting down)");
                }
            };
            let tls = match tls {
                Ok(Ok(tls)) => tls,
                Ok(Err(e)) => return tracing::debug!(error = %e, "TLS handshake failed"),
                Err(_) => return tracing::debug!("TLS handshake not completed in time"),
            };
            let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
            let builder = if h2 { &self.http2 } else { &self.http1 };
            return conn::drive(builder, tls, service, activity, idle, close).await;
        }
        conn::drive(&self.plain, stream, service, activity, idle, close).await;
    }
}
