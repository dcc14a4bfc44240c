//! A panic on behalf of one request costs only that request, over a real connection.

use super::client::{call, post, start, std_headers};
use super::fixture::server;
use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::time::Duration;
use sterna::server::http::HttpConfig;
use tokio::net::TcpStream;

/// One keep-alive connection, several requests in turn.
struct Conn {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    addr: std::net::SocketAddr,
}

impl Conn {
    async fn open(addr: std::net::SocketAddr) -> Self {
        let tcp = TcpStream::connect(addr).await.unwrap();
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
            .await
            .unwrap();
        tokio::spawn(conn);
        Self { sender, addr }
    }

    async fn post(&mut self, body: &Value) -> Value {
        let mut req = Request::post(format!("http://{}/mcp", self.addr))
            .header("host", format!("127.0.0.1:{}", self.addr.port()));
        for (k, v) in std_headers(body) {
            req = req.header(k, v);
        }
        let req = req.body(Full::new(Bytes::from(body.to_string()))).unwrap();
        self.sender.ready().await.expect("the connection is alive");
        let resp = tokio::time::timeout(Duration::from_secs(10), self.sender.send_request(req))
            .await
            .expect("an answer within 10 s")
            .expect("the connection is alive");
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }
}

fn hostile_date_time() -> String {
    format!("a{}", "é".repeat(10))
}

#[tokio::test]
async fn a_panicking_request_is_answered_and_the_connection_lives_on() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let mut conn = Conn::open(s.addr).await;
    let r = conn
        .post(&call(1, "ask_panics", json!({"boom": true})))
        .await;
    assert_eq!(r["id"], 1);
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let r = conn.post(&call(2, "panics", json!({}))).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    // Same connection, next request.
    let r = conn.post(&call(3, "add", json!({"a": 1, "b": 2}))).await;
    assert_eq!(r["result"]["content"][0]["text"], "3", "{r}");
    s.shutdown().await;
}

#[tokio::test]
async fn a_multibyte_date_time_answer_is_asked_again() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let first = post(s.addr, &call(1, "dated", json!({}))).await.json();
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let mut retry = call(2, "dated", json!({}));
    retry["params"]["inputResponses"] =
        json!({"when": {"action": "accept", "content": {"at": hostile_date_time()}}});
    retry["params"]["requestState"] = json!(state);
    let r = post(s.addr, &retry).await.json();
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    assert!(r["result"]["inputRequests"]["when"].is_object());
    s.shutdown().await;
}
