//! Slow and idle clients over real TCP: a body that never arrives gets 408 and its
//! connection closes (with `HttpServer`, and with `McpService` mounted in axum); headers
//! that never finish close the connection, on a new connection or a kept-alive one, also
//! when their bytes keep coming; the connection limit holds, and idle
//! connections over it do not keep a real request out once their deadline passes.
//!
//! The deadlines here are short and configured; every wait has a generous outer bound
//! (a liveness bound, not a speed check).

use super::client::{call, post, start};
use super::fixture::server;
use std::net::SocketAddr;
use std::time::Duration;
use sterna::server::http::{HttpConfig, McpService};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How long any one wait may take before the test fails (the server is told far less).
const BOUND: Duration = Duration::from_secs(30);

fn short(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// The head of a POST announcing `len` body bytes, without the body.
fn post_head(addr: SocketAddr, len: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Content-Length: {len}\r\n\r\n",
        addr.port()
    )
}

/// Everything the server sends until it closes the connection (bounded).
async fn read_until_closed(tcp: &mut (impl AsyncRead + Unpin)) -> String {
    let mut got = Vec::new();
    let read = tokio::time::timeout(BOUND, async {
        let mut buf = [0u8; 4096];
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server closed the connection");
    String::from_utf8_lossy(&got).into_owned()
}

async fn never_sends_the_body(addr: SocketAddr) -> String {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(post_head(addr, 200).as_bytes())
        .await
        .unwrap();
    // Part of the body, then nothing: a stalled upload.
    tcp.write_all(b"{\"jsonrpc\":").await.unwrap();
    read_until_closed(&mut tcp).await
}

#[tokio::test]
async fn a_body_that_never_arrives_gets_408_and_the_connection_closes() {
    let (srv, _) = server();
    let config = HttpConfig::new().body_timeout(Some(short(300)));
    let s = start(srv, config, None).await;
    let answer = never_sends_the_body(s.addr).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
    // A request whose body arrives is unaffected.
    let r = post(s.addr, &call(1, "add", serde_json::json!({"a": 1, "b": 2}))).await;
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "3",
        "{:?}",
        r.json()
    );
    s.shutdown().await;
}

#[tokio::test]
async fn the_body_deadline_holds_when_mcp_service_is_mounted_in_axum() {
    let (srv, _) = server();
    let service = McpService::new(srv, HttpConfig::new().body_timeout(Some(short(300))));
    let app = axum::Router::new().route_service("/mcp", service);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = tokio::spawn(async move { axum::serve(listener, app).await });
    let answer = never_sends_the_body(addr).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    served.abort();
}

#[tokio::test]
async fn headers_that_never_finish_close_the_connection() {
    let (srv, _) = server();
    let config = HttpConfig::new().header_timeout(short(300));
    let s = start(srv, config, None).await;
    let mut tcp = TcpStream::connect(s.addr).await.unwrap();
    tcp.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let answer = read_until_closed(&mut tcp).await;
    assert!(!answer.contains("200 OK"), "{answer}");
    s.shutdown().await;
}

/// Sends `head` a byte at a time, 50 ms apart, then keeps going with an endless header
/// value, until the server closes the connection (or the bound runs out): a head that is
/// always arriving and never ends. Returns what the server sent meanwhile.
async fn trickle(tcp: TcpStream, head: &'static [u8]) -> String {
    let (mut read, mut write) = tcp.into_split();
    let writer = tokio::spawn(async move {
        let bytes = head.iter().copied().chain(std::iter::repeat(b'a'));
        for b in bytes.take((BOUND.as_millis() / 50) as usize) {
            if write.write_all(&[b]).await.is_err() {
                return;
            }
            tokio::time::sleep(short(50)).await;
        }
    });
    let answer = read_until_closed(&mut read).await;
    writer.abort();
    answer
}

#[tokio::test]
async fn a_head_that_keeps_arriving_and_never_ends_is_cut_at_the_deadline() {
    let (srv, _) = server();
    let config = HttpConfig::new().header_timeout(short(300));
    let s = start(srv, config, None).await;
    let tcp = TcpStream::connect(s.addr).await.unwrap();
    let answer = trickle(tcp, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ").await;
    assert!(!answer.contains("200 OK"), "{answer}");
    s.shutdown().await;
}

#[tokio::test]
async fn a_kept_alive_connection_whose_next_head_never_ends_is_cut() {
    let (srv, _) = server();
    let config = HttpConfig::new().header_timeout(short(300));
    let s = start(srv, config, None).await;
    let mut tcp = TcpStream::connect(s.addr).await.unwrap();
    let body = call(1, "add", serde_json::json!({"a": 2, "b": 3})).to_string();
    let head = post_head(s.addr, body.len()).replace(
        "\r\n\r\n",
        "\r\nMcp-Method: tools/call\r\nMcp-Name: add\r\n\r\n",
    );
    tcp.write_all(format!("{head}{body}").as_bytes())
        .await
        .unwrap();
    // The first answer, whole (its length from its head), on the kept-alive connection.
    let mut got = Vec::new();
    let first = tokio::time::timeout(BOUND, async {
        let mut buf = [0u8; 4096];
        loop {
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(
                n > 0,
                "closed before answering: {}",
                String::from_utf8_lossy(&got)
            );
            got.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&got).to_lowercase();
            let Some(end) = text.find("\r\n\r\n") else {
                continue;
            };
            let len: usize = text[..end]
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map(|v| v.trim().parse().unwrap())
                .expect("a content length");
            if got.len() >= end + 4 + len {
                return text;
            }
        }
    })
    .await
    .expect("the first request is answered");
    assert!(first.starts_with("http/1.1 200"), "{first}");
    let answer = trickle(tcp, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ").await;
    assert!(!answer.contains("200 OK"), "{answer}");
    s.shutdown().await;
}

/// Connections that connect and send nothing (each holds a slot until its deadline).
async fn idle(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    let mut conns = Vec::new();
    for _ in 0..n {
        conns.push(TcpStream::connect(addr).await.unwrap());
    }
    conns
}

/// A connection busy with a request that does not end (a `subscriptions/listen` stream,
/// read up to its acknowledgement): it holds its slot for as long as it is kept.
async fn busy(addr: SocketAddr) -> TcpStream {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen",
        "params": {"_meta": super::client::meta(serde_json::json!({})),
                   "notifications": {"toolsListChanged": true}}})
    .to_string();
    let head = post_head(addr, body.len()).replace(
        "Content-Length",
        "Mcp-Method: subscriptions/listen\r\nContent-Length",
    );
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(format!("{head}{body}").as_bytes())
        .await
        .unwrap();
    let mut got = Vec::new();
    tokio::time::timeout(BOUND, async {
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&got).contains("subscriptions/acknowledged") {
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(n > 0, "the stream stays open");
            got.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("the stream is acknowledged");
    tcp
}

#[tokio::test]
async fn the_connection_limit_holds_a_connection_over_it_until_a_slot_frees() {
    let (srv, _) = server();
    let config = HttpConfig::new().max_connections(2);
    let s = start(srv, config, None).await;
    // Both slots held by requests in flight: nothing to close to make room.
    let mut held = vec![busy(s.addr).await, busy(s.addr).await];
    let addr = s.addr;
    let mut real = tokio::spawn(async move {
        post(addr, &call(1, "add", serde_json::json!({"a": 2, "b": 2}))).await
    });
    // Not served while both slots are held (however long we look).
    assert!(
        tokio::time::timeout(short(500), &mut real).await.is_err(),
        "a third connection was served while the limit was 2"
    );
    drop(held.pop());
    let r = tokio::time::timeout(BOUND, real)
        .await
        .expect("served once a slot freed")
        .unwrap();
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "4",
        "{:?}",
        r.json()
    );
    drop(held);
    s.shutdown().await;
}

/// Whether the server closed `tcp` (bounded wait).
async fn closed(tcp: &mut TcpStream) -> bool {
    let mut buf = [0u8; 1024];
    matches!(
        tokio::time::timeout(short(2000), tcp.read(&mut buf)).await,
        Ok(Ok(0) | Err(_))
    )
}

#[tokio::test]
async fn a_full_server_closes_its_longest_idle_connection_to_serve_a_new_one() {
    let (srv, _) = server();
    // Deadlines far beyond the test's bound: only making room can serve the new client.
    let config = HttpConfig::new()
        .max_connections(3)
        .header_timeout(Duration::from_secs(600));
    let s = start(srv, config, None).await;
    let busy_one = busy(s.addr).await;
    let mut oldest = idle(s.addr, 1).await.pop().unwrap();
    tokio::time::sleep(short(50)).await;
    let mut newer = TcpStream::connect(s.addr).await.unwrap();
    let r = tokio::time::timeout(
        BOUND,
        post(s.addr, &call(1, "add", serde_json::json!({"a": 1, "b": 2}))),
    )
    .await
    .expect("a new client is served while idle connections fill the server");
    assert_eq!(r.json()["result"]["content"][0]["text"], "3");
    assert!(
        closed(&mut oldest).await,
        "the longest idle connection was closed"
    );
    // The other idle connection and the busy one were left alone.
    assert!(
        !closed(&mut newer).await,
        "only one connection is closed per new one"
    );
    drop((busy_one, newer));
    s.shutdown().await;
}

#[tokio::test]
async fn heads_that_never_finish_do_not_keep_a_full_server_from_a_new_client() {
    let (srv, _) = server();
    let config = HttpConfig::new()
        .max_connections(2)
        .header_timeout(Duration::from_secs(600));
    let s = start(srv, config, None).await;
    let mut slow = Vec::new();
    for _ in 0..2 {
        let mut tcp = TcpStream::connect(s.addr).await.unwrap();
        tcp.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            .await
            .unwrap();
        slow.push(tcp);
    }
    tokio::time::sleep(short(100)).await;
    let r = tokio::time::timeout(
        BOUND,
        post(s.addr, &call(1, "add", serde_json::json!({"a": 5, "b": 5}))),
    )
    .await
    .expect("a new client is served while half-sent heads fill the server");
    assert_eq!(r.json()["result"]["content"][0]["text"], "10");
    drop(slow);
    s.shutdown().await;
}

#[tokio::test]
async fn idle_connections_over_the_limit_do_not_starve_a_real_request() {
    let (srv, _) = server();
    let n = 3;
    let config = HttpConfig::new()
        .max_connections(n)
        .header_timeout(short(300));
    let s = start(srv, config, None).await;
    let _idle = idle(s.addr, n + 1).await;
    let r = tokio::time::timeout(
        BOUND,
        post(s.addr, &call(1, "add", serde_json::json!({"a": 3, "b": 4}))),
    )
    .await
    .expect("the real request is served once the idle connections' deadline passes");
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "7",
        "{:?}",
        r.json()
    );
    s.shutdown().await;
}
