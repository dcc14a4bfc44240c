//! The HTTP checks every MCP request passes before the endpoint reads it, each a small
//! `tower::Layer` usable on its own in any `tower`/axum stack (their rejections are
//! JSON-RPC error bodies, so the response body type only needs `From<Bytes>`):
//!
//! | layer | refuses with |
//! |---|---|
//! | [`OriginLayer`] | 403: a foreign `Origin` or `Host` (DNS rebinding) |
//! | [`ContentTypeLayer`] | 415: a POST that is not `application/json` |
//! | [`AcceptLayer`] | 406: a POST that accepts neither JSON nor SSE |
//! | [`BodyTimeoutLayer`] | 408 (connection closed): the body not received by its deadline |
//! | [`BodyLimitLayer`] | 413: a body over the limit |
//! | [`TimeoutLayer`] | 504: no answer by the deadline (which it also hands inward) |
//!
//! [`McpService`](super::McpService) stacks the first five in front of the MCP endpoint,
//! which applies its timeout itself (to the whole request, streams included).

mod accept;
mod content_type;
mod limit;
mod origin;
mod timeout;

pub use accept::{AcceptLayer, AcceptService, Accepts};
pub use content_type::{ContentTypeLayer, ContentTypeService};
pub use limit::{BodyLimitLayer, BodyLimitService};
pub use origin::{OriginLayer, OriginService};
pub use timeout::{
    BodyTimeoutFuture, BodyTimeoutLayer, BodyTimeoutService, Deadline, TimedBody, TimeoutLayer,
    TimeoutService,
};

use crate::metrics::Refusal;
use bytes::Bytes;
use futures_util::future::{Either, Ready, ready};
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Response, StatusCode};
use std::pin::Pin;
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::ErrorResponseRef;

/// What a layer's service returns: its own refusal (boxed: refusals are rare, and a small
/// variant keeps every request's future small), or the inner service's future.
pub(crate) type Checked<F, B, E> = Either<Pin<Box<Ready<Result<Response<B>, E>>>>, F>;

/// A JSON-RPC error response without an id, refusing a request for `reason` (recorded:
/// a span and a counter).
pub(crate) fn refusal<B: From<Bytes>>(
    reason: Refusal,
    status: StatusCode,
    message: &str,
) -> Response<B> {
    crate::metrics::refused(reason, status.as_u16());
    let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, message);
    let bytes = serde_json::to_vec(&ErrorResponseRef {
        id: None,
        error: &error,
    })
    .expect("errors serialize");
    let mut r = Response::new(B::from(Bytes::from(bytes)));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// The refusal as the layer's future.
pub(crate) fn refuse<F, B: From<Bytes>, E>(
    reason: Refusal,
    status: StatusCode,
    message: &str,
) -> Checked<F, B, E> {
    Either::Left(Box::pin(ready(Ok(refusal(reason, status, message)))))
}
