//! Newline-delimited JSON-RPC over a byte stream, as the stdio transport defines it.
//!
//! * One message per line; lines longer than the limit are refused (`-32700`) and
//!   skipped.
//! * Each request runs concurrently; responses and the request's notifications go to the
//!   writer in the order produced.
//! * `notifications/cancelled` stops the named request: its handler future is dropped and
//!   nothing more is written for it.
//! * At end of input, requests in flight finish, then the writer is flushed and the
//!   function returns.

use crate::server::inbound::{Inbound, OwnedRequest, classify_envelope};
use crate::server::{Notifier, RequestEnv, Response, Server, log_panic};
use futures_util::{FutureExt, StreamExt};
use std::collections::HashMap;
use std::io;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::{ErrorResponseRef, RequestId};
use sterna_types::notifications::CancelledNotificationParams;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};
use tokio_util::sync::CancellationToken;

/// Options of a stream transport.
#[derive(Debug, Clone)]
pub struct StreamOptions {
    /// Longest accepted line in bytes (default 16 MiB).
    pub max_line: usize,
    /// The env each request gets (principal …); cancellation and notifications are
    /// filled in per request.
    pub env: RequestEnv,
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self {
            max_line: 16 * 1024 * 1024,
            env: RequestEnv::default(),
        }
    }
}

type InFlight = Arc<Mutex<HashMap<RequestId, CancellationToken>>>;

/// Serves `server` on stdin/stdout until stdin closes. Logs belong on stderr.
pub async fn serve_stdio(server: Server) -> io::Result<()> {
    serve_stream(
        server,
        tokio::io::stdin(),
        tokio::io::stdout(),
        StreamOptions::default(),
    )
    .await
}

/// Serves `server` over a byte stream until the reader reaches end of input.
pub async fn serve_stream<R, W>(
    server: Server,
    reader: R,
    writer: W,
    options: StreamOptions,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::channel::<Vec<u8>>(1024);
    let writing = tokio::spawn(write_loop(writer, rx));
    let mut conn = Connection {
        server,
        env: options.env,
        tx,
        in_flight: Arc::default(),
        tasks: JoinSet::new(),
    };
    let mut lines = FramedRead::new(reader, LinesCodec::new_with_max_length(options.max_line));
    while let Some(line) = lines.next().await {
        match line {
            Ok(l) if l.trim().is_empty() => {}
            Ok(l) => conn.receive(&l).await,
            Err(LinesCodecError::MaxLineLengthExceeded) => {
                conn.refuse(None, "Parse error: message too long").await;
            }
            Err(LinesCodecError::Io(e)) if e.kind() == io::ErrorKind::InvalidData => {
                conn.refuse(None, "Parse error: not UTF-8").await;
            }
            Err(LinesCodecError::Io(e)) => {
                tracing::error!(error = %e, "reading the stream failed");
                break;
            }
        }
        // Reap finished tasks so the set does not grow with the connection's lifetime.
        while conn.tasks.try_join_next().is_some() {}
    }
    while conn.tasks.join_next().await.is_some() {}
    drop(conn);
    writing.await.map_err(io::Error::other)?
}

/// One connection: its writer queue and its requests in flight.
struct Connection {
    server: Server,
    env: RequestEnv,
    tx: mpsc::Sender<Vec<u8>>,
    in_flight: InFlight,
    tasks: JoinSet<()>,
}

impl Connection {
    /// Reads one line (the envelope once) and acts on it.
    async fn receive(&mut self, line: &str) {
        let inbound = classify_envelope(line.as_bytes());
        match inbound {
            Inbound::Malformed(m) => send_error(&self.tx, m.id.as_ref(), &m.error).await,
            Inbound::Notification { method, params } => {
                if method == "notifications/cancelled" {
                    cancel(&self.in_flight, params);
                } else {
                    tracing::debug!(%method, "notification ignored");
                }
            }
            Inbound::Response { id: Some(id), .. } => {
                tracing::warn!(%id, "ignoring a response: this server sends no requests");
            }
            Inbound::Response { id: None, outcome } => {
                tracing::warn!(error = ?outcome.err(), "the client reported an error");
            }
            request @ Inbound::Request { .. } => {
                if let Some(request) = request.into_owned_request() {
                    self.start(request).await;
                }
            }
        }
    }

