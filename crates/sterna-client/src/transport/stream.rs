//! Newline-delimited JSON over a byte stream: a child process's stdio, or any
//! reader/writer pair (an in-memory duplex in tests).

use super::{Inbound, Kind, NotificationSink, Origin, Outgoing, Transport, kind_of};
use crate::error::TransportError;
use futures_util::future::BoxFuture;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use sterna_types::jsonrpc::RequestId;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

type Waiters = Arc<Mutex<HashMap<RequestId, (oneshot::Sender<Vec<u8>>, NotificationSink)>>>;
type InboundSlot = Arc<OnceLock<Arc<dyn Inbound>>>;

/// Requests over a byte stream. Responses are matched to requests by id, so calls run
/// concurrently; a call dropped before its response sends `notifications/cancelled`.
///
/// With a 2025-11-25 server the same stream also carries the server's own requests
/// (elicitation, sampling, roots, ping): the client answers them with its handlers.
pub struct StreamTransport {
    outbox: mpsc::Sender<Vec<u8>>,
    waiters: Waiters,
    /// Set (under the `waiters` lock) when the read side ended: no response will come.
    ended: Arc<AtomicBool>,
    inbound: InboundSlot,
    stop: CancellationToken,
    writer_done: tokio::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl std::fmt::Debug for StreamTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamTransport").finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// How the server answered a probe.
#[derive(Debug)]
pub(crate) enum ProbeReply {
    /// The response (raw JSON).
    Answer(Vec<u8>),
    /// The stream ended (the server exited or closed its output).
    Closed,
    /// No answer in time.
    Silent,
}

impl StreamTransport {
    /// Talks over `reader`/`writer` (e.g. the halves of an in-memory duplex to a
    /// server).
    pub fn new<R, W>(reader: R, writer: W) -> Self
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (outbox, rx) = mpsc::channel::<Vec<u8>>(256);
        let stop = CancellationToken::new();
        let writer_done = tokio::spawn(write_loop(writer, rx, stop.clone()));
        let waiters: Waiters = Arc::default();
        let ended = Arc::new(AtomicBool::new(false));
        let inbound: InboundSlot = Arc::default();
        let reader_state = Reader {
            waiters: waiters.clone(),
            ended: ended.clone(),
            inbound: inbound.clone(),
            outbox: outbox.clone(),
            last_sink: None,
        };
        tokio::spawn(reader_state.run(reader));
        Self {
            outbox,
            waiters,
            ended,
            inbound,
            stop,
            writer_done: tokio::sync::Mutex::new(Some(writer_done)),
        }
    }

    fn closed(&self) -> bool {
        self.stop.is_cancelled() || self.outbox.is_closed()
    }

    /// Registers a call waiting for the response `id`; `false` when the read side has
    /// already ended (the server is gone: waiting would never end).
    fn wait_for(
        &self,
        id: RequestId,
        tx: oneshot::Sender<Vec<u8>>,
        sink: NotificationSink,
    ) -> bool {
        let mut waiters = lock(&self.waiters);
        if self.ended.load(Ordering::Acquire) {
            return false;
        }
        waiters.insert(id, (tx, sink));
        true
    }

    /// Stops writing and closes the write half (the server sees end of input).
    pub async fn shutdown(&self) {
        self.stop.cancel();
        if let Some(h) = self.writer_done.lock().await.take() {
            let _ = h.await;
        }
        lock(&self.waiters).clear();
    }

    /// From now on, the server's requests and notifications go to `inbound` (the server
    /// speaks 2025-11-25). Only the first call has an effect.
    pub(crate) fn attach(&self, inbound: Arc<dyn Inbound>) {
        let _ = self.inbound.set(inbound);
    }

    /// Writes one message (a notification, or a response to a server request).
    pub(crate) async fn send_message(&self, message: Vec<u8>) -> Result<(), TransportError> {
        if self.closed() {
            return Err(TransportError::Closed);
        }
        self.outbox
            .send(message)
            .await
            .map_err(|_| TransportError::Closed)
    }

