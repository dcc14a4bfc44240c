//! The MCP endpoint as a `tower::Service`.

use super::body::{Final, McpBody};
use super::config::{HttpConfig, OriginPolicy};
use super::headers;
use crate::server::dispatch::{self, Prepared, Read, Response as RpcResponse, TransportCheck};
use crate::server::{Notifier, Principal, RequestEnv, Server, log_panic};
use bytes::Bytes;
use futures_util::FutureExt;
use http::header::{ACCEPT, ALLOW, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::BodyExt;
use serde_json::value::RawValue;
use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::{ErrorResponseRef, Incoming, RequestId};
use sterna_types::meta::RequestMeta;
use tokio_util::sync::CancellationToken;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The MCP endpoint: answers POSTs of JSON-RPC messages for a [`Server`].
///
/// ```no_run
/// # async fn run(server: sterna::Server) -> std::io::Result<()> {
/// use sterna::http::{HttpConfig, McpService};
/// let service = McpService::new(server, HttpConfig::default());
/// let app = axum::Router::new().route_service("/mcp", service);
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// axum::serve(listener, app).await
/// # }
/// ```
#[derive(Clone)]
pub struct McpService {
    inner: Arc<Shared>,
}

struct Shared {
    server: Server,
    config: HttpConfig,
}

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("server", &self.inner.server)
            .field("config", &self.inner.config)
            .finish()
    }
}

impl McpService {
    /// The endpoint for `server`.
    pub fn new(server: Server, config: HttpConfig) -> Self {
        Self {
            inner: Arc::new(Shared { server, config }),
        }
    }

    /// The server behind the endpoint.
    pub fn server(&self) -> &Server {
        &self.inner.server
    }
}

impl<B> tower_service::Service<Request<B>> for McpService
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

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let shared = self.inner.clone();
        Box::pin(async move { Ok(shared.serve(req).await) })
    }
}