    /// Starts a request on a task of its own (an id already in flight is refused).
    async fn start(&mut self, request: OwnedRequest) {
        let id = request.id.clone();
        let token = CancellationToken::new();
        let duplicate = {
            let mut map = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            let duplicate = map.contains_key(&id);
            if !duplicate {
                map.insert(id.clone(), token.clone());
            }
            duplicate
        };
        if duplicate {
            let e = ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("Invalid request: id {id} is already in use by a request in flight"),
            );
            return send_error(&self.tx, Some(&id), &e).await;
        }
        let env = self
            .env
            .clone()
            .cancel(token)
            .notifier(Notifier::from_sender(self.tx.clone()));
        let server = self.server.clone();
        let tx = self.tx.clone();
        let in_flight = self.in_flight.clone();
        self.tasks.spawn(async move {
            // Whatever happens on behalf of this request, a panic included, costs only
            // this request: it is answered -32603 and its id released.
            let handled = AssertUnwindSafe(run(&server, &request, env))
                .catch_unwind()
                .await;
            in_flight
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
            let response = handled.unwrap_or_else(|panic| {
                log_panic(panic.as_ref());
                Some(Response::error(
                    Some(id),
                    ErrorObject::internal("Internal error"),
                ))
            });
            if let Some(r) = response {
                let _ = tx.send(r.to_bytes()).await;
            }
        });
    }

    async fn refuse(&self, id: Option<&RequestId>, message: &str) {
        let e = ErrorObject::new(ErrorCode::PARSE_ERROR, message);
        send_error(&self.tx, id, &e).await;
    }
}

/// Prepares and runs one request.
async fn run(server: &Server, request: &OwnedRequest, env: RequestEnv) -> Option<Response> {
    match server.prepare(request.id.clone(), &request.method, request.body()) {
        Ok(prepared) => prepared.run(server, env).await,
        Err(refused) => Some(refused),
    }
}

fn cancel(in_flight: &InFlight, params: Option<&serde_json::value::RawValue>) {
    let Some(p) =
        params.and_then(|p| serde_json::from_str::<CancelledNotificationParams>(p.get()).ok())
    else {
        tracing::debug!("notifications/cancelled without a valid requestId");
        return;
    };
    if let Some(token) = in_flight
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&p.request_id)
    {
        tracing::debug!(id = %p.request_id, reason = ?p.reason, "request cancelled");
        token.cancel();
    }
}

async fn send_error(tx: &mpsc::Sender<Vec<u8>>, id: Option<&RequestId>, error: &ErrorObject) {
    let bytes = serde_json::to_vec(&ErrorResponseRef { id, error }).expect("errors serialize");
    let _ = tx.send(bytes).await;
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut w: W,
    mut rx: mpsc::Receiver<Vec<u8>>,
) -> io::Result<()> {
    while let Some(mut msg) = rx.recv().await {
        msg.push(b'\n');
        w.write_all(&msg).await?;
        // Write everything already queued before flushing once.
        while let Ok(mut more) = rx.try_recv() {
            more.push(b'\n');
            w.write_all(&more).await?;
        }
        w.flush().await?;
    }
    w.flush().await?;
    w.shutdown().await
}

/// Serves `server` on one end of an in-memory pipe and returns the other end, for tests
/// and in-process clients. The server stops when the returned end is dropped or shut
/// down.
pub fn duplex(server: Server, options: StreamOptions) -> tokio::io::DuplexStream {
    let (client, server_end) = tokio::io::duplex(1 << 20);
    let (r, w) = tokio::io::split(server_end);
    tokio::spawn(async move {
        if let Err(e) = serve_stream(server, r, w, options).await {
            tracing::debug!(error = %e, "duplex transport ended");
        }
    });
    client
}
