//! HTTP/2 on `HttpServer`'s port, next to HTTP/1.1: prior-knowledge h2c end to end (a
//! 2026-07-28 MRTR exchange and a 2025-11-25 session with its pushed questions), and the
//! bounds an attacker meets on one connection: streams beyond the limit refused, bodies
//! beyond the limit 413 on their stream only, a flood of reset streams cut off, and the
//! host check applied to `:authority`.

use super::client::{call, post, start};
use super::fixture::server;
use bytes::Bytes;
use http::{Request, StatusCode, Version};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;
use sterna::client::transport::HttpTransport;
use sterna::client::{Client, Era, EraMode};
use sterna::server::http::HttpConfig;
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

type H2 = hyper::client::conn::http2::SendRequest<Full<Bytes>>;

/// A prior-knowledge HTTP/2 connection (hyper's client).
pub async fn h2c(addr: SocketAddr) -> H2 {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (sender, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .expect("an HTTP/2 handshake");
    tokio::spawn(conn);
    sender
}

/// POSTs an MCP request on an HTTP/2 connection: status and body.
pub async fn post_h2(h2: &mut H2, addr: SocketAddr, body: &Value) -> (StatusCode, Version, Value) {
    let method = body["method"].as_str().unwrap_or_default().to_owned();
    let mut req = Request::post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", &method);
    if let Some(name) = body["params"]["name"].as_str() {
        req = req.header("mcp-name", name);
    }
    let req = req.body(Full::new(Bytes::from(body.to_string()))).unwrap();
    let resp = tokio::time::timeout(Duration::from_secs(10), h2.send_request(req))
        .await
        .expect("an answer within 10 s")
        .unwrap();
    let (status, version) = (resp.status(), resp.version());
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, version, json)
}

fn answering(form: ElicitFormParams) -> std::future::Ready<ElicitResult> {
    let mut content = serde_json::Map::new();
    for (name, _) in &form.requested_schema.properties {
        let v = if name == "region" {
            json!("eu-west-1")
        } else {
            json!(true)
        };
        content.insert(name.clone(), v);
    }
    std::future::ready(ElicitResult::accept(content))
}

/// Both legs of `provision_database` on one h2c connection (raw frames through hyper),
/// and HTTP/1.1 still served on the same listener.
#[tokio::test]
async fn h2c_and_http1_on_the_same_port() {
    let running = start(server().0, HttpConfig::default(), None).await;
    let addr = running.addr;
    let mut h2 = h2c(addr).await;
    let (status, version, first) = post_h2(
        &mut h2,
        addr,
        &call(1, "provision_database", json!({"name": "orders"})),
    )
    .await;
    assert_eq!((status, version), (StatusCode::OK, Version::HTTP_2));
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let mut retry = call(2, "provision_database", json!({"name": "orders"}));
    retry["params"]["requestState"] = first["result"]["requestState"].clone();
    retry["params"]["inputResponses"] =
        json!({"pick_region": {"action": "accept", "content": {"region": "eu-west-1"}}});
    let (status, _, done) = post_h2(&mut h2, addr, &retry).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        done["result"]["content"][0]["text"], "Created orders in eu-west-1",
        "{done}"
    );
    let reply = post(addr, &call(3, "echo", json!({"text": "still HTTP/1.1"}))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    running.shutdown().await;
}

/// sterna's client with prior knowledge: an MRTR flow (2026-07-28), then a 2025-11-25
/// session whose pushed `elicitation/create` arrives on an SSE stream of the same
/// connection.
#[tokio::test]
async fn the_client_speaks_h2c_in_both_eras() {
    let running = start(server().0, HttpConfig::default(), None).await;
    for era in [EraMode::Modern, EraMode::Legacy] {
        let transport = HttpTransport::builder(&running.url())
            .http2_prior_knowledge()
            .build()
            .unwrap();
        let client = Client::builder("h2c", "1")
            .on_elicit(answering)
            .era(era)
            .build(transport);
        let done = client
            .call_tool("provision_database", json!({"name": "orders"}))
            .await
            .unwrap();
        assert_eq!(
            done.text_content(),
            "Created orders in eu-west-1",
            "{era:?}"
        );
        let spoken = client.era().await.unwrap();
        match era {
            EraMode::Legacy => assert!(matches!(spoken, Era::Legacy { .. }), "{spoken:?}"),
            _ => assert!(matches!(spoken, Era::Modern { .. }), "{spoken:?}"),
        }
        client.close().await;
    }
    running.shutdown().await;
}

