//! A hostile server over real TCP on 127.0.0.1: SSE answers that never end must fail the
//! request with `TooLarge` at the configured limit, quickly, without buffering the stream.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use sterna::client::transport::HttpTransport;
use sterna::client::{Client, ClientError, TransportError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the hostile server sends after the SSE response head.
#[derive(Clone, Copy)]
enum Hostile {
    /// Small notification events, forever.
    EndlessNotifications,
    /// One event whose `data` line never ends.
    GiantEvent,
    /// One comment line that never ends.
    GiantComment,
}

/// The most the server writes before it stops and holds the connection open (so a
/// client that buffers everything hangs instead of eating memory).
const CAP: usize = 8 * 1024 * 1024;

async fn read_head(tcp: &mut TcpStream) {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match tcp.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
}

async fn serve_one(mut tcp: TcpStream, kind: Hostile, written: Arc<AtomicUsize>) {
    read_head(&mut tcp).await;
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    if tcp.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let (first, chunk): (&[u8], Vec<u8>) = match kind {
        Hostile::EndlessNotifications => (
            b"",
            br#"data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"tick"}}

"#
            .repeat(16),
        ),
        Hostile::GiantEvent => (
            br#"data: {"jsonrpc":"2.0","id":1,"result":{"t":""#,
            vec![b'x'; 16 * 1024],
        ),
        Hostile::GiantComment => (b": ", vec![b'y'; 16 * 1024]),
    };
    if tcp.write_all(first).await.is_err() {
        return;
    }
    while written.load(Ordering::SeqCst) < CAP {
        if tcp.write_all(&chunk).await.is_err() {
            return; // the client hung up: what we want
        }
        written.fetch_add(chunk.len(), Ordering::SeqCst);
    }
    // Hold the connection open without sending more.
    tokio::time::sleep(Duration::from_secs(60)).await;
}

/// Starts the hostile server; returns its URL and the bytes it wrote so far.
async fn hostile(kind: Hostile) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let written = Arc::new(AtomicUsize::new(0));
    let w = written.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(serve_one(tcp, kind, w.clone()));
        }
    });
    (url, written)
}

async fn expect_too_large(kind: Hostile) {
    const LIMIT: usize = 64 * 1024;
    let (url, written) = hostile(kind).await;
    let transport = HttpTransport::new(&url).unwrap().max_response(LIMIT);
    let client = Client::builder("t", "0").build(transport);
    let started = Instant::now();
    let outcome = tokio::time::timeout(
        Duration::from_secs(10),
        client.raw_request("server/discover", serde_json::Map::new()),
    )
    .await;
    let sent = written.load(Ordering::SeqCst);
    match outcome {
        Ok(Err(ClientError::Transport(TransportError::TooLarge { limit: LIMIT }))) => {}
        Ok(other) => panic!("expected TooLarge, got {other:?} (server wrote {sent} bytes)"),
        Err(_) => panic!(
            "no answer after 10 s: the client kept reading (server wrote {sent} bytes, \
             the limit is {LIMIT})"
        ),
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_endless_stream_of_notifications_is_too_large() {
    expect_too_large(Hostile::EndlessNotifications).await;
}

#[tokio::test]
async fn an_event_that_never_ends_is_too_large() {
    expect_too_large(Hostile::GiantEvent).await;
}

#[tokio::test]
async fn a_comment_line_that_never_ends_is_too_large() {
    expect_too_large(Hostile::GiantComment).await;
}