    /// Sends a request and waits up to `wait` for its response, without the
    /// `notifications/cancelled` a dropped call sends (a probe of a server that may not
    /// know what it is asked).
    pub(crate) async fn probe(&self, id: RequestId, body: Vec<u8>, wait: Duration) -> ProbeReply {
        let (tx, rx) = oneshot::channel();
        let quiet: NotificationSink = Arc::new(|_: &[u8]| {});
        if !self.wait_for(id.clone(), tx, quiet) {
            return ProbeReply::Closed;
        }
        if self.send_message(body).await.is_err() {
            lock(&self.waiters).remove(&id);
            return ProbeReply::Closed;
        }
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(bytes)) => ProbeReply::Answer(bytes),
            Ok(Err(_)) => ProbeReply::Closed,
            Err(_) => {
                lock(&self.waiters).remove(&id);
                ProbeReply::Silent
            }
        }
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut w: W,
    mut rx: mpsc::Receiver<Vec<u8>>,
    stop: CancellationToken,
) {
    loop {
        let line = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            line = rx.recv() => match line {
                Some(l) => l,
                None => break,
            },
        };
        if write_line(&mut w, line).await.is_err() {
            let _ = w.shutdown().await;
            return;
        }
    }
    // What was queued before the stop still goes out (a `notifications/cancelled` sent
    // just before closing, say).
    while let Ok(line) = rx.try_recv() {
        if write_line(&mut w, line).await.is_err() {
            break;
        }
    }
    let _ = w.shutdown().await;
}

async fn write_line<W: AsyncWrite + Unpin>(w: &mut W, mut line: Vec<u8>) -> std::io::Result<()> {
    super::tap::sent("stdio", &line);
    line.push(b'\n');
    w.write_all(&line).await?;
    w.flush().await
}

/// The longest line accepted from a server (16 MiB); longer ones are skipped.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// The read side: routes each line the server writes.
struct Reader {
    waiters: Waiters,
    ended: Arc<AtomicBool>,
    inbound: InboundSlot,
    outbox: mpsc::Sender<Vec<u8>>,
    last_sink: Option<NotificationSink>,
}

impl Reader {
    async fn run<R: AsyncRead + Unpin>(mut self, r: R) {
        use futures_util::StreamExt;
        use sterna_types::jsonrpc::lines::{Line, Lines};
        let mut lines = tokio_util::codec::FramedRead::new(r, Lines::new(MAX_LINE));
        while let Some(Ok(line)) = lines.next().await {
            match line {
                Line::Text(line) => self.handle(line),
                Line::TooLong => {
                    tracing::warn!("skipping a line longer than {MAX_LINE} bytes from the server");
                }
                Line::NotUtf8 => {
                    tracing::warn!("skipping a line that is not UTF-8 from the server")
                }
            }
        }
        // The stream ended: every waiting call fails (its sender is dropped), and so does
        // every later one.
        let mut waiters = lock(&self.waiters);
        self.ended.store(true, Ordering::Release);
        waiters.clear();
    }

    fn handle(&mut self, line: String) {
        super::tap::received("stdio", line.as_bytes());
        let kind = kind_of(line.as_bytes());
        match kind {
            Kind::Response(id) => match lock(&self.waiters).remove(&id) {
                Some((tx, _)) => {
                    let _ = tx.send(line.into_bytes());
                }
                None => tracing::warn!(%id, "a response to no request in flight"),
            },
            Kind::Notification => self.notification(line.as_bytes()),
            Kind::Request(method) => self.request(method, line.into_bytes()),
            Kind::Other => {}
        }
    }

    fn notification(&mut self, line: &[u8]) {
        if let Some(inbound) = self.inbound.get() {
            return inbound.notification(line);
        }
        // Notifications are not addressed to a request on stdio: hand them to the sink of
        // a call in flight (they share one client-wide sink).
        let sink = lock(&self.waiters)
            .values()
            .next()
            .map(|(_, s)| s.clone())
            .or(self.last_sink.clone());
        if let Some(s) = &sink {
            s(line);
        }
        self.last_sink = sink;
    }

