//! The MCP endpoint as a `tower::Service`: the HTTP checks as layers, then the endpoint
//! itself (read the body, classify, prepare, compare headers with the body, run, answer
//! JSON or SSE).

mod work;

use super::body::{Final, McpBody};
use super::caller::Caller;
use super::config::HttpConfig;
use super::era::{HttpEra, elsewhere};
use super::headers;
use super::headers::modern_header;
use super::in_flight::InFlight;
use super::layers::{
    AcceptLayer, AcceptService, Accepts, BodyLimitLayer, BodyLimitService, BodyTimeoutLayer,
    BodyTimeoutService, ContentTypeLayer, ContentTypeService, Deadline, OriginLayer, OriginService,
};
use super::request_body::{BodyError, read_body};
use super::respond::{Done, json, plain, rpc_error, sse_response, status_of};
use crate::metrics::{Refusal, refused};
use crate::server::places::Place;
use crate::server::{Notifications, Notifier, Server, log_panic};
use bytes::Bytes;
use futures_util::FutureExt;
use http::header::ALLOW;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::Limited;
use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use sterna_types::error::{ErrorCode, ErrorObject};
use tower_layer::Layer;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

type Stack = OriginService<
    ContentTypeService<AcceptService<BodyTimeoutService<BodyLimitService<Endpoint>>>>,
>;

/// The MCP endpoint: answers POSTs of JSON-RPC messages for a [`Server`], behind the
/// [layers](super::layers) that check origin, content type, accept, body size and time.
///
/// ```no_run
/// # async fn run(server: sterna_server::Server) -> std::io::Result<()> {
/// use sterna_server::http::{HttpConfig, McpService};
/// let service = McpService::new(server, HttpConfig::default());
/// let app = axum::Router::new().route_service("/mcp", service);
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// axum::serve(listener, app).await
/// # }
/// ```
#[derive(Clone)]
pub struct McpService {
    stack: Stack,
    server: Server,
    #[cfg_attr(not(feature = "legacy"), allow(dead_code, reason = "read by the eras"))]
    shared: Arc<Shared>,
}

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("server", &self.server)
            .finish()
    }
}

impl McpService {
    /// The endpoint for `server`.
    pub fn new(server: Server, config: HttpConfig) -> Self {
        let shared = Arc::new(Shared {
            server: server.clone(),
            era: super::eras(&config),
            keep_alive: config.keep_alive,
            timeout: config.timeout,
            in_flight: InFlight::new(config.requests_per_client),
        });
        let endpoint = Endpoint {
            shared: shared.clone(),
            peer: None,
        };
        let limited = BodyLimitLayer::new(config.max_body).layer(endpoint);
        let limited = BodyTimeoutLayer::new(config.body_timeout).layer(limited);
        let stack = OriginLayer::new(config.origins.clone())
            .layer(ContentTypeLayer.layer(AcceptLayer.layer(limited)));
        Self {
            stack,
            server,
            shared,
        }
    }

    /// The server behind the endpoint.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// This endpoint for the requests of one connection from `peer`: a request without a
    /// [`PeerAddr`](super::PeerAddr) of its own is counted as `peer`'s (what
    /// [`HttpServer`](super::HttpServer) gives each connection, so that a request needs no
    /// extension, with its allocations, to carry it).
    pub(crate) fn for_peer(&self, peer: std::net::SocketAddr) -> Self {
        let mut for_peer = self.clone();
        let endpoint = for_peer
            .stack
            .get_mut()
            .get_mut()
            .get_mut()
            .get_mut()
            .get_mut();
        endpoint.peer = Some(peer);
        for_peer
    }

    #[cfg(feature = "legacy")]
    /// The era of type `E` this endpoint serves besides 2026-07-28, if any.
    pub(crate) fn era<E: HttpEra>(&self) -> Option<&E> {
        let era: &dyn std::any::Any = self.shared.era.as_deref()?;
        era.downcast_ref()
    }
}

impl<B> tower_service::Service<Request<B>> for McpService
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = ResponseFuture<B>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        ResponseFuture {
            inner: self.stack.call(req),
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of an [`McpService`] answer.
    pub struct ResponseFuture<B>
    where
        B: Body<Data = Bytes>,
        B: Send,
        B: 'static,
        B::Error: Into<BoxError>,
    {
        #[pin]
        inner: <Stack as tower_service::Service<Request<B>>>::Future,
    }
}

impl<B> std::fmt::Debug for ResponseFuture<B>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResponseFuture")
    }
}

impl<B> Future for ResponseFuture<B>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Output = Result<Response<McpBody>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().inner.poll(cx)
    }
}

