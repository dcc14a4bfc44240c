//! HTTP answers: JSON documents, SSE streams, and the status of each JSON-RPC answer.

use super::body::McpBody;
use crate::server::Response as RpcResponse;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderName, HeaderValue, Response, StatusCode};
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::{ErrorResponseRef, RequestId};

/// How a request ended.
pub(crate) enum Done {
    Response(RpcResponse),
    TimedOut(RpcResponse),
    /// Refused before the server saw it (unreadable message, a response, no version
    /// header).
    Refused(StatusCode, Option<RequestId>, ErrorObject),
    /// Refused with this HTTP answer (an authorization challenge).
    Http(Box<Response<McpBody>>),
    /// A notification.
    Accepted,
    Cancelled,
}

pub(crate) fn json(status: StatusCode, bytes: Vec<u8>) -> Response<McpBody> {
    let mut r = Response::new(McpBody::full(bytes));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

pub(crate) fn rpc_error(
    status: StatusCode,
    id: Option<&RequestId>,
    error: &ErrorObject,
) -> Response<McpBody> {
    let bytes = serde_json::to_vec(&ErrorResponseRef { id, error }).expect("errors serialize");
    json(status, bytes)
}

pub(crate) fn plain(status: StatusCode) -> Response<McpBody> {
    let mut r = Response::new(McpBody::empty());
    *r.status_mut() = status;
    r
}

/// Tells nginx not to buffer the stream (named once, not parsed per response).
const X_ACCEL_BUFFERING: HeaderName = HeaderName::from_static("x-accel-buffering");

pub(crate) fn sse_response(body: McpBody) -> Response<McpBody> {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(X_ACCEL_BUFFERING, HeaderValue::from_static("no"));
    r
}

/// The HTTP status of a response: 400 for envelope errors, 404 for unknown methods.
pub(crate) fn status_of(r: &RpcResponse) -> StatusCode {
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