    fn request(&self, method: String, line: Vec<u8>) {
        let Some(inbound) = self.inbound.get() else {
            tracing::warn!(%method, "ignoring a request from the server (2026-07-28 servers send none)");
            return;
        };
        let answer = inbound.answer(line, Origin::Unrelated);
        let outbox = self.outbox.clone();
        tokio::spawn(async move {
            let _ = outbox.send(answer.await).await;
        });
    }
}

/// Sends `notifications/cancelled` when a call is dropped before its response.
struct CancelOnDrop<'a> {
    id: Option<RequestId>,
    outbox: &'a mpsc::Sender<Vec<u8>>,
    waiters: &'a Waiters,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            lock(self.waiters).remove(&id);
            let msg = serde_json::json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": "the client stopped waiting"}
            });
            let _ = self.outbox.try_send(msg.to_string().into_bytes());
        }
    }
}

impl Transport for StreamTransport {
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.shutdown())
    }

    fn request(
        &self,
        req: Outgoing,
        sink: NotificationSink,
    ) -> BoxFuture<'_, Result<Vec<u8>, TransportError>> {
        Box::pin(async move {
            if self.closed() {
                return Err(TransportError::Closed);
            }
            let (tx, rx) = oneshot::channel();
            if !self.wait_for(req.id.clone(), tx, sink) {
                return Err(TransportError::Closed);
            }
            let mut guard = CancelOnDrop {
                id: Some(req.id.clone()),
                outbox: &self.outbox,
                waiters: &self.waiters,
            };
            if self.outbox.send(req.body).await.is_err() {
                guard.id = None;
                lock(&self.waiters).remove(&req.id);
                return Err(TransportError::Closed);
            }
            let result = rx.await.map_err(|_| TransportError::Closed);
            guard.id = None;
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: i64) -> Outgoing {
        Outgoing {
            id: RequestId::Number(id),
            method: "tools/list".into(),
            body: br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_vec(),
            protocol_version: String::new(),
            name: None,
            params: Vec::new(),
        }
    }

    /// A server that is gone (its output ended) answers nothing: a request or a probe
    /// sent after that fails at once instead of waiting for ever (or for a timeout).
    #[tokio::test]
    async fn requests_after_the_end_of_the_stream_fail_at_once() {
        let t = StreamTransport::new(tokio::io::empty(), tokio::io::sink());
        for _ in 0..500 {
            if t.ended.load(Ordering::Acquire) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let sink: NotificationSink = Arc::new(|_: &[u8]| {});
        let r = tokio::time::timeout(Duration::from_secs(20), t.request(request(1), sink)).await;
        assert!(matches!(r, Ok(Err(TransportError::Closed))), "{r:?}");
        let p = t
            .probe(
                RequestId::Number(2),
                b"{}".to_vec(),
                Duration::from_secs(20),
            )
            .await;
        assert!(matches!(p, ProbeReply::Closed), "{p:?}");
    }

    /// A line from the server that is not UTF-8 is skipped, and the answer after it still
    /// reaches its call (the reader stopped at the first bad line: every call then failed).
    #[tokio::test]
    async fn a_bad_line_from_the_server_is_skipped_not_the_end() {
        use tokio::io::AsyncWriteExt;
        let (mut server, client) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(client);
        let t = StreamTransport::new(r, w);
        server
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}\n")
            .await
            .unwrap();
        server
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n")
            .await
            .unwrap();
        let sink: NotificationSink = Arc::new(|_: &[u8]| {});
        let r = tokio::time::timeout(Duration::from_secs(20), t.request(request(1), sink)).await;
        let body = r
            .expect("an answer within 20 s")
            .expect("the stream goes on");
        assert!(String::from_utf8_lossy(&body).contains("tools"), "{body:?}");
    }
}