/// The endpoint proper, behind the layers.
#[derive(Clone)]
struct Endpoint {
    shared: Arc<Shared>,
    /// The connection's peer, for requests that carry no [`PeerAddr`](super::PeerAddr).
    peer: Option<std::net::SocketAddr>,
}

struct Shared {
    server: Server,
    /// The era answering what 2026-07-28 does not (sessions of 2025-11-25).
    era: Option<Box<dyn HttpEra>>,
    keep_alive: std::time::Duration,
    /// Applied to the whole of each request (not `subscriptions/listen`).
    timeout: Option<std::time::Duration>,
    /// Each client's requests in flight.
    in_flight: InFlight,
}

impl<B> tower_service::Service<Request<Limited<B>>> for Endpoint
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Limited<B>>) -> Self::Future {
        let (mut parts, body) = req.into_parts();
        let caller = Caller::take(&mut parts.extensions, self.peer);
        // The client's place holds until the answer ends (a stream included).
        let admitted = self.shared.in_flight.admit(&caller.principal, &parts);
        let (place, answer_only) = match admitted {
            Ok(admitted) => admitted.into_parts(),
            Err(refused) => return Box::pin(std::future::ready(Ok(*refused))),
        };
        let shared = self.shared.clone();
        // What the headers decide is decided here; the future holds only what a POST
        // still needs (each value once: a future keeps its arguments and its locals apart).
        match shared.route(parts, caller, answer_only) {
            Route::Answered(response) => Box::pin(std::future::ready(Ok(hold(response, place)))),
            Route::Post(mut incoming) => Box::pin(async move {
                let response = match read_body(body).await {
                    Ok(bytes) => {
                        // The endpoint's own timeout runs from the end of the body.
                        incoming.deadline = shared.deadline(incoming.deadline);
                        shared.run(incoming, bytes).await
                    }
                    Err(e) => body_refused(e),
                };
                Ok(hold(response, place))
            }),
            Route::Era(parts, caller) => Box::pin(async move {
                let response = shared.other(&parts, caller).await;
                Ok(hold(response, place))
            }),
        }
    }
}

/// Where a request goes once its headers are read.
enum Route {
    /// Refused or answered by its headers alone.
    Answered(Response<McpBody>),
    /// A POST: its body is read and answered.
    Post(Incoming),
    /// A GET or DELETE the era answers.
    Era(http::request::Parts, Caller),
}

/// The response, holding the client's place until it ends.
fn hold(response: Response<McpBody>, place: Option<Place>) -> Response<McpBody> {
    match place {
        Some(place) => response.map(|b| b.holding(place)),
        None => response,
    }
}

/// A body that could not be read: `413` past the limit, else `400`.
fn body_refused(e: BodyError) -> Response<McpBody> {
    match e {
        BodyError::TooLarge => {
            refused(Refusal::BodyTooLarge, 413);
            let e = ErrorObject::new(ErrorCode::INVALID_REQUEST, "Request body too large");
            rpc_error(StatusCode::PAYLOAD_TOO_LARGE, None, &e)
        }
        BodyError::Broken => {
            refused(Refusal::MalformedBody, 400);
            plain(StatusCode::BAD_REQUEST)
        }
    }
}

/// What the endpoint knows about a request besides its body.
struct Incoming {
    headers: HeaderMap,
    caller: Caller,
    /// Admitted over the client's share: served only if it answers a pushed question.
    answer_only: bool,
    accepts: Accepts,
    /// `MCP-Protocol-Version` names a 2026-07-28 (or later) revision: read once, here.
    modern: bool,
    deadline: Option<Deadline>,
}

impl Shared {
    /// Where the request of `caller` goes, its headers read.
    fn route(&self, mut parts: http::request::Parts, caller: Caller, answer_only: bool) -> Route {
        if let Some(e) = headers::repeated(&parts.headers) {
            refused(Refusal::BadHeaders, 400);
            return Route::Answered(rpc_error(StatusCode::BAD_REQUEST, None, &e));
        }
        match (&parts.method, &self.era) {
            (&Method::POST, _) => Route::Post(Incoming {
                accepts: Accepts::of(&parts.headers),
                modern: modern_header(&parts.headers),
                caller,
                answer_only,
                // A deadline set in front of the endpoint; its own is added once the body is in.
                deadline: parts.extensions.remove::<Deadline>(),
                headers: parts.headers,
            }),
            (&Method::GET | &Method::DELETE, Some(_)) => Route::Era(parts, caller),
            _ => Route::Answered(self.not_allowed()),
        }
    }

