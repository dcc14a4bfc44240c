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
/// # async fn run(server: sterna::Server) -> std::io::Result<()> {
/// use sterna::http::HttpServer;
/// HttpServer::new(server).serve("127.0.0.1:3000".parse().unwrap()).await
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct HttpServer {
    server: Server,
    config: HttpConfig,
    path: Arc<str>,
    auth: Option<AuthLayer>,
}

impl HttpServer {
    /// Serves `server` at `/mcp` with default settings.
    pub fn new(server: Server) -> Self {
        Self {
            server,
            config: HttpConfig::default(),
            path: Arc::from("/mcp"),
            auth: None,
        }
    }

    /// Endpoint settings.
    pub fn config(mut self, config: HttpConfig) -> Self {
        self.config = config;
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
        McpService::new(self.server, self.config)
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
        let mcp = McpService::new(self.server, self.config);
        let graceful = GracefulShutdown::new();
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let (stream, _) = match accepted {
                        Ok(c) => c,
                        Err(e) => {
                            tracing::warn!(error = %e, "accept failed");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    };
                    let _ = stream.set_nodelay(true);
                    let routed = Routed { path: path.clone(), inner: mcp.clone() };
                    let conn = hyper::server::conn::http1::Builder::new()
                        .timer(TokioTimer::new())
                        .header_read_timeout(Duration::from_secs(30))
                        .serve_connection(TokioIo::new(stream), TowerToHyperService::new(auth_or_plain(auth.as_ref(), routed)))
                        ;
                    let conn = graceful.watch(conn);
                    tokio::spawn(async move {
                        if let Err(e) = conn.await {
                            tracing::debug!(error = %e, "connection ended with an error");
                        }
                    });
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
        <McpService as tower_service::Service<http::Request<B>>>::Future,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        use futures_util::future::{Either, ready};
        if req.uri().path() != &*self.path {
            let mut r = http::Response::new(super::body::McpBody::empty());
            *r.status_mut() = http::StatusCode::NOT_FOUND;
            return Either::Left(ready(Ok(r)));
        }
        Either::Right(self.inner.call(req))
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
