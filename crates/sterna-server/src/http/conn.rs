//! One accepted connection of [`HttpServer`](super::HttpServer): HTTP/1.1 or HTTP/2
//! (prior-knowledge h2c told apart by its preface on a plain socket, or chosen by ALPN
//! under TLS), with the same bounds whichever it speaks.
//!
//! * **Idle connections** close after the header deadline: a connection that has no
//!   request in flight (no stream open, no response body still being sent) for
//!   `header_timeout` is shut down gracefully, and dropped if it still has none shortly
//!   after. That bounds a head that never finishes (on HTTP/1.1 a head is read only while
//!   nothing else is in flight), a socket that never sends its first byte (before the
//!   protocol is known) and an idle HTTP/2 connection with one watchdog, so hyper's
//!   per-request header-read timer is not armed: it cost a timer and an allocation per
//!   request.
//! * **HTTP/2 streams** are bounded per connection: at most
//!   [`http2_max_streams`](super::HttpConfig::http2_max_streams) open at once (more are
//!   refused with `RST_STREAM(REFUSED_STREAM)`), header lists of at most
//!   [`max_header_list`](super::HttpConfig::max_header_list) bytes, and reset floods cut
//!   off with `GOAWAY(ENHANCE_YOUR_CALM)` (streams the client resets before they are
//!   served, and streams the server has to reset for the client's errors). Body size and
//!   time are per request ([`McpService`](super::McpService)'s layers), so they hold per
//!   stream.

use crate::wake::OnWake;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use std::cell::RefCell;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

/// Streams a client may reset before the server has served them, before `GOAWAY`
/// (the "rapid reset" attack).
const MAX_PENDING_RESETS: usize = 20;
/// Streams the server may reset for the client's protocol errors, before `GOAWAY`.
const MAX_ERROR_RESETS: usize = 64;

/// Which protocols a connection may speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocols {
    /// HTTP/1.1, or HTTP/2 when the client starts with its preface (plain sockets).
    Detect,
    /// HTTP/1.1 only (HTTP/2 off, or TLS without `h2` agreed by ALPN).
    Http1,
    /// HTTP/2 only (TLS with `h2` agreed by ALPN).
    #[cfg_attr(not(feature = "tls"), allow(dead_code, reason = "only under TLS"))]
    Http2,
}

/// The HTTP/2 bounds of a connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Http2Limits {
    pub(crate) max_streams: u32,
    pub(crate) max_header_list: u32,
}

/// The connection builder: HTTP/1.1, and HTTP/2 with its bounds.
pub(crate) fn builder(protocols: Protocols, limits: Http2Limits) -> auto::Builder<SpanExecutor> {
    let mut b = auto::Builder::new(SpanExecutor);
    // Responses are small and SSE chunks come in threes (size, data, CRLF): copied into
    // one buffer and written whole, the kernel copies one piece instead of many.
    // No header-read timer per request: `drive`'s watchdog bounds a head (see there).
    b.http1().writev(false).header_read_timeout(None);
    b.http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.max_streams)
        .max_header_list_size(limits.max_header_list)
        .max_pending_accept_reset_streams(MAX_PENDING_RESETS)
        .max_local_error_reset_streams(MAX_ERROR_RESETS);
    match protocols {
        Protocols::Detect => b,
        Protocols::Http1 => b.http1_only(),
        Protocols::Http2 => b.http2_only(),
    }
}

/// Runs HTTP/2 stream tasks in the span of the connection that opened them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpanExecutor;

impl<F> hyper::rt::Executor<F> for SpanExecutor
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        tokio::spawn(tracing::Instrument::in_current_span(fut));
    }
}

/// What hyper serves on one connection.
pub(super) type ConnService = Counted<super::routed::Either>;

/// How long a connection asked to make room may take to close while it has no request in
/// flight (a head still being sent) before it is dropped.
const EVICT_GRACE: Duration = Duration::from_millis(500);

/// When a connection should close: at `shutdown`, or when `evict`ed to make room for
/// another (see `served.rs`). `evict` is a child of `shutdown`: cancelled by either.
pub(crate) struct Closing {
    pub(crate) shutdown: CancellationToken,
    pub(crate) evict: CancellationToken,
}

