//! A POST must carry `Content-Type: application/json` (415 otherwise). Other methods
//! pass: they have no body to read.

use super::{Checked, refuse};
use crate::metrics::Refusal;
use bytes::Bytes;
use futures_util::future::Either;
use http::header::CONTENT_TYPE;
use http::{Method, Request, Response, StatusCode};
use std::task::{Context, Poll};
use tower_layer::Layer;
use tower_service::Service;

/// Refuses POSTs whose body is not declared as JSON (415).
#[derive(Debug, Clone, Copy, Default)]
pub struct ContentTypeLayer;

impl<S> Layer<S> for ContentTypeLayer {
    type Service = ContentTypeService<S>;

    fn layer(&self, inner: S) -> ContentTypeService<S> {
        ContentTypeService { inner }
    }
}

/// The service of [`ContentTypeLayer`].
#[derive(Debug, Clone)]
pub struct ContentTypeService<S> {
    inner: S,
}

impl<S> ContentTypeService<S> {
    /// The service behind this layer.
    pub(crate) fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }
}

impl<S, B, R> Service<Request<B>> for ContentTypeService<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    R: From<Bytes>,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = Checked<S::Future, R, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let json = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|c| c.split(';').next())
            .is_some_and(|c| c.trim().eq_ignore_ascii_case("application/json"));
        if json || req.method() != Method::POST {
            Either::Right(self.inner.call(req))
        } else {
            refuse(
                Refusal::ContentType,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Content-Type must be application/json",
            )
        }
    }
}
