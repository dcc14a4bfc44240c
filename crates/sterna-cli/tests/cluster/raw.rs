//! Raw 2026-07-28 requests, for what the client deliberately cannot do (replay a state)
//! and for streams read by hand (`subscriptions/listen`).

use super::transport::pool;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use std::time::Duration;

/// `_meta` of a 2026-07-28 request from a client that can answer forms.
pub(crate) fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}})
}

/// A response: the replica that sent it and its body.
pub(crate) struct Reply {
    pub(crate) replica: String,
    pub(crate) body: hyper::body::Incoming,
}

/// POSTs a request (`method`, `name` for `Mcp-Name`).
pub(crate) async fn post(url: &str, method: &str, name: Option<&str>, body: Value) -> Reply {
    let mut b = hyper::Request::post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(n) = name {
        b = b.header("mcp-name", n);
    }
    let req = b.body(Full::new(Bytes::from(body.to_string()))).unwrap();
    let resp = pool().request(req).await.unwrap();
    let replica = resp
        .headers()
        .get("x-sterna-replica")
        .map_or("-", |v| v.to_str().unwrap())
        .to_owned();
    Reply {
        replica,
        body: resp.into_body(),
    }
}

/// The whole body as JSON (for JSON answers).
pub(crate) async fn json_of(reply: Reply) -> Value {
    let bytes = reply.body.collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| json!({"raw": String::from_utf8_lossy(&bytes)}))
}

/// The next `data:` message of an SSE body.
pub(crate) async fn next_message(body: &mut hyper::body::Incoming, buf: &mut String) -> Value {
    loop {
        while let Some(end) = buf.find("\n\n") {
            let event: String = buf.drain(..end + 2).collect();
            if let Some(d) = event
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .filter(|d| !d.is_empty())
            {
                return serde_json::from_str(d).unwrap();
            }
        }
        let frame = tokio::time::timeout(Duration::from_secs(20), body.frame())
            .await
            .expect("a message within 20 s")
            .expect("the stream is open")
            .unwrap();
        if let Ok(d) = frame.into_data() {
            buf.push_str(&String::from_utf8_lossy(&d));
        }
    }
}