    /// A GET or DELETE, answered by the era ([`Shared::route`] sends only those here).
    async fn other(&self, parts: &http::request::Parts, caller: Caller) -> Response<McpBody> {
        match (&parts.method, &self.era) {
            (&Method::GET, Some(era)) => era.get(&self.server, &parts.headers, caller).await,
            (&Method::DELETE, Some(era)) => era.delete(&parts.headers, caller).await,
            _ => self.not_allowed(),
        }
    }

    /// `405` with the methods this endpoint answers.
    fn not_allowed(&self) -> Response<McpBody> {
        refused(Refusal::MethodNotAllowed, 405);
        let allow = if self.era.is_some() {
            "GET, POST, DELETE"
        } else {
            "POST"
        };
        let mut r = plain(StatusCode::METHOD_NOT_ALLOWED);
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static(allow));
        r
    }

    /// The earlier of the configured timeout and a deadline set in front of the endpoint.
    fn deadline(&self, outer: Option<Deadline>) -> Option<Deadline> {
        let own = self
            .timeout
            .map(|t| Deadline(tokio::time::Instant::now() + t));
        match (own, outer) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    /// Runs the message; answers JSON, or SSE once the handler sends a notification.
    /// Everything happens inside one future, so a client that goes away (hyper drops
    /// it) cancels the request.
    #[allow(
        clippy::manual_async_fn,
        reason = "an `async fn` keeps each argument twice in its future (once as passed, once moved)"
    )]
    fn run(
        self: &Arc<Self>,
        incoming: Incoming,
        bytes: Bytes,
    ) -> impl Future<Output = Response<McpBody>> + Send + '_ {
        async move {
            if let Some(era) = self.era.as_deref()
                && !incoming.modern
                && let Some(answered) = elsewhere(
                    era,
                    &self.server,
                    &incoming.headers,
                    &incoming.caller,
                    &bytes,
                    incoming.answer_only.then_some(&self.in_flight),
                )
                .await
            {
                return answered;
            }
            if incoming.answer_only {
                // No era answers it: it cannot be an answer to a pushed question.
                return *self.in_flight.refusal();
            }
            let (notifier, notifications) = Notifier::queued(64);
            let shared = self.clone();
            let sse_ok = incoming.accepts.sse;
            let work = shared.answer(incoming, bytes, notifier);
            // A panic anywhere on behalf of this request (decoding included) answers it
            // with -32603; the connection and every other request go on.
            let work: Work = Box::pin(AssertUnwindSafe(work).catch_unwind().map(|r| {
                r.unwrap_or_else(|panic| {
                    log_panic(panic.as_ref());
                    let e = ErrorObject::internal("Internal error");
                    Done::Refused(StatusCode::INTERNAL_SERVER_ERROR, None, e)
                })
            }));
            self.respond(work, notifications, sse_ok).await
        }
    }

    /// JSON when the request ends before it notifies anything; SSE otherwise.
    async fn respond(
        &self,
        mut work: Work,
        mut notifications: Notifications,
        sse_ok: bool,
    ) -> Response<McpBody> {
        let mut open = true;
        loop {
            tokio::select! {
                biased;
                done = &mut work => return self.finished(done, &mut notifications, sse_ok),
                next = notifications.recv(), if open => {
                    // A client that takes only JSON gets no notifications.
                    let Some(first) = next else {
                        open = false;
                        continue;
                    };
                    if !sse_ok {
                        continue;
                    }
                    let fin: Final = Box::pin(work.map(Done::into_final));
                    return sse_response(McpBody::sse(first, notifications, fin, self.keep_alive));
                }
            }
        }
    }

    fn finished(
        &self,
        done: Done,
        notifications: &mut Notifications,
        sse_ok: bool,
    ) -> Response<McpBody> {
        let (status, last) = match done {
            Done::Cancelled => return plain(StatusCode::NO_CONTENT),
            Done::Accepted => return plain(StatusCode::ACCEPTED),
            Done::Refused(status, id, e) => return rpc_error(status, id.as_ref(), &e),
            Done::Http(refused) => return *refused,
            Done::TimedOut(r) => (StatusCode::GATEWAY_TIMEOUT, r.to_bytes()),
            Done::Response(r) => (status_of(&r), r.to_bytes()),
        };
        // Notifications sent just before the result still go out first.
        let mut pending = Vec::new();
        while let Some(n) = notifications.try_recv() {
            pending.push(n);
        }
        if pending.is_empty() || !sse_ok || status != StatusCode::OK {
            return json(status, last);
        }
        pending.push(last);
        sse_response(McpBody::sse_done(pending, self.keep_alive))
    }
}

type Work = Pin<Box<dyn Future<Output = Done> + Send>>;
