//! Serving the endpoint in one call.

use super::auth::AuthLayer;
use super::config::HttpConfig;
use super::service::McpService;
use crate::server::Server;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tower_layer::Layer;

/// Serves a [`Server`] over Streamable HTTP on one path (default `/mcp`).
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
        self.serve_with_shutdown(listener, shutdown_signal()).await
    }

    /// Serves on `listener` until `shutdown` completes; then stops accepting, ends
    /// `subscriptions/listen` streams with their closing result, and waits for requests in
    /// flight (at most `grace`, 30 s) before returning.
    pub async fn serve_with_shutdown(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send,
    ) -> io::Result<()> {
        let server = self.server.clone();
        let path = self.path.clone();
        let auth = self.auth.clone();
        let headers = self.headers.clone();
        let mcp = self.into_service();
        let graceful = GracefulShutdown::new();
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let (stream, peer) = match accepted {
                        Ok(c) => c,
                        Err(e) => {
                            tracing::warn!(error = %e, "accept failed");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    };
                    let _ = stream.set_nodelay(true);
                    let routed = Routed { path: path.clone(), inner: mcp.clone(), headers: headers.clone(), peer };
                    let conn = hyper::server::conn::http1::Builder::new()
                        .timer(TokioTimer::new())
                        .header_read_timeout(Duration::from_secs(30))
                        .serve_connection(TokioIo::new(stream), TowerToHyperService::new(auth_or_plain(auth.as_ref(), routed)))
                        ;
                    let conn = graceful.watch(conn);
                    // In the caller's span: its fields (a replica name) tag every message.
                    tokio::spawn(tracing::Instrument::in_current_span(async move {
                        if let Err(e) = conn.await {
                            tracing::debug!(error = %e, "connection ended with an error");
                        }
                    }));
                }
                () = &mut shutdown => break,
            }
        }
        drop(listener);
        server.close_subscriptions();
        tokio::select! {
            () = graceful.shutdown() => {}
            () = tokio::time::sleep(Duration::from_secs(30)) => {
                tracing::warn!("requests still in flight after 30 s; stopping anyway");
            }
        }
        let _ = TokioExecutor::new();
        Ok(())
    }
}

/// The service for one connection: the metadata document and authentication (if any)
/// around the routed endpoint.
fn auth_or_plain(auth: Option<&AuthLayer>, routed: Routed) -> Either {
    match auth {
        Some(layer) => {
            let authed = layer.layer(routed);
            match layer.metadata_layer() {
                Some(meta) => Either::WithMetadata(meta.layer(authed)),
                None => Either::Auth(authed),
            }
        }
        None => Either::Plain(routed),
    }
}

type Authed = super::auth::AuthService<Routed>;

#[derive(Clone)]
enum Either {
    Plain(Routed),
    Auth(Authed),
    WithMetadata(super::auth::MetadataService<Authed>),
}

type RoutedFuture = <Routed as tower_service::Service<http::Request<Incoming>>>::Future;
type AuthedFuture = <Authed as tower_service::Service<http::Request<Incoming>>>::Future;
type MetaFuture = <super::auth::MetadataService<Authed> as tower_service::Service<
    http::Request<Incoming>,
>>::Future;

impl tower_service::Service<http::Request<Incoming>> for Either {
    type Response = http::Response<super::body::McpBody>;
    type Error = std::convert::Infallible;
    type Future = futures_util::future::Either<
        RoutedFuture,
        futures_util::future::Either<AuthedFuture, MetaFuture>,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<Incoming>) -> Self::Future {
        use futures_util::future::Either::{Left, Right};
        match self {
            Self::Plain(s) => Left(s.call(req)),
            Self::Auth(s) => Right(Left(s.call(req))),
            Self::WithMetadata(s) => Right(Right(s.call(req))),
        }
    }
}

/// Answers the endpoint path; 404 elsewhere.
#[derive(Clone)]
struct Routed {
    path: Arc<str>,
    inner: McpService,
    headers: Arc<http::HeaderMap>,
    /// The connection's peer: its [`PeerAddr`](super::PeerAddr) on every request.
    peer: SocketAddr,
}

impl<B> tower_service::Service<http::Request<B>> for Routed
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = http::Response<super::body::McpBody>;
    type Error = std::convert::Infallible;
    type Future = futures_util::future::Either<
        futures_util::future::Ready<Result<Self::Response, Self::Error>>,
        WithHeaders<<McpService as tower_service::Service<http::Request<B>>>::Future>,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: http::Request<B>) -> Self::Future {
        use futures_util::future::{Either, ready};
        req.extensions_mut().insert(super::PeerAddr(self.peer));
        super::peer::stamp(req.extensions_mut());
        if req.uri().path() != &*self.path {
            let mut r = http::Response::new(super::body::McpBody::empty());
            *r.status_mut() = http::StatusCode::NOT_FOUND;
            return Either::Left(ready(Ok(r)));
        }
        Either::Right(WithHeaders {
            inner: self.inner.call(req),
            headers: self.headers.clone(),
        })
    }
}

pin_project_lite::pin_project! {
    /// An answer with the server's extra response headers added.
    struct WithHeaders<F> {
        #[pin]
        inner: F,
        headers: Arc<http::HeaderMap>,
    }
}

impl<F> Future for WithHeaders<F>
where
    F: Future<Output = Result<http::Response<super::body::McpBody>, std::convert::Infallible>>,
{
    type Output = F::Output;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let me = self.project();
        let Ok(mut response) = std::task::ready!(me.inner.poll(cx));
        for (name, value) in me.headers.iter() {
            response.headers_mut().append(name, value.clone());
        }
        std::task::Poll::Ready(Ok(response))
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
