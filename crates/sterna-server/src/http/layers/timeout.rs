//! A deadline for each request: handed inward as a [`Deadline`] extension (so the MCP
//! endpoint can stop the handler and answer the request's own id), and enforced here
//! for any inner service that does not answer in time (504).

use super::refusal;
use bytes::Bytes;
use futures_util::FutureExt;
use futures_util::future::{Either, Map};
use http::{Request, Response, StatusCode};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Timeout};
use tower_layer::Layer;
use tower_service::Service;

/// When the request must be answered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline(pub Instant);

/// Gives every request `limit` to be answered (504 beyond); `None` sets no deadline.
///
/// [`McpService`](crate::http::McpService) applies its own
/// [`HttpConfig::timeout`](crate::http::HttpConfig::timeout) to the whole of each MCP
/// request, streamed answers included, and answers a timed-out request with its own id;
/// it also honours a [`Deadline`] this layer sets in front of it.
#[derive(Debug, Clone, Copy)]
pub struct TimeoutLayer {
    limit: Option<Duration>,
}

impl TimeoutLayer {
    /// A deadline `limit` after each request arrives.
    pub fn new(limit: Option<Duration>) -> Self {
        Self { limit }
    }
}

impl<S> Layer<S> for TimeoutLayer {
    type Service = TimeoutService<S>;

    fn layer(&self, inner: S) -> TimeoutService<S> {
        TimeoutService {
            inner,
            limit: self.limit,
        }
    }
}

/// The service of [`TimeoutLayer`].
#[derive(Debug, Clone)]
pub struct TimeoutService<S> {
    inner: S,
    limit: Option<Duration>,
}

type Bounded<F, R, E> = Map<
    Timeout<F>,
    fn(Result<Result<Response<R>, E>, tokio::time::error::Elapsed>) -> Result<Response<R>, E>,
>;

fn timed_out<R: From<Bytes>, E>(
    r: Result<Result<Response<R>, E>, tokio::time::error::Elapsed>,
) -> Result<Response<R>, E> {
    r.unwrap_or_else(|_| Ok(refusal(StatusCode::GATEWAY_TIMEOUT, "Request timed out")))
}

impl<S, B, R> Service<Request<B>> for TimeoutService<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    R: From<Bytes>,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = Either<Bounded<S::Future, R, S::Error>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let Some(limit) = self.limit else {
            return Either::Right(self.inner.call(req));
        };
        let deadline = Instant::now() + limit;
        req.extensions_mut().insert(Deadline(deadline));
        let fut = tokio::time::timeout_at(deadline, self.inner.call(req));
        Either::Left(fut.map(timed_out::<R, S::Error> as fn(_) -> _))
    }
}
