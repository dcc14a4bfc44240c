//! Deadlines. For each request: handed inward as a [`Deadline`] extension (so the MCP
//! endpoint can stop the handler and answer the request's own id), and enforced here
//! for any inner service that does not answer in time (504). For each request body
//! ([`BodyTimeoutLayer`]): the whole body must arrive in time (408, connection closed),
//! so a client that sends headers and stalls cannot hold a connection and a task.

use super::refusal;
use crate::metrics::Refusal;
use bytes::Bytes;
use futures_util::FutureExt;
use futures_util::future::{Either, Map};
use http::header::CONNECTION;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep, Timeout};
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
    r.unwrap_or_else(|_| {
        Ok(refusal(
            Refusal::Timeout,
            StatusCode::GATEWAY_TIMEOUT,
            "Request timed out",
        ))
    })
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

/// Gives every request `limit` from the end of its headers to deliver its whole body;
/// a body still incomplete then gets 408 with `Connection: close` (the inner service's
/// work on it is dropped, and hyper closes the connection instead of reading on).
/// `None` sets no limit. Once the body has arrived the request runs on unbounded by
/// this layer (see [`TimeoutLayer`] for that).
///
/// The inner service sees the body as a [`TimedBody`], which only notes when the body
/// ends; the deadline itself is kept by this layer's future, so it holds even while the
/// inner service is not reading.
#[derive(Debug, Clone, Copy)]
pub struct BodyTimeoutLayer {
    limit: Option<Duration>,
}

impl BodyTimeoutLayer {
    /// A deadline `limit` after each request's headers.
    pub fn new(limit: Option<Duration>) -> Self {
        Self { limit }
    }
}

impl<S> Layer<S> for BodyTimeoutLayer {
    type Service = BodyTimeoutService<S>;

    fn layer(&self, inner: S) -> BodyTimeoutService<S> {
        BodyTimeoutService {
            inner,
            limit: self.limit,
        }
    }
}

/// The service of [`BodyTimeoutLayer`].
#[derive(Debug, Clone)]
pub struct BodyTimeoutService<S> {
    inner: S,
    limit: Option<Duration>,
}

impl<S> BodyTimeoutService<S> {
    /// The service behind this layer.
    pub(crate) fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }
}

impl<S, B, R> Service<Request<B>> for BodyTimeoutService<S>
where
    S: Service<Request<TimedBody<B>>, Response = Response<R>>,
    B: Body,
    R: From<Bytes>,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = BodyTimeoutFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        // HTTP/2 has no `Connection` header: the 408 ends the stream, not the connection.
        let close = req.version() < http::Version::HTTP_2;
        let arrived = Arc::new(AtomicBool::new(req.body().is_end_stream()));
        let watched = arrived.clone();
        let req = req.map(|body| TimedBody {
            inner: body,
            arrived: watched,
        });
        BodyTimeoutFuture {
            inner: self.inner.call(req),
            // The clock starts when the request first waits (at once, for a body still on
            // its way); a request answered on its first poll never needs a timer.
            limit: self.limit,
            sleep: None,
            arrived,
            close,
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`BodyTimeoutService`]: the inner answer, or 408 when the body is
    /// not complete by the deadline.
    #[derive(Debug)]
    pub struct BodyTimeoutFuture<F> {
        #[pin]
        inner: F,
        limit: Option<Duration>,
        #[pin]
        sleep: Option<Sleep>,
        arrived: Arc<AtomicBool>,
        close: bool,
    }
}

impl<F, R, E> Future for BodyTimeoutFuture<F>
where
    F: Future<Output = Result<Response<R>, E>>,
    R: From<Bytes>,
{
    type Output = Result<Response<R>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut me = self.project();
        if let Poll::Ready(answer) = me.inner.poll(cx) {
            return Poll::Ready(answer);
        }
        if me.sleep.is_none()
            && let Some(limit) = me.limit.take()
            && !me.arrived.load(Ordering::Acquire)
        {
            me.sleep.set(Some(tokio::time::sleep(limit)));
        }
        let expired = me
            .sleep
            .as_mut()
            .as_pin_mut()
            .is_some_and(|sleep| sleep.poll(cx).is_ready());
        if expired {
            if !me.arrived.load(Ordering::Acquire) {
                return Poll::Ready(Ok(body_timed_out(*me.close)));
            }
            me.sleep.set(None);
        }
        Poll::Pending
    }
}

/// The 408 of a body that did not arrive in time; on HTTP/1 the connection is not reused
/// (`close`), on HTTP/2 only the stream ends.
fn body_timed_out<R: From<Bytes>>(close: bool) -> Response<R> {
    let mut r = refusal(
        Refusal::BodyTimeout,
        StatusCode::REQUEST_TIMEOUT,
        "Request body not received in time",
    );
    if close {
        r.headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    r
}

pin_project_lite::pin_project! {
    /// A request body that notes when it has been received in full (for
    /// [`BodyTimeoutLayer`]); otherwise the body as it is.
    #[derive(Debug)]
    pub struct TimedBody<B> {
        #[pin]
        inner: B,
        arrived: Arc<AtomicBool>,
    }
}

impl<B: Body> Body for TimedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let me = self.project();
        let frame = std::task::ready!(me.inner.poll_frame(cx));
        if frame.is_none() {
            me.arrived.store(true, Ordering::Release);
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        let end = self.inner.is_end_stream();
        if end {
            self.arrived.store(true, Ordering::Release);
        }
        end
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
