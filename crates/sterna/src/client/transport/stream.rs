//! Newline-delimited JSON over a byte stream: a child process's stdio, or any
//! reader/writer pair (an in-memory duplex in tests).

use super::{NotificationSink, Outgoing, Transport};
use crate::client::error::TransportError;
use futures_util::future::BoxFuture;
use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use sterna_types::jsonrpc::{Incoming, RawMessage, RequestId};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

type Waiters = Arc<Mutex<HashMap<RequestId, (oneshot::Sender<Vec<u8>>, NotificationSink)>>>;

/// Requests over a byte stream. Responses are matched to requests by id, so calls run
/// concurrently; a call dropped before its response sends `notifications/cancelled`.
pub struct StreamTransport {
    outbox: mpsc::Sender<Vec<u8>>,
    waiters: Waiters,
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

impl StreamTransport {
    /// Talks over `reader`/`writer` (e.g. the halves of
    /// [`transport::duplex`](crate::transport::duplex)).
    pub fn new<R, W>(reader: R, writer: W) -> Self
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (outbox, rx) = mpsc::channel::<Vec<u8>>(256);
        let stop = CancellationToken::new();
        let writer_done = tokio::spawn(write_loop(writer, rx, stop.clone()));
        let waiters: Waiters = Arc::default();
        tokio::spawn(read_loop(reader, waiters.clone()));
        Self {
            outbox,
            waiters,
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

async fn read_loop<R: AsyncRead + Unpin>(r: R, waiters: Waiters) {
    use futures_util::StreamExt;
    use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};
    let mut lines = FramedRead::new(r, LinesCodec::new_with_max_length(MAX_LINE));
    let mut last_sink: Option<NotificationSink> = None;
    while let Some(next) = lines.next().await {
        let line = match next {
            Ok(l) => l,
            Err(LinesCodecError::MaxLineLengthExceeded) => {
                tracing::warn!("skipping a line longer than {MAX_LINE} bytes from the server");
                continue;
            }
            Err(LinesCodecError::Io(e)) if e.kind() == std::io::ErrorKind::InvalidData => {
                tracing::warn!("skipping a line that is not UTF-8 from the server");
                continue;
            }
            Err(_) => break,
        };
        match RawMessage::parse(line.as_bytes()) {
            Ok(Incoming::Result { id, .. }) | Ok(Incoming::Error { id: Some(id), .. }) => {
                if let Some((tx, _)) = lock(&waiters).remove(&id) {
                    let _ = tx.send(line.into_bytes());
                } else {
                    tracing::warn!(%id, "a response to no request in flight");
                }
            }
            Ok(Incoming::Notification { .. }) => {
                // Notifications are not addressed to a request on stdio: hand them to the
                // sink of a call in flight (they share one client-wide sink).
                let sink = lock(&waiters)
                    .values()
                    .next()
                    .map(|(_, s)| s.clone())
                    .or(last_sink.clone());
                if let Some(s) = &sink {
                    s(line.as_bytes());
                }
                last_sink = sink;
            }
            Ok(Incoming::Request { method, .. }) => {
                tracing::warn!(%method, "ignoring a request from the server (2026-07-28 servers send none)");
            }
            Ok(Incoming::Error { id: None, error }) => {
                tracing::warn!(%error, "the server reported an error without an id");
            }
            Err(e) => tracing::warn!(error = %e.error, "unreadable line from the server"),
        }
    }
    // The stream ended: every waiting call fails (its sender is dropped).
    lock(&waiters).clear();
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

/// A server started as a child process, spoken to over its stdin/stdout; its stderr is
/// logged (at `info`, target `sterna::client::server_stderr`), never read as an error.
pub struct StdioTransport {
    stream: StreamTransport,
    child: tokio::sync::Mutex<Option<Child>>,
}

impl std::fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioTransport").finish()
    }
}

impl StdioTransport {
    /// Starts `command` with piped stdio.
    pub fn spawn(mut command: Command) -> std::io::Result<Self> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("no stdin"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout"))?;
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::info!(target: "sterna::client::server_stderr", "{line}");
                }
            });
        }
        Ok(Self {
            stream: StreamTransport::new(stdout, stdin),
            child: tokio::sync::Mutex::new(Some(child)),
        })
    }
}

impl Transport for StdioTransport {
    fn request(
        &self,
        req: Outgoing,
        sink: NotificationSink,
    ) -> BoxFuture<'_, Result<Vec<u8>, TransportError>> {
        self.stream.request(req, sink)
    }

    /// Closes the server's stdin, waits up to 2 s, then sends SIGTERM, waits 2 s more,
    /// then kills it.
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let Some(mut child) = self.child.lock().await.take() else {
                return;
            };
            self.stream.shutdown().await;
            if tokio::time::timeout(Duration::from_secs(2), child.wait())
                .await
                .is_ok()
            {
                return;
            }
            #[cfg(unix)]
            if let Some(pid) = child.id() {
                use nix::sys::signal::{Signal, kill};
                use nix::unistd::Pid;
                let _ = kill(Pid::from_raw(pid as i32), Signal::SIGTERM);
                if tokio::time::timeout(Duration::from_secs(2), child.wait())
                    .await
                    .is_ok()
                {
                    return;
                }
            }
            let _ = child.kill().await;
        })
    }
}
