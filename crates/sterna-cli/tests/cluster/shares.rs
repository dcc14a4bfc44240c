//! Fair shares through the balancer: the replicas trust nginx's `X-Forwarded-For`, so two
//! anonymous clients behind it (127.0.0.2 and 127.0.0.3) hold shares of their own, and a
//! share is fleet-wide (the sessions land on every replica, the count is in Redis).

use super::ONE_AT_A_TIME;
use super::fleet::Fleet;
use bytes::Bytes;
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use serde_json::json;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;
use sterna::server::state::StateKeys;
use tokio::net::TcpSocket;

/// Opens a 2025 session through nginx from `from`, on a connection of its own; the
/// status of the answer.
async fn initialize(from: [u8; 4], url: &str) -> hyper::StatusCode {
    let addr: SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(IpAddr::from(from), 0)).unwrap();
    let tcp = socket.connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "shares", "version": "1"}}});
    let req = hyper::Request::post(url)
        .header("host", addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(Full::new(Bytes::from(init.to_string())))
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), sender.send_request(req))
        .await
        .expect("an answer within 10 s")
        .unwrap()
        .status()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anonymous_clients_behind_the_balancer_hold_shares_of_their_own() {
    let _one = ONE_AT_A_TIME.lock().await;
    let fleet = Fleet::start(3, &StateKeys::generate_base64());
    let url = fleet.url();
    for i in 0..100 {
        let status = initialize([127, 0, 0, 2], &url).await;
        assert_eq!(status, 200, "session {i}: within the share");
    }
    let over = initialize([127, 0, 0, 2], &url).await;
    assert_eq!(over, 429, "the 101st, on whichever replica");
    let other = initialize([127, 0, 0, 3], &url).await;
    println!(
        "[shares] 127.0.0.2 opened 100 sessions through nginx, the 101st got {over}; 127.0.0.3 then got {other}"
    );
    assert_eq!(other, 200, "another client behind nginx: its own share");
}
