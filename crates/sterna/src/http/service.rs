//! The MCP endpoint as a `tower::Service`.

use super::body::{Final, McpBody};
use super::config::{HttpConfig, OriginPolicy};
use super::headers;
use crate::server::dispatch::{REMOVED, Response as RpcResponse, check_version, read_meta};
use crate::server::{Notifier, Principal, RequestEnv, Server};
use bytes::Bytes;
use http::header::{ACCEPT, ALLOW, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::{ErrorResponseRef, Incoming, RawMessage, RequestId};
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

/// The HTTP status of a JSON-RPC error produced while dispatching.
fn status_of(code: Option<ErrorCode>) -> StatusCode {
    match code {
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
    let name = if let Some(rest) = h.strip_prefix('[') {
        rest.split(']')
            .next()
            .map(|a| format!("[{a}]"))
            .unwrap_or_default()
    } else {
        h.rsplit_once(':').map_or(h, |(n, _)| n).to_owned()
    };
    matches!(
        name.to_ascii_lowercase().as_str(),
        "localhost" | "127.0.0.1" | "[::1]"
    )
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
        let content_type = parts
            .headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        if !content_type.is_some_and(|c| {
            c.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/json")
        }) {
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
        let bytes = match Limited::new(body, self.config.max_body).collect().await {
            Ok(b) => b.to_bytes(),
            Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
                let e = ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("Request body larger than {} bytes", self.config.max_body),
                );
                return rpc_error(StatusCode::PAYLOAD_TOO_LARGE, None, &e);
            }
            Err(_) => return plain(StatusCode::BAD_REQUEST),
        };
        let principal = parts
            .extensions
            .get::<Principal>()
            .cloned()
            .unwrap_or_default();
        match RawMessage::parse(&bytes) {
            Err(m) => rpc_error(StatusCode::BAD_REQUEST, m.id.as_ref(), &m.error),
            Ok(Incoming::Notification { .. }) => plain(StatusCode::ACCEPTED),
            Ok(Incoming::Result { id, .. }) | Ok(Incoming::Error { id: Some(id), .. }) => {
                let e = ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    "Invalid request: clients send requests and notifications only",
                );
                rpc_error(StatusCode::BAD_REQUEST, Some(&id), &e)
            }
            Ok(Incoming::Error { id: None, .. }) => {
                let e = ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    "Invalid request: clients send requests and notifications only",
                );
                rpc_error(StatusCode::BAD_REQUEST, None, &e)
            }
            Ok(Incoming::Request { id, method, params }) => {
                if let Err(e) = self.validate(&parts.headers, &method, params) {
                    return rpc_error(StatusCode::BAD_REQUEST, Some(&id), &e);
                }
                let method = method.into_owned();
                self.run(id, method, bytes, principal, sse_ok).await
            }
        }
    }

    /// Header and `_meta` checks, in the order the conformance suite expects.
    fn validate(
        &self,
        headers: &HeaderMap,
        method: &str,
        params: Option<&serde_json::value::RawValue>,
    ) -> Result<(), ErrorObject> {
        let header_version = headers::protocol_version(headers)?;
        let meta = read_meta(params)?;
        if header_version != meta.protocol_version {
            return Err(ErrorObject::header_mismatch(format!(
                "Header mismatch: MCP-Protocol-Version header value '{header_version}' does not match body value '{}'",
                meta.protocol_version
            )));
        }
        check_version(&meta)?;
        headers::check(&self.server, headers, method, params)
    }

    /// Runs the request; answers JSON, or SSE once the handler sends a notification.
    async fn run(
        &self,
        id: RequestId,
        method: String,
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
        let listen = method == "subscriptions/listen";
        let timeout = if listen { None } else { self.config.timeout };
        let removed = REMOVED.contains(&method.as_str());
        let fut_id = id.clone();
        let id_for_timeout = id.clone();
        let work = async move {
            // Dropping this future (client gone, timeout) cancels the request.
            let _guard = cancel.drop_guard();
            let Ok(Incoming::Request { params, .. }) = RawMessage::parse(&bytes) else {
                unreachable!("parsed before");
            };
            let meta = read_meta(params).expect("checked before");
            if removed {
                return Some(RpcResponse::error(
                    Some(fut_id),
                    crate::server::dispatch::removed(&method),
                ));
            }
            server.dispatch(fut_id, &method, params, meta, env).await
        };
        let mut work: Pin<Box<dyn Future<Output = Done> + Send>> = Box::pin(async move {
            let Some(limit) = timeout else {
                return work.await.map_or(Done::Cancelled, Done::Response);
            };
            match tokio::time::timeout(limit, work).await {
                Ok(r) => r.map_or(Done::Cancelled, Done::Response),
                Err(_) => Done::TimedOut(RpcResponse::error(
                    Some(id_for_timeout),
                    ErrorObject::internal(format!("Request timed out after {} s", limit.as_secs())),
                )),
            }
        });
        let mut open = true;
        loop {
            tokio::select! {
                biased;
                done = &mut work => {
                    let (status, last) = match done {
                        Done::Cancelled => return plain(StatusCode::NO_CONTENT),
                        Done::TimedOut(r) => (StatusCode::GATEWAY_TIMEOUT, r.to_bytes()),
                        Done::Response(r) => (status_of(r.error_code()), r.to_bytes()),
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
                            Done::Cancelled => None,
                            Done::TimedOut(r) | Done::Response(r) => Some(r.to_bytes()),
                        }
                    });
                    return sse_response(McpBody::sse(first, notifications, fin, self.config.keep_alive));
                }
            }
        }
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
    Cancelled,
}

/// Whether the client accepts JSON and SSE responses. A missing `Accept` takes both.
fn accepts(headers: &HeaderMap) -> (bool, bool) {
    let values: Vec<&str> = headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if values.is_empty() {
        return (true, true);
    }
    let mut json = false;
    let mut sse = false;
    for part in values.iter().flat_map(|v| v.split(',')) {
        let media = part
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match media.as_str() {
            "*/*" => {
                json = true;
                sse = true;
            }
            "application/*" | "application/json" => json = true,
            "text/*" | "text/event-stream" => sse = true,
            _ => {}
        }
    }
    (json, sse)
}
