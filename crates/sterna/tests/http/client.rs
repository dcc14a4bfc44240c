//! A bare HTTP/1.1 client (hyper, one connection per request) and a test server.

use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::net::SocketAddr;
use sterna::server::Server;
use sterna::server::http::{AuthLayer, HttpConfig, HttpServer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

pub struct Running {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Triggers graceful shutdown and waits for it.
    pub async fn shutdown(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.done.await.unwrap().unwrap();
    }
}

pub async fn start(server: Server, config: HttpConfig, auth: Option<AuthLayer>) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    start_on(listener, server, config, auth)
}

/// Serves on a listener bound beforehand (when the URL must be known first).
pub fn start_on(
    listener: TcpListener,
    server: Server,
    config: HttpConfig,
    auth: Option<AuthLayer>,
) -> Running {
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    let mut http = HttpServer::new(server).config(config);
    if let Some(a) = auth {
        http = http.auth(a);
    }
    let done = tokio::spawn(http.serve_with_shutdown(listener, async {
        let _ = rx.await;
    }));
    Running {
        addr,
        stop: Some(tx),
        done,
    }
}

pub fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

/// The standard headers for a request with this body.
pub fn std_headers(body: &Value) -> Vec<(String, String)> {
    let mut h = vec![
        ("content-type".into(), "application/json".into()),
        (
            "accept".into(),
            "application/json, text/event-stream".into(),
        ),
        ("mcp-protocol-version".into(), "2026-07-28".into()),
    ];
    if let Some(m) = body["method"].as_str() {
        h.push(("mcp-method".into(), m.into()));
        let name = body["params"]["name"]
            .as_str()
            .or(body["params"]["uri"].as_str());
        if let Some(n) = name {
            h.push((
                "mcp-name".into(),
                sterna::types::header::encode(n).into_owned(),
            ));
        }
    }
    h
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }

    /// The `data:` payloads of an SSE body.
    pub fn events(&self) -> Vec<Value> {
        self.body
            .split("\n\n")
            .filter_map(|ev| ev.lines().find_map(|l| l.strip_prefix("data: ")))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    pub fn code(&self) -> i64 {
        self.json()["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("no error: {}", self.body))
    }
}

pub async fn send(
    addr: SocketAddr,
    method: &str,
    headers: &[(String, String)],
    body: &str,
) -> Reply {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = Request::builder()
        .method(method)
        .uri(format!("http://{addr}/mcp"));
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req = req.header("host", format!("127.0.0.1:{}", addr.port()));
    }
    for (k, v) in headers {
        // from_bytes keeps raw UTF-8 (obs-text) so tests can send invalid characters.
        req = req.header(
            k.as_str(),
            http::HeaderValue::from_bytes(v.as_bytes()).unwrap(),
        );
    }
    let req = req.body(Full::new(Bytes::from(body.to_owned()))).unwrap();
    let resp = tokio::time::timeout(std::time::Duration::from_secs(10), sender.send_request(req))
        .await
        .expect("reply within 10 s")
        .unwrap();
    let (parts, body) = resp.into_parts();
    let bytes = tokio::time::timeout(std::time::Duration::from_secs(10), body.collect())
        .await
        .expect("body within 10 s")
        .unwrap()
        .to_bytes();
    Reply {
        status: parts.status,
        headers: parts.headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// POSTs `body` with the standard headers, adjusted by `tweak`.
pub async fn post_with(
    addr: SocketAddr,
    body: &Value,
    tweak: impl FnOnce(&mut Vec<(String, String)>),
) -> Reply {
    let mut h = std_headers(body);
    tweak(&mut h);
    send(addr, "POST", &h, &body.to_string()).await
}

pub async fn post(addr: SocketAddr, body: &Value) -> Reply {
    post_with(addr, body, |_| {}).await
}

pub fn set(h: &mut Vec<(String, String)>, name: &str, value: &str) {
    h.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    h.push((name.to_owned(), value.to_owned()));
}

pub fn remove(h: &mut Vec<(String, String)>, name: &str) {
    h.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
}

pub fn call(id: i64, tool: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args, "_meta": meta(json!({"elicitation": {}}))}})
}

/// A request without a body to any path (`send` always targets `/mcp`).
pub async fn send_to(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(String, String)],
) -> Reply {
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let io = hyper_util::rt::TokioIo::new(tcp);
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io).await.unwrap();
    tokio::spawn(conn);
    let mut req = http::Request::builder()
        .method(method)
        .uri(format!("http://{addr}{path}"))
        .header("host", format!("127.0.0.1:{}", addr.port()));
    for (k, v) in headers.iter().filter(|(k, _)| k != "host") {
        req = req.header(k.as_str(), v.as_str());
    }
    let resp = sender
        .send_request(req.body(Full::new(Bytes::new())).unwrap())
        .await
        .unwrap();
    let (parts, body) = resp.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    Reply {
        status: parts.status,
        headers: parts.headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}
