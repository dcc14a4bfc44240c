//! Newline-delimited JSON-RPC over a byte stream, as the stdio transport defines it.
//!
//! * One message per line; lines longer than the limit are refused (`-32700`) and
//!   skipped.
//! * Each request runs concurrently; responses and the request's notifications go to the
//!   writer in the order produced.
//! * `notifications/cancelled` stops the named request: its handler future is dropped and
//!   nothing more is written for it.
//! * `initialize` (without the 2026 `_meta` claim) opens a 2025-11-25 session on the
//!   connection: requests without the claim then follow the negotiated revision, and the
//!   questions of their handlers go out as requests on this stream; requests with the
//!   claim are still served statelessly.
//! * At end of input, requests in flight finish, then the writer is flushed and the
//!   function returns.

use super::connection::Connection;
use crate::server::{RequestEnv, Server};
use futures_util::StreamExt;
use std::io;
use sterna_types::jsonrpc::lines::{Line, Lines};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::codec::FramedRead;

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

/// Serves `server` on stdin/stdout until stdin closes. Logs belong on stderr.
///
/// The stream's state is boxed: a `main` that awaits this keeps a small stack.
pub async fn serve_stdio(server: Server) -> io::Result<()> {
    Box::pin(serve_stream(
        server,
        tokio::io::stdin(),
        tokio::io::stdout(),
        StreamOptions::default(),
    ))
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
    let mut conn = Connection::new(server, options.env, tx);
    let mut lines = FramedRead::new(reader, Lines::new(options.max_line));
    while let Some(line) = lines.next().await {
        match line {
            Ok(Line::Text(l)) if l.trim().is_empty() => {}
            Ok(Line::Text(l)) => conn.receive(&l).await,
            Ok(Line::TooLong) => conn.refuse(None, "Parse error: message too long").await,
            Ok(Line::NotUtf8) => conn.refuse(None, "Parse error: not UTF-8").await,
            Err(e) => {
                tracing::error!(error = %e, "reading the stream failed");
                break;
            }
        }
        conn.reap();
    }
    conn.finish().await;
    writing.await.map_err(io::Error::other)?
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