fn json(status: StatusCode, bytes: Vec<u8>) -> Response<McpBody> {
    let mut r = Response::new(McpBody::full(bytes));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn rpc_error(status: StatusCode, id: Option<&RequestId>, error: &ErrorObject) -> Response<McpBody> {
    let bytes = serde_json::to_vec(&ErrorResponseRef { id, error }).expect("errors serialize");
    json(status, bytes)
}

fn plain(status: StatusCode) -> Response<McpBody> {
    let mut r = Response::new(McpBody::empty());
    *r.status_mut() = status;
    r
}

/// The HTTP status of a response: 400 for envelope errors, 404 for unknown methods.
fn status_of(r: &RpcResponse) -> StatusCode {
    if r.is_envelope_error() {
        return StatusCode::BAD_REQUEST;
    }
    match r.error_code() {
        Some(ErrorCode::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(
            ErrorCode::HEADER_MISMATCH
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        ) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

fn is_local_host(host: &str) -> bool {
    let h = host.trim();
    let name = if h.starts_with('[') {
        // `[::1]` or `[::1]:port`: the brackets stay part of the name.
        h.find(']').map_or(h, |end| &h[..=end])
    } else {
        h.rsplit_once(':').map_or(h, |(n, _)| n)
    };
    ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .any(|l| name.eq_ignore_ascii_case(l))
}

fn origin_host(origin: &str) -> Option<&str> {
    let rest = origin.split_once("://")?.1;
    Some(rest.split('/').next().unwrap_or(rest))
}

impl Shared {
    fn origin_ok(&self, headers: &HeaderMap) -> bool {
        let origin = headers.get(ORIGIN).map(|o| o.to_str().unwrap_or("\u{0}"));
        match &self.config.origins {
            OriginPolicy::DangerousAny => true,
            OriginPolicy::Allow(list) => origin.is_none_or(|o| list.iter().any(|a| a == o)),
            OriginPolicy::Localhost => {
                let host_ok = headers
                    .get(HOST)
                    .and_then(|h| h.to_str().ok())
                    .is_none_or(is_local_host);
                let origin_ok =
                    origin.is_none_or(|o| o == "null" || origin_host(o).is_some_and(is_local_host));
                host_ok && origin_ok
            }
        }
    }

    async fn serve<B>(&self, req: Request<B>) -> Response<McpBody>
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let (parts, body) = req.into_parts();
        if parts.method != Method::POST {
            let mut r = plain(StatusCode::METHOD_NOT_ALLOWED);
            r.headers_mut()
                .insert(ALLOW, HeaderValue::from_static("POST"));
            return r;
        }
        if !self.origin_ok(&parts.headers) {
            let e = ErrorObject::new(ErrorCode::INVALID_REQUEST, "Forbidden: origin not allowed");
            return rpc_error(StatusCode::FORBIDDEN, None, &e);
        }
        let json_type = parts
            .headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|c| c.split(';').next())
            .is_some_and(|c| c.trim().eq_ignore_ascii_case("application/json"));
        if !json_type {
            let e = ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "Content-Type must be application/json",
            );
            return rpc_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, None, &e);
        }
        let (json_ok, sse_ok) = accepts(&parts.headers);
        if !json_ok && !sse_ok {
            let e = ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "Accept must list application/json and text/event-stream",
            );
            return rpc_error(StatusCode::NOT_ACCEPTABLE, None, &e);
        }
        let bytes = match read_body(body, self.config.max_body).await {
            Ok(b) => b,
            Err(BodyError::TooLarge) => {
                let e = ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("Request body larger than {} bytes", self.config.max_body),
                );
                return rpc_error(StatusCode::PAYLOAD_TOO_LARGE, None, &e);
            }
            Err(BodyError::Broken) => return plain(StatusCode::BAD_REQUEST),
        };
        let principal = parts
            .extensions
            .get::<Principal>()
            .cloned()
            .unwrap_or_default();
        self.run(parts.headers, bytes, principal, sse_ok).await
    }

    /// Reads the message and runs it; answers JSON, or SSE once the handler sends a
    /// notification. Everything happens inside one future, so a client that goes away
    /// (hyper drops it) cancels the request.
    async fn run(
        &self,
        headers: HeaderMap,
        bytes: Bytes,
        principal: Principal,
        sse_ok: bool,
    ) -> Response<McpBody> {
        let (notifier, mut notifications) = Notifier::channel(64);
        let cancel = CancellationToken::new();
        let env = RequestEnv::new()
            .principal(principal)
            .notifier(notifier)
            .cancel(cancel.clone());
        let server = self.server.clone();
        let timeout = self.config.timeout;
        let work = async move {
            // Dropping this future (client gone, timeout) cancels the request.
            let _guard = cancel.drop_guard();
            let (id, method, params) = match dispatch::read(&bytes) {
                Err(m) => return Done::Refused(StatusCode::BAD_REQUEST, m.id, m.error),
                Ok(Read::Request { id, method, params }) => (id, method, params),
                Ok(Read::Other(Incoming::Request { id, method, params })) => {
                    (id, method, Prepared::Raw(params))
                }
                Ok(Read::Other(Incoming::Notification { .. })) => return Done::Accepted,
                Ok(Read::Other(
                    Incoming::Result { id, .. } | Incoming::Error { id: Some(id), .. },
                )) => {
                    return Done::Refused(StatusCode::BAD_REQUEST, Some(id), not_a_request());
                }
                Ok(Read::Other(Incoming::Error { id: None, .. })) => {
                    return Done::Refused(StatusCode::BAD_REQUEST, None, not_a_request());
                }
            };
            let version = match headers::protocol_version(&headers) {
                Ok(v) => v,
                Err(e) => return Done::Refused(StatusCode::BAD_REQUEST, Some(id), e),
            };
            let check = HeaderCheck {
                server: &server,
                headers: &headers,
                version,
                method: &method,
            };
            let handled = AssertUnwindSafe(server.handle_checked(
                id.clone(),
                &method,
                params,
                env,
                Some(&check),
            ))
            .catch_unwind()
            .map(|r| {
                r.unwrap_or_else(|panic| {
                    log_panic(panic.as_ref());
                    Some(RpcResponse::error(
                        Some(id.clone()),
                        ErrorObject::internal("Internal error"),
                    ))
                })
            });
            let limit = timeout.filter(|_| method != "subscriptions/listen");
            let Some(limit) = limit else {
                return handled.await.map_or(Done::Cancelled, Done::Response);
            };
            match tokio::time::timeout(limit, handled).await {
                Ok(r) => r.map_or(Done::Cancelled, Done::Response),
                Err(_) => Done::TimedOut(RpcResponse::error(
                    Some(id.clone()),
                    ErrorObject::internal(format!("Request timed out after {} s", limit.as_secs())),
                )),
            }
        };
        // A panic anywhere on behalf of this request (decoding included) answers it
        // with -32603; the connection and every other request go on.
        let mut work: Pin<Box<dyn Future<Output = Done> + Send>> =
            Box::pin(AssertUnwindSafe(work).catch_unwind().map(|r| {
                r.unwrap_or_else(|panic| {
                    log_panic(panic.as_ref());
                    Done::Refused(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        None,
                        ErrorObject::internal("Internal error"),
                    )
                })
            }));
        let mut open = true;
        loop {
            tokio::select! {
                biased;
                done = &mut work => {
                    let (status, last) = match done {
                        Done::Cancelled => return plain(StatusCode::NO_CONTENT),
                        Done::Accepted => return plain(StatusCode::ACCEPTED),
                        Done::Refused(status, id, e) => return rpc_error(status, id.as_ref(), &e),
                        Done::TimedOut(r) => (StatusCode::GATEWAY_TIMEOUT, r.to_bytes()),
                        Done::Response(r) => (status_of(&r), r.to_bytes()),
                    };
                    // Notifications sent just before the result still go out first.
                    let mut pending = Vec::new();
                    while let Ok(n) = notifications.try_recv() {
                        pending.push(n);
                    }
                    if pending.is_empty() || !sse_ok || status != StatusCode::OK {
                        return json(status, last);
                    }
                    pending.push(last);
                    return sse_response(McpBody::sse_done(pending, self.config.keep_alive));
                }
                next = notifications.recv(), if open => {
                    // A client that takes only JSON gets no notifications.
                    let Some(first) = next else {
                        open = false;
                        continue;
                    };
                    if !sse_ok {
                        continue;
                    }
                    let fin: Final = Box::pin(async move {
                        match work.await {
                            Done::Cancelled | Done::Accepted => None,
                            Done::Refused(_, id, e) => Some(
                                serde_json::to_vec(&ErrorResponseRef { id: id.as_ref(), error: &e })
                                    .expect("errors serialize"),
                            ),
                            Done::TimedOut(r) | Done::Response(r) => Some(r.to_bytes()),
                        }
                    });
                    return sse_response(McpBody::sse(first, notifications, fin, self.config.keep_alive));
                }
            }
        }
    }
}

