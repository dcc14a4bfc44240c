//! The response body: a complete JSON document, or an SSE stream that carries the
//! request's notifications and ends with its response.

use crate::server::Notifications;
use crate::server::places::Place;
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

/// What produces the final message of a stream: `None` when the request was cancelled
/// (nothing more is sent).
pub(crate) type Final = Pin<Box<dyn Future<Output = Option<Vec<u8>>> + Send>>;

/// The body of an MCP HTTP response.
pub struct McpBody {
    kind: Kind,
    /// The client's place for a request in flight, while the stream runs.
    _held: Option<Place>,
}

enum Kind {
    Full(Option<Bytes>),
    Sse(Box<SseStream>),
    /// Events read from a stream's log (2025-11-25 sessions).
    #[cfg(feature = "legacy")]
    Stream(Pin<Box<dyn futures_util::Stream<Item = Bytes> + Send>>),
}

impl std::fmt::Debug for McpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            Kind::Full(_) => f.write_str("McpBody::Full"),
            Kind::Sse(_) => f.write_str("McpBody::Sse"),
            #[cfg(feature = "legacy")]
            Kind::Stream(_) => f.write_str("McpBody::Stream"),
        }
    }
}

impl From<Bytes> for McpBody {
    fn from(bytes: Bytes) -> Self {
        Self::full(bytes)
    }
}

impl McpBody {
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        Self::of(Kind::Full(Some(bytes.into())))
    }

    pub(crate) fn empty() -> Self {
        Self::of(Kind::Full(None))
    }

    #[cfg(feature = "legacy")]
    /// SSE events, already formatted, as a stream yields them.
    pub(crate) fn stream(events: Pin<Box<dyn futures_util::Stream<Item = Bytes> + Send>>) -> Self {
        Self::of(Kind::Stream(events))
    }

    /// A stream that starts with `first`, carries what `notifications` yields, and ends
    /// with what `fin` produces.
    pub(crate) fn sse(
        first: Vec<u8>,
        notifications: Notifications,
        fin: Final,
        keep_alive: Duration,
    ) -> Self {
        let mut queued = VecDeque::new();
        queued.push_back(event(&first));
        Self::of(Kind::Sse(Box::new(SseStream {
            notifications: Some(notifications),
            fin: Some(fin),
            queued,
            keep_alive,
            idle: Box::pin(tokio::time::sleep(keep_alive)),
            done: false,
        })))
    }

    /// A stream of messages already known (notifications, then the response).
    pub(crate) fn sse_done(messages: Vec<Vec<u8>>, keep_alive: Duration) -> Self {
        Self::of(Kind::Sse(Box::new(SseStream {
            notifications: None,
            fin: None,
            queued: messages.iter().map(|m| event(m)).collect(),
            keep_alive,
            idle: Box::pin(tokio::time::sleep(keep_alive)),
            done: true,
        })))
    }
}

impl McpBody {
    /// The body, holding `place` until it ends (a stream: until it is sent or its client
    /// has gone; a complete document gives it back at once, its request is over).
    pub(crate) fn holding(mut self, place: Place) -> Self {
        if !matches!(self.kind, Kind::Full(_)) {
            self._held = Some(place);
        }
        self
    }

    fn of(kind: Kind) -> Self {
        Self { kind, _held: None }
    }
}

fn event(json: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + 8);
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(json);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

struct SseStream {
    notifications: Option<Notifications>,
    fin: Option<Final>,
    queued: VecDeque<Bytes>,
    keep_alive: Duration,
    idle: Pin<Box<Sleep>>,
    done: bool,
}

impl SseStream {
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        loop {
            if let Some(b) = self.queued.pop_front() {
                self.idle.as_mut().reset(Instant::now() + self.keep_alive);
                return Poll::Ready(Some(b));
            }
            if self.done {
                return Poll::Ready(None);
            }
            if let Some(rx) = &mut self.notifications {
                match rx.poll_recv(cx) {
                    Poll::Ready(Some(n)) => {
                        self.queued.push_back(event(&n));
                        continue;
                    }
                    Poll::Ready(None) => self.notifications = None,
                    Poll::Pending => {}
                }
            }
            let finished = match &mut self.fin {
                Some(fin) => match fin.as_mut().poll(cx) {
                    Poll::Ready(last) => Some(last),
                    Poll::Pending => None,
                },
                None => None,
            };
            if let Some(last) = finished {
                self.fin = None;
                // Notifications sent before the response come first.
                if let Some(rx) = &mut self.notifications {
                    while let Some(n) = rx.try_recv() {
                        self.queued.push_back(event(&n));
                    }
                }
                self.notifications = None;
                if let Some(last) = last {
                    self.queued.push_back(event(&last));
                }
                self.done = true;
                continue;
            }
            if self.idle.as_mut().poll(cx).is_ready() {
                self.queued
                    .push_back(Bytes::from_static(b": keep-alive\n\n"));
                continue;
            }
            return Poll::Pending;
        }
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().kind {
            Kind::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Kind::Sse(s) => s.poll_next(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
            #[cfg(feature = "legacy")]
            Kind::Stream(s) => s
                .as_mut()
                .poll_next(cx)
                .map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Full(b) => b.is_none(),
            Kind::Sse(s) => s.done && s.queued.is_empty(),
            #[cfg(feature = "legacy")]
            Kind::Stream(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Kind::Full(None) => SizeHint::with_exact(0),
            Kind::Sse(_) => SizeHint::default(),
            #[cfg(feature = "legacy")]
            Kind::Stream(_) => SizeHint::default(),
        }
    }
}
