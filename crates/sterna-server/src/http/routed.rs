//! What one connection of [`HttpServer`](super::HttpServer) serves: the endpoint path (404
//! elsewhere), the text routes, the response headers added, and authentication with its
//! metadata document around them.

use super::auth::AuthLayer;
use super::service::McpService;
use hyper::body::Incoming;
use std::net::SocketAddr;
use std::sync::Arc;
use tower_layer::Layer;

/// The service for one connection: the metadata document and authentication (if any)
/// around the routed endpoint.
pub(super) fn auth_or_plain(auth: Option<&AuthLayer>, routed: Routed) -> Either {
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

/// The service of one connection, with or without authentication.
#[derive(Clone)]
pub(super) enum Either {
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
pub(super) struct Routed {
    pub(super) path: Arc<str>,
    pub(super) inner: McpService,
    pub(super) headers: Arc<http::HeaderMap>,
    pub(super) text: Option<Arc<TextRoute>>,
    /// The connection's peer: the one `inner` counts every request from (built with
    /// [`McpService::for_peer`]), unless it is one of the trusted `proxies` (then the
    /// client it names is, given as the request's [`PeerAddr`](super::PeerAddr)).
    pub(super) peer: SocketAddr,
    pub(super) proxies: super::TrustedProxies,
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
        let client = match self.proxies.client(self.peer, req.headers()) {
            Ok(client) => client,
            Err(e) => return Either::Left(ready(Ok(bad_forwarded_for(&e)))),
        };
        // The endpoint counts a request without one as the connection's peer's: only a
        // client a trusted proxy names needs the extension (and its allocations).
        if client != self.peer {
            req.extensions_mut().insert(super::PeerAddr(client));
        }
        if let Some(text) = self
            .text
            .as_ref()
            .filter(|t| req.method() == http::Method::GET && req.uri().path() == &*t.path)
        {
            let mut r = http::Response::new(super::body::McpBody::from(bytes::Bytes::from((text
                .render)(
            ))));
            r.headers_mut()
                .insert(http::header::CONTENT_TYPE, text.content_type.clone());
            return Either::Left(ready(Ok(r)));
        }
        if req.uri().path() != &*self.path {
            crate::metrics::refused(crate::metrics::Refusal::NotFound, 404);
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

/// A trusted proxy's `X-Forwarded-For` that names no client: refused, never counted as
/// the proxy's own request.
fn bad_forwarded_for(e: &super::BadForwardedFor) -> http::Response<super::body::McpBody> {
    use sterna_types::error::{ErrorCode, ErrorObject};
    crate::metrics::refused(crate::metrics::Refusal::BadHeaders, 400);
    let e = ErrorObject::new(ErrorCode::INVALID_REQUEST, format!("Bad request: {e}"));
    super::respond::rpc_error(http::StatusCode::BAD_REQUEST, None, &e)
}

pin_project_lite::pin_project! {
    /// An answer with the server's extra response headers added.
    pub(super) struct WithHeaders<F> {
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

/// A plain document served on GET next to the endpoint (see [`HttpServer::text_route`](super::HttpServer::text_route)).
pub(super) struct TextRoute {
    pub(super) path: Arc<str>,
    pub(super) content_type: http::HeaderValue,
    pub(super) render: Box<dyn Fn() -> String + Send + Sync>,
}

impl std::fmt::Debug for TextRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextRoute")
            .field("path", &self.path)
            .finish()
    }
}