enum BodyError {
    TooLarge,
    Broken,
}

/// Reads a body of at most `max` bytes; a body in one frame is taken without copying.
async fn read_body<B>(body: B, max: usize) -> Result<Bytes, BodyError>
where
    B: Body<Data = Bytes>,
{
    if body.size_hint().lower() > max as u64 {
        return Err(BodyError::TooLarge);
    }
    let mut body = std::pin::pin!(body);
    let mut first: Option<Bytes> = None;
    let mut more: Vec<u8> = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(|_| BodyError::Broken)?.into_data() else {
            continue;
        };
        let so_far = if more.is_empty() {
            first.as_ref().map_or(0, Bytes::len)
        } else {
            more.len()
        };
        let total = so_far + data.len();
        if total > max {
            return Err(BodyError::TooLarge);
        }
        match &first {
            None => first = Some(data),
            Some(f) => {
                if more.is_empty() {
                    more.extend_from_slice(f);
                }
                more.extend_from_slice(&data);
            }
        }
    }
    Ok(if more.is_empty() {
        first.unwrap_or_default()
    } else {
        Bytes::from(more)
    })
}

fn not_a_request() -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_REQUEST,
        "Invalid request: clients send requests and notifications only",
    )
}

/// The 2026-07-28 header checks, run by the server between reading `_meta` and running
/// the method.
struct HeaderCheck<'a> {
    server: &'a Server,
    headers: &'a HeaderMap,
    version: &'a str,
    method: &'a str,
}

impl TransportCheck for HeaderCheck<'_> {
    fn check(
        &self,
        meta: &RequestMeta,
        name: Option<&str>,
        arguments: Option<&RawValue>,
    ) -> Result<(), ErrorObject> {
        if self.version != meta.protocol_version {
            return Err(ErrorObject::header_mismatch(format!(
                "Header mismatch: MCP-Protocol-Version header value '{}' does not match body value '{}'",
                self.version, meta.protocol_version
            )));
        }
        headers::check(self.server, self.headers, self.method, name, arguments)
    }
}

fn sse_response(body: McpBody) -> Response<McpBody> {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert("cache-control", HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// How a request ended.
enum Done {
    Response(RpcResponse),
    TimedOut(RpcResponse),
    /// Refused before the server saw it (unreadable message, a response, no version
    /// header).
    Refused(StatusCode, Option<RequestId>, ErrorObject),
    /// A notification.
    Accepted,
    Cancelled,
}

/// Whether the client accepts JSON and SSE responses. A missing `Accept` takes both.
fn accepts(headers: &HeaderMap) -> (bool, bool) {
    let mut any = false;
    let mut json = false;
    let mut sse = false;
    for value in headers.get_all(ACCEPT) {
        any = true;
        let Ok(v) = value.to_str() else { continue };
        if v == "application/json, text/event-stream" {
            // What every client sends: skip the media-range parsing.
            json = true;
            sse = true;
            continue;
        }
        for part in v.split(',') {
            let media = part.split(';').next().unwrap_or("").trim();
            let is = |m: &str| media.eq_ignore_ascii_case(m);
            if is("*/*") {
                json = true;
                sse = true;
            } else if is("application/json") || is("application/*") {
                json = true;
            } else if is("text/event-stream") || is("text/*") {
                sse = true;
            }
        }
    }
    if any { (json, sse) } else { (true, true) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_hosts() {
        for h in [
            "localhost",
            "LOCALHOST:3000",
            "127.0.0.1",
            "127.0.0.1:80",
            "[::1]",
            "[::1]:8080",
        ] {
            assert!(is_local_host(h), "{h}");
        }
        for h in [
            "example.com",
            "localhost.evil.com",
            "127.0.0.2",
            "[::1",
            "[::2]:80",
            "",
        ] {
            assert!(!is_local_host(h), "{h}");
        }
    }

    #[test]
    fn accept_header() {
        let mut h = HeaderMap::new();
        assert_eq!(accepts(&h), (true, true));
        h.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        assert_eq!(accepts(&h), (true, true));
        h.insert(ACCEPT, HeaderValue::from_static("Application/JSON;q=0.9"));
        assert_eq!(accepts(&h), (true, false));
        h.insert(ACCEPT, HeaderValue::from_static("text/*"));
        assert_eq!(accepts(&h), (false, true));
        h.insert(ACCEPT, HeaderValue::from_static("image/png"));
        assert_eq!(accepts(&h), (false, false));
    }
}
