//! Request bodies larger than the limit get 413: at once when `Content-Length` says so,
//! otherwise when the body is read past the limit (the inner service sees a
//! [`Limited`] body whose read fails with `LengthLimitError`).

use super::{Checked, refuse};
use crate::metrics::Refusal;
use bytes::Bytes;
use futures_util::future::Either;
use http::{Request, Response, StatusCode};
use http_body::Body;
use http_body_util::Limited;
use std::task::{Context, Poll};
use tower_layer::Layer;
use tower_service::Service;

/// Caps request bodies at `max` bytes (413 beyond).
#[derive(Debug, Clone, Copy)]
pub struct BodyLimitLayer {
    max: usize,
}

impl BodyLimitLayer {
    /// A limit of `max` bytes.
    pub fn new(max: usize) -> Self {
        Self { max }
    }
}

impl<S> Layer<S> for BodyLimitLayer {
    type Service = BodyLimitService<S>;

    fn layer(&self, inner: S) -> BodyLimitService<S> {
        BodyLimitService {
            inner,
            max: self.max,
        }
    }
}

/// The service of [`BodyLimitLayer`].
#[derive(Debug, Clone)]
pub struct BodyLimitService<S> {
    inner: S,
    max: usize,
}

impl<S> BodyLimitService<S> {
    /// The service behind this layer.
    pub(crate) fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }
}

impl<S, B, R> Service<Request<B>> for BodyLimitService<S>
where
    S: Service<Request<Limited<B>>, Response = Response<R>>,
    B: Body,
    R: From<Bytes>,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = Checked<S::Future, R, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        if req.body().size_hint().lower() > self.max as u64 {
            return refuse(
                Refusal::BodyTooLarge,
                StatusCode::PAYLOAD_TOO_LARGE,
                &too_large(self.max),
            );
        }
        let max = self.max;
        Either::Right(self.inner.call(req.map(|b| Limited::new(b, max))))
    }
}

/// The message of a 413.
pub(crate) fn too_large(max: usize) -> String {
    format!("Request body larger than {max} bytes")
}