/// A body beyond `max_body` is 413 on its stream; the connection serves on.
#[tokio::test]
async fn the_body_limit_holds_per_stream() {
    let running = start(server().0, HttpConfig::default().max_body(1024), None).await;
    let addr = running.addr;
    let mut h2 = h2c(addr).await;
    let big = call(1, "echo", json!({"text": "x".repeat(4096)}));
    let (status, _, _) = post_h2(&mut h2, addr, &big).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let (status, _, ok) = post_h2(&mut h2, addr, &call(2, "echo", json!({"text": "hi"}))).await;
    assert_eq!(status, StatusCode::OK, "{ok}");
    running.shutdown().await;
}

/// `:authority` is the host on HTTP/2: a foreign one is refused like a foreign `Host`.
#[tokio::test]
async fn a_foreign_authority_is_refused() {
    let running = start(server().0, HttpConfig::default(), None).await;
    let addr = running.addr;
    let mut h2 = h2c(addr).await;
    let body = call(1, "echo", json!({"text": "hi"}));
    let req = Request::post(format!("http://attacker.example:{}/mcp", addr.port()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let resp = h2.send_request(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    running.shutdown().await;
}

/// Raw HTTP/2 frames, for what a well-behaved client never sends.
mod raw {
    use super::*;

    pub const HEADERS: u8 = 1;
    pub const RST_STREAM: u8 = 3;
    pub const SETTINGS: u8 = 4;
    pub const GOAWAY: u8 = 7;

    pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = u32::try_from(payload.len()).unwrap().to_be_bytes();
        let mut out = vec![len[1], len[2], len[3], kind, flags];
        out.extend_from_slice(&stream.to_be_bytes());
        out.extend_from_slice(payload);
        out
    }

    /// HPACK "literal without indexing, indexed name" (names of the static table).
    fn literal(out: &mut Vec<u8>, name_index: u8, value: &str) {
        if name_index < 15 {
            out.push(name_index);
        } else {
            out.extend_from_slice(&[0x0f, name_index - 15]);
        }
        out.push(u8::try_from(value.len()).unwrap());
        out.extend_from_slice(value.as_bytes());
    }

    /// The header block of `POST /mcp` with a JSON body still to come.
    pub fn post_headers() -> Vec<u8> {
        let mut b = vec![0x83, 0x86]; // :method POST, :scheme http
        literal(&mut b, 4, "/mcp"); // :path
        literal(&mut b, 1, "127.0.0.1"); // :authority
        literal(&mut b, 31, "application/json"); // content-type
        literal(&mut b, 19, "application/json, text/event-stream"); // accept
        b
    }

    /// A connection past the preface and the settings exchange.
    pub async fn connect(addr: SocketAddr) -> TcpStream {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            .await
            .unwrap();
        tcp.write_all(&frame(SETTINGS, 0, 0, &[])).await.unwrap();
        loop {
            let (kind, flags, _, _) = read(&mut tcp).await.expect("the server's settings");
            if kind == SETTINGS && flags & 1 == 0 {
                tcp.write_all(&frame(SETTINGS, 1, 0, &[])).await.unwrap();
                return tcp;
            }
        }
    }

    /// The next frame (`None` once the server closed the connection).
    pub async fn read(tcp: &mut TcpStream) -> Option<(u8, u8, u32, Vec<u8>)> {
        let mut head = [0u8; 9];
        let read = tokio::time::timeout(Duration::from_secs(10), tcp.read_exact(&mut head));
        read.await.expect("a frame within 10 s").ok()?;
        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        let mut payload = vec![0u8; len];
        tcp.read_exact(&mut payload).await.ok()?;
        Some((head[3], head[4], stream, payload))
    }
}

/// Streams beyond `http2_max_streams` are refused (`RST_STREAM(REFUSED_STREAM)`), even
/// from a client that ignores the announced limit; the streams within it stay open.
#[tokio::test]
async fn streams_beyond_the_limit_are_refused() {
    let config = HttpConfig::default().http2_max_streams(2);
    let running = start(server().0, config, None).await;
    let mut tcp = raw::connect(running.addr).await;
    // Three requests whose bodies never come: each holds its stream open.
    let mut burst = Vec::new();
    for stream in [1, 3, 5] {
        burst.extend(raw::frame(raw::HEADERS, 0x4, stream, &raw::post_headers()));
    }
    tcp.write_all(&burst).await.unwrap();
    let refused = loop {
        let Some((kind, _, stream, payload)) = raw::read(&mut tcp).await else {
            panic!("the connection closed instead of refusing the stream");
        };
        if kind == raw::RST_STREAM {
            break (stream, u32::from_be_bytes(payload[..4].try_into().unwrap()));
        }
        assert_ne!(kind, raw::GOAWAY, "the whole connection refused");
    };
    // REFUSED_STREAM is 0x7.
    assert_eq!(refused, (5, 0x7));
    drop(tcp);
    running.shutdown().await;
}

/// Streams opened and reset at once by the thousand ("rapid reset") end the connection
/// with `GOAWAY`; the server serves other connections on.
#[tokio::test]
async fn a_flood_of_reset_streams_is_cut_off() {
    let running = start(server().0, HttpConfig::default(), None).await;
    let mut tcp = raw::connect(running.addr).await;
    let mut flood = Vec::new();
    for i in 0..1000u32 {
        let stream = 2 * i + 1;
        flood.extend(raw::frame(raw::HEADERS, 0x4, stream, &raw::post_headers()));
        // CANCEL (0x8).
        flood.extend(raw::frame(raw::RST_STREAM, 0, stream, &8u32.to_be_bytes()));
    }
    // The server may close before reading everything: a failed write is fine.
    let _ = tcp.write_all(&flood).await;
    let mut goaway = None;
    for _ in 0..10_000 {
        match raw::read(&mut tcp).await {
            Some((raw::GOAWAY, _, _, payload)) => {
                goaway = Some(u32::from_be_bytes(payload[4..8].try_into().unwrap()));
                break;
            }
            Some(_) => {}
            None => break,
        }
    }
    // ENHANCE_YOUR_CALM is 0xb.
    assert_eq!(goaway, Some(0xb), "no GOAWAY for a reset flood");
    let reply = post(running.addr, &call(1, "echo", json!({"text": "calm"}))).await;
    assert_eq!(reply.status, StatusCode::OK);
    running.shutdown().await;
}

/// The same check in process, where HTTP/2 is not even involved: a request whose URI
/// names a foreign host and that has no `Host` header (how hyper hands an HTTP/2 request
/// over) is refused.
#[tokio::test]
async fn the_host_check_reads_the_uri_authority() {
    use sterna::server::http::McpService;
    use tower_service::Service;
    let mut service = McpService::new(server().0, HttpConfig::default());
    let body = call(1, "echo", json!({"text": "hi"}));
    let request = |host: &str| {
        Request::post(format!("http://{host}/mcp"))
            .version(Version::HTTP_2)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "echo")
            .body(Full::new(Bytes::from(body.to_string())))
            .unwrap()
    };
    let foreign = service.call(request("attacker.example")).await.unwrap();
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
    let local = service.call(request("localhost:3000")).await.unwrap();
    assert_eq!(local.status(), StatusCode::OK);
}
