//! Newline-delimited JSON over a byte stream: a child process's stdio, or any
//! reader/writer pair (an in-memory duplex in tests).

use super::{Inbound, Kind, NotificationSink, Origin, Outgoing, Transport, kind_of};
use crate::error::TransportError;
use futures_util::future::BoxFuture;
use std::collections::HashMap;
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
        let inbound: InboundSlot = Arc::default();
        let reader_state = Reader {
            waiters: waiters.clone(),
            inbound: inbound.clone(),
            outbox: outbox.clone(),
            last_sink: None,
        };
        tokio::spawn(reader_state.run(reader));
        Self {
            outbox,
            waiters,
            inbound,
            stop,
            writer_done: tokio::sync::Mutex::new(Some(writer_done)),
        }
    }

    fn closed(&self) -> bool {
        self.stop.is_cancelled() || self.outbox.is_closed()
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
        lock(&self.waiters).insert(id.clone(), (tx, quiet));
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
        let mut line = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            line = rx.recv() => match line {
                Some(l) => l,
                None => break,
            },
        };
        line.push(b'\n');
        if w.write_all(&line).await.is_err() || w.flush().await.is_err() {
            break;
        }
    }
    let _ = w.shutdown().await;
}

/// The longest line accepted from a server (16 MiB); longer ones are skipped.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// The read side: routes each line the server writes.
struct Reader {
    waiters: Waiters,
    inbound: InboundSlot,
    outbox: mpsc::Sender<Vec<u8>>,
    last_sink: Option<NotificationSink>,
}

impl Reader {
    async fn run<R: AsyncRead + Unpin>(mut self, r: R) {
        use futures_util::StreamExt;
        use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};
        let mut lines = FramedRead::new(r, LinesCodec::new_with_max_length(MAX_LINE));
        while let Some(next) = lines.next().await {
            match next {
                Ok(line) => self.handle(line),
                Err(LinesCodecError::MaxLineLengthExceeded) => {
                    tracing::warn!("skipping a line longer than {MAX_LINE} bytes from the server");
                }
                Err(LinesCodecError::Io(e)) if e.kind() == std::io::ErrorKind::InvalidData => {
                    tracing::warn!("skipping a line that is not UTF-8 from the server");
                }
                Err(_) => break,
            }
        }
        // The stream ended: every waiting call fails (its sender is dropped).
        lock(&self.waiters).clear();
    }

    fn handle(&mut self, line: String) {
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
            lock(&self.waiters).insert(req.id.clone(), (tx, sink));
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
