//! A scripted server on the other end of an in-memory byte stream: the test reads the
//! client's lines and writes the server's, in order.

use serde_json::{Value, json};
use std::time::Duration;
use sterna::client::transport::StreamTransport;
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

pub struct Peer {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    w: WriteHalf<DuplexStream>,
}

/// A client transport and the server side of it.
pub fn pair() -> (StreamTransport, Peer) {
    let (client, server) = tokio::io::duplex(1 << 20);
    let (cr, cw) = tokio::io::split(client);
    let (sr, sw) = tokio::io::split(server);
    (
        StreamTransport::new(cr, cw),
        Peer {
            lines: BufReader::new(sr).lines(),
            w: sw,
        },
    )
}

impl Peer {
    /// The client's next message (bounded wait); `None` when the client closed.
    pub async fn recv(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("the client said nothing for 10 s")
            .ok()??;
        Some(serde_json::from_str(&line).expect("the client writes JSON"))
    }

    /// The client's next message, which must be `method`.
    pub async fn expect(&mut self, method: &str) -> Value {
        let m = self.recv().await.expect("the client closed");
        assert_eq!(m["method"], method, "{m}");
        m
    }

    pub async fn send(&mut self, v: &Value) {
        self.raw(&v.to_string()).await;
    }

    pub async fn raw(&mut self, line: &str) {
        self.w.write_all(line.as_bytes()).await.unwrap();
        self.w.write_all(b"\n").await.unwrap();
        self.w.flush().await.unwrap();
    }

    pub async fn result(&mut self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await;
    }

    pub async fn error(&mut self, id: &Value, code: i64, message: &str) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        )
        .await;
    }

    /// Answers `initialize` (checking it is a pure 2025-11-25 one) and takes
    /// `notifications/initialized`; returns the initialize params.
    pub async fn accept_initialize(&mut self, version: &str) -> Value {
        let init = self.expect("initialize").await;
        let params = init["params"].clone();
        assert_eq!(params["protocolVersion"], "2025-11-25");
        assert!(params.get("_meta").is_none(), "{init}");
        self.result(
            &init["id"],
            json!({"protocolVersion": version, "capabilities": {"tools": {"listChanged": true}},
                   "serverInfo": {"name": "scripted-legacy", "version": "1"}}),
        )
        .await;
        self.expect("notifications/initialized").await;
        params
    }

    /// Pushes a request and returns the client's response to it.
    pub async fn push(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let r = self.recv().await.expect("the client closed");
        assert_eq!(r["id"], id, "{r}");
        assert!(r.get("method").is_none(), "{r}");
        r
    }
}

/// A form asking for `field` (a string).
pub fn form(field: &str) -> Value {
    json!({"message": "Please answer", "requestedSchema": {"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}})
}

/// A text tool result (2025-11-25: no `resultType`).
pub fn text(t: &str) -> Value {
    json!({"content": [{"type": "text", "text": t}]})
}