/// Serves one connection until it ends; shut down gracefully (streams in flight finish)
/// when `shutdown` is cancelled, when it is evicted, or when it has had nothing in flight
/// for `idle` (the header deadline: hyper's own per-request header timer is not armed, this
/// one bound covers HTTP/1.1 and HTTP/2 alike). Evicted or idle, it is dropped if it still
/// has nothing in flight [`EVICT_GRACE`] later: a head that never finishes is not a
/// request in flight, and a graceful shutdown waits for it.
pub(crate) async fn drive<I>(
    builder: &auto::Builder<SpanExecutor>,
    io: I,
    service: ConnService,
    activity: Arc<Activity>,
    idle: Duration,
    close: Closing,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let conn = builder.serve_connection(TokioIo::new(io), service);
    let mut conn = std::pin::pin!(conn);
    let mut watch = Watchdog {
        activity: &activity,
        idle,
        closing: false,
        due: None,
        was_asked: false,
    };
    // One wait for both reasons to close (a shutdown cancels `evict` too): one token.
    let asked = close.evict.cancelled();
    let mut asked = std::pin::pin!(asked);
    loop {
        // Polled only on its own wakes, not at each of the connection's reads and writes.
        let woke = OnWake::new(watch.next(asked.as_mut()));
        let woke = tokio::select! {
            biased;
            ended = conn.as_mut() => {
                if let Err(e) = ended {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                return;
            }
            woke = woke => woke,
        };
        match woke {
            Woke::Asked => {
                watch.was_asked = true;
                if !close.shutdown.is_cancelled() {
                    tracing::debug!("idle connection closed to make room for a new one");
                    watch.due = Some(Instant::now() + EVICT_GRACE);
                }
                if !std::mem::replace(&mut watch.closing, true) {
                    conn.as_mut().graceful_shutdown();
                }
            }
            Woke::Due => {
                if activity.quiet().is_some() {
                    return;
                }
                // A request came in first: it finishes, then the connection closes.
                watch.due = Some(Instant::now() + EVICT_GRACE);
            }
            Woke::Idle => {
                tracing::debug!("idle connection closed");
                watch.closing = true;
                watch.due = Some(Instant::now() + EVICT_GRACE);
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

/// What a connection's watchdog waits for, and what it knows of the connection.
struct Watchdog<'a> {
    activity: &'a Activity,
    idle: Duration,
    /// A graceful shutdown has begun.
    closing: bool,
    /// When a closing connection is next checked for having nothing in flight.
    due: Option<Instant>,
    /// The eviction (or shutdown) token has fired.
    was_asked: bool,
}

/// Why the watchdog woke.
enum Woke {
    /// Evicted, or the server is shutting down.
    Asked,
    /// A closing connection's check is due.
    Due,
    /// Nothing in flight for the header deadline.
    Idle,
}

impl Watchdog<'_> {
    async fn next(&self, asked: Pin<&mut WaitForCancellationFuture<'_>>) -> Woke {
        tokio::select! {
            () = asked, if !self.was_asked => Woke::Asked,
            () = sleep_until(self.due) => Woke::Due,
            () = self.activity.idle_for(self.idle), if !self.closing => Woke::Idle,
        }
    }
}

/// Sleeps until `at`, or for ever.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The requests in flight on one connection, counted from the call to the end (or drop)
/// of the response body, and when the last one ended: a request that ends wakes nobody
/// (the watchdog reads the time when its timer fires).
#[derive(Debug)]
pub(crate) struct Activity {
    active: AtomicUsize,
    /// When the count last fell to zero, in milliseconds after `epoch`.
    quiet_since: AtomicU64,
    /// When the connection was accepted (idle since then until its first request).
    epoch: Instant,
}

impl Default for Activity {
    fn default() -> Self {
        Self {
            active: AtomicUsize::new(0),
            quiet_since: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }
}

impl Activity {
    /// A request starts; it counts until the guard is dropped.
    pub(crate) fn start(self: &Arc<Self>) -> ActiveGuard {
        self.active.fetch_add(1, Ordering::AcqRel);
        ActiveGuard(self.clone())
    }

    /// When nothing is in flight: since when.
    pub(crate) fn quiet(&self) -> Option<Instant> {
        if self.active.load(Ordering::Acquire) > 0 {
            return None;
        }
        let ms = self.quiet_since.load(Ordering::Acquire);
        Some(self.epoch + Duration::from_millis(ms))
    }

    /// Completes once no request has been in flight for `idle` in a row: one timer at a
    /// time, set for when that would be.
    async fn idle_for(&self, idle: Duration) {
        loop {
            match self.quiet() {
                Some(since) if since + idle <= Instant::now() => return,
                Some(since) => tokio::time::sleep_until(since + idle).await,
                None => tokio::time::sleep(idle).await,
            }
        }
    }
}

/// One request in flight (see [`Activity`]).
#[derive(Debug)]
pub(crate) struct ActiveGuard(Arc<Activity>);

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        let a = &self.0;
        // Stored before the count falls, so a watchdog that sees zero sees this time.
        let ms = u64::try_from(a.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        a.quiet_since.fetch_max(ms, Ordering::AcqRel);
        a.active.fetch_sub(1, Ordering::AcqRel);
    }
}

pin_project_lite::pin_project! {
    /// A response body that keeps its request counted as in flight until it ends.
    pub(crate) struct Tracked<B> {
        #[pin]
        inner: B,
        guard: Option<ActiveGuard>,
    }
}

impl<B> Tracked<B> {
    pub(crate) fn new(inner: B, guard: ActiveGuard) -> Self {
        Self {
            inner,
            guard: Some(guard),
        }
    }
}

impl<B: http_body::Body> http_body::Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<B::Data>, B::Error>>> {
        let me = self.project();
        let frame = std::task::ready!(me.inner.poll_frame(cx));
        if frame.is_none() {
            me.guard.take();
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// A connection's service whose requests count as in flight (see [`Activity`]) until
/// their response bodies end.
///
/// hyper calls it by reference and it calls the stack inside in place: tower's adapter
/// would clone the whole stack for each request (an atomic count each way for every `Arc`
/// in it) to call it once and drop it. The stack is always ready (`Either::poll_ready`
/// answers `Ready` without asking the services inside, none of which ever waits), so
/// there is nothing to wait for before the call.
pub(crate) struct Counted<S> {
    inner: RefCell<S>,
    activity: Arc<Activity>,
}

impl<S> Counted<S> {
    pub(crate) fn new(inner: S, activity: Arc<Activity>) -> Self {
        Self {
            inner: RefCell::new(inner),
            activity,
        }
    }
}

type Either = super::routed::Either;
type Request = http::Request<hyper::body::Incoming>;

impl hyper::service::Service<Request> for Counted<Either> {
    type Response = http::Response<Tracked<super::body::McpBody>>;
    type Error = std::convert::Infallible;
    type Future = CountedFuture<<Either as tower_service::Service<Request>>::Future>;

    fn call(&self, req: Request) -> Self::Future {
        use tower_service::Service;
        CountedFuture {
            guard: Some(self.activity.start()),
            // Never borrowed elsewhere, nor across a call: the borrow ends with the line.
            inner: self.inner.borrow_mut().call(req),
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`Counted`]: the answer, its body holding the request's guard.
    pub(crate) struct CountedFuture<F> {
        #[pin]
        inner: F,
        guard: Option<ActiveGuard>,
    }
}

impl<F, B, E> std::future::Future for CountedFuture<F>
where
    F: std::future::Future<Output = Result<http::Response<B>, E>>,
{
    type Output = Result<http::Response<Tracked<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.project();
        let answer = std::task::ready!(me.inner.poll(cx));
        let guard = me.guard.take().expect("polled after completion");
        Poll::Ready(answer.map(|r| r.map(|body| Tracked::new(body, guard))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn idle_only_when_nothing_is_in_flight() {
        let a = Arc::new(Activity::default());
        let guard = a.start();
        let idle =
            tokio::time::timeout(Duration::from_secs(60), a.idle_for(Duration::from_secs(1)));
        assert!(idle.await.is_err(), "a request in flight is not idle");
        drop(guard);
        let idle = tokio::time::timeout(Duration::from_secs(2), a.idle_for(Duration::from_secs(1)));
        assert!(idle.await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_that_ended_restarts_the_clock() {
        let a = Arc::new(Activity::default());
        let started = Instant::now();
        let watchdog = {
            let a = a.clone();
            tokio::spawn(async move { a.idle_for(Duration::from_secs(1)).await })
        };
        tokio::time::sleep(Duration::from_millis(900)).await;
        drop(a.start());
        watchdog.await.unwrap();
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(1900),
            "idle for 1 s after the request at 0.9 s, closed at {waited:?}"
        );
        assert!(waited < Duration::from_millis(2000), "closed at {waited:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_never_asks_is_idle_from_its_acceptance() {
        let a = Activity::default();
        let started = Instant::now();
        a.idle_for(Duration::from_secs(3)).await;
        assert_eq!(started.elapsed().as_secs(), 3);
    }
}
