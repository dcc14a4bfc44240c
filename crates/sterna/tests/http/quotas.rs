//! Fair, bounded shares over real connections: what a 2025 session record keeps, how
//! many sessions one client holds, how many requests one session runs. Two anonymous
//! clients are told apart by their address (127.0.0.2 and 127.0.0.3 on the loopback).

use super::fixture::server;
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;
use sterna::server::http::HttpConfig;
use tokio::net::TcpSocket;

pub const FLOOD: [u8; 4] = [127, 0, 0, 2];
pub const CALM: [u8; 4] = [127, 0, 0, 3];

/// An answer, its body still open (an SSE stream stays open while its request runs).
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub session: Option<String>,
    pub body: hyper::body::Incoming,
}

impl Answer {
    pub async fn json(self) -> Value {
        let bytes = tokio::time::timeout(Duration::from_secs(10), self.body.collect())
            .await
            .expect("a body within 10 s")
            .unwrap()
            .to_bytes();
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)))
    }

    /// What is left of the body until it ends (or breaks), within 10 s.
    pub async fn rest(self) -> String {
        let read = tokio::time::timeout(Duration::from_secs(10), self.body.collect())
            .await
            .expect("the body ends within 10 s");
        read.map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
            .unwrap_or_default()
    }

    /// The first `data:` message of an SSE body.
    pub async fn first_message(&mut self) -> Value {
        let mut buf = String::new();
        loop {
            while let Some(end) = buf.find("\n\n") {
                let event: String = buf.drain(..end + 2).collect();
                let data = event.lines().find_map(|l| l.strip_prefix("data: "));
                if let Some(d) = data.filter(|d| !d.is_empty()) {
                    return serde_json::from_str(d).unwrap();
                }
            }
            let frame = tokio::time::timeout(Duration::from_secs(10), self.body.frame())
                .await
                .expect("an event within 10 s")
                .expect("the stream is open")
                .unwrap();
            if let Ok(d) = frame.into_data() {
                buf.push_str(&String::from_utf8_lossy(&d));
            }
        }
    }
}

/// `req` sent on a new connection from `from` (a loopback address of the client's own);
/// the answer, its body still open.
async fn request_from(
    from: [u8; 4],
    addr: SocketAddr,
    req: Request<Full<Bytes>>,
) -> http::Response<hyper::body::Incoming> {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(IpAddr::from(from), 0)).unwrap();
    let tcp = socket.connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    tokio::time::timeout(Duration::from_secs(10), sender.send_request(req))
        .await
        .expect("an answer within 10 s")
        .unwrap()
}

/// A 2025 request from `from` (a loopback address of the client's own).
pub async fn send_from(
    from: [u8; 4],
    addr: SocketAddr,
    method: &str,
    session: Option<&str>,
    body: Option<&Value>,
) -> Answer {
    send_via(from, None, addr, method, session, body).await
}

/// A 2025 request from `from`, with `X-Forwarded-For: forwarded` when given (as a proxy
/// at `from` sends it).
async fn send_via(
    from: [u8; 4],
    forwarded: Option<&str>,
    addr: SocketAddr,
    method: &str,
    session: Option<&str>,
    body: Option<&Value>,
) -> Answer {
    let mut req = Request::builder()
        .method(method)
        .uri(format!("http://{addr}/mcp"))
        .header("host", format!("127.0.0.1:{}", addr.port()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(f) = forwarded {
        req = req.header("x-forwarded-for", f);
    }
    if let Some(s) = session {
        req = req
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let body = body.map_or(String::new(), Value::to_string);
    let req = req.body(Full::new(Bytes::from(body))).unwrap();
    let (parts, body) = request_from(from, addr, req).await.into_parts();
    Answer {
        status: parts.status,
        session: parts
            .headers
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_owned()),
        body,
    }
}

pub fn initialize_with(caps: Value, client: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": client}})
}

pub fn init() -> Value {
    initialize_with(
        json!({"elicitation": {}}),
        json!({"name": "quota-test", "version": "1"}),
    )
}

/// Opens a session from `from`; the answer when it was refused.
pub async fn open(from: [u8; 4], addr: SocketAddr) -> Result<String, Answer> {
    let r = send_from(from, addr, "POST", None, Some(&init())).await;
    match (r.status, r.session.clone()) {
        (StatusCode::OK, Some(s)) => {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let n = send_from(from, addr, "POST", Some(&s), Some(&note)).await;
            assert_eq!(n.status, StatusCode::ACCEPTED);
            Ok(s)
        }
        _ => Err(r),
    }
}

fn assert_limit(error: &Value, code: i64, limit: &str) {
    assert_eq!(error["code"], code, "{error}");
    assert_eq!(error["data"]["limit"], limit, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(limit),
        "the message names the limit: {error}"
    );
}

#[tokio::test]
async fn an_oversized_initialize_is_refused_and_opens_no_session() {
    let (srv, _) = server();
    let s = super::client::start(srv, HttpConfig::default(), None).await;
    let big = "x".repeat(20 * 1024);
    let caps = json!({"elicitation": {}, "experimental": {"blob": {"data": big}}});
    let r = send_from(
        CALM,
        s.addr,
        "POST",
        None,
        Some(&initialize_with(caps, json!({"name": "c", "version": "1"}))),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.session.is_none(), "no session for a refused initialize");
    let v = r.json().await;
    assert_eq!(v["id"], 0);
    assert_limit(&v["error"], -32602, "max_capabilities");
    let client = json!({"name": "c", "version": "1", "description": "y".repeat(10 * 1024)});
    let r = send_from(
        CALM,
        s.addr,
        "POST",
        None,
        Some(&initialize_with(json!({}), client)),
    )
    .await;
    assert!(r.session.is_none());
    assert_limit(&r.json().await["error"], -32602, "max_client_info");
    // An ordinary client is unaffected.
    open(CALM, s.addr).await.expect("a session");
    s.shutdown().await;
}

fn subscribe(id: i64, uri: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe", "params": {"uri": uri}})
}

#[tokio::test]
async fn subscriptions_are_bounded_in_number_and_length() {
    let (srv, _) = server();
    let s = super::client::start(srv, HttpConfig::default(), None).await;
    let session = open(CALM, s.addr).await.unwrap();
    let sub = |id: i64, uri: String| {
        let session = session.clone();
        async move {
            send_from(
                CALM,
                s.addr,
                "POST",
                Some(&session),
                Some(&subscribe(id, &uri)),
            )
            .await
            .json()
            .await
        }
    };
    for i in 0..64 {
        let r = sub(i, format!("test://item/{i}")).await;
        assert!(r["result"].is_object(), "{r}");
    }
    let r = sub(64, "test://item/64".into()).await;
    assert_limit(&r["error"], -32602, "max_subscriptions");
    // Subscribing again to a held URI takes no room; unsubscribing makes room.
    assert!(sub(65, "test://item/3".into()).await["result"].is_object());
    let unsub = json!({"jsonrpc": "2.0", "id": 66, "method": "resources/unsubscribe", "params": {"uri": "test://item/3"}});
    let r = send_from(CALM, s.addr, "POST", Some(&session), Some(&unsub))
        .await
        .json()
        .await;
    assert!(r["result"].is_object(), "{r}");
    assert!(sub(67, "test://item/64".into()).await["result"].is_object());
    // A URI longer than kept is refused.
    let other = open(CALM, s.addr).await.unwrap();
    let long = format!("test://{}", "u".repeat(1100));
    let r = send_from(
        CALM,
        s.addr,
        "POST",
        Some(&other),
        Some(&subscribe(1, &long)),
    )
    .await
    .json()
    .await;
    assert_limit(&r["error"], -32602, "max_subscription_uri");
    s.shutdown().await;
}

#[tokio::test]
async fn one_client_filling_its_sessions_leaves_another_client_unaffected() {
    let (srv, _) = server();
    let s = super::client::start(srv, HttpConfig::default(), None).await;
    let mut held = Vec::new();
    for _ in 0..100 {
        held.push(open(FLOOD, s.addr).await.expect("within the share"));
    }
    let refused = open(FLOOD, s.addr).await.expect_err("over the share");
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    let v = refused.json().await;
    assert_eq!(v["id"], 0);
    assert_limit(&v["error"], -32603, "per_principal");
    // Another client opens and uses a session as if nothing happened.
    let calm = open(CALM, s.addr).await.expect("another client's share");
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let r = send_from(CALM, s.addr, "POST", Some(&calm), Some(&ping)).await;
    assert!(r.json().await["result"].is_object());
    // Ending one of its sessions gives the first client a slot back.
    let del = send_from(FLOOD, s.addr, "DELETE", Some(&held[0]), None).await;
    assert_eq!(del.status, StatusCode::OK);
    open(FLOOD, s.addr).await.expect("a slot again");
    s.shutdown().await;
}

/// Opens a session through a proxy at `PROXY` that names `client`; the refusal if any.
async fn open_via(client: &str, addr: SocketAddr) -> Result<String, StatusCode> {
    let r = send_via(PROXY, Some(client), addr, "POST", None, Some(&init())).await;
    r.session
        .filter(|_| r.status == StatusCode::OK)
        .ok_or(r.status)
}

const PROXY: [u8; 4] = [127, 0, 0, 4];

#[tokio::test]
async fn behind_a_trusted_proxy_each_forwarded_client_holds_its_own_share() {
    let (srv, _) = server();
    let proxies = "127.0.0.4".parse().unwrap();
    let config = HttpConfig::default().trusted_proxies(proxies);
    let s = super::client::start(srv, config, None).await;
    for _ in 0..100 {
        open_via("198.51.100.1", s.addr)
            .await
            .expect("within the share");
    }
    let refused = open_via("198.51.100.1", s.addr).await;
    assert_eq!(refused, Err(StatusCode::TOO_MANY_REQUESTS));
    // A client that writes the header itself is read from what its proxy appended.
    let spoofed = open_via("198.51.100.2, 198.51.100.1", s.addr).await;
    assert_eq!(
        spoofed,
        Err(StatusCode::TOO_MANY_REQUESTS),
        "still 198.51.100.1"
    );
    // Another client behind the same proxy, and the proxy's own requests, are unaffected.
    open_via("198.51.100.1, 198.51.100.2", s.addr)
        .await
        .expect("its own share");
    open(PROXY, s.addr).await.expect("the proxy's own share");
    // A peer that is no proxy is its own client, whatever it writes.
    let r = send_via(
        CALM,
        Some("198.51.100.1"),
        s.addr,
        "POST",
        None,
        Some(&init()),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "not 198.51.100.1's share");
    // An entry that is not an address is refused, not counted as the proxy's.
    let r = send_via(PROXY, Some("unknown"), s.addr, "POST", None, Some(&init())).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let v = r.json().await;
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("X-Forwarded-For")
    );
    s.shutdown().await;
}

#[tokio::test]
async fn a_proxy_that_writes_forwarded_is_read_by_rfc_7239() {
    use sterna::server::http::{ForwardedHeader, TrustedProxies};
    let (srv, _) = server();
    let proxies: TrustedProxies = "127.0.0.4".parse().unwrap();
    let config = HttpConfig::default().trusted_proxies(proxies.reading(ForwardedHeader::Forwarded));
    let s = super::client::start(srv, config, None).await;
    let init_with = |name: &'static str, value: &'static str| {
        let req = Request::post(format!("http://{}/mcp", s.addr))
            .header("host", format!("127.0.0.1:{}", s.addr.port()))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header(name, value)
            .body(Full::new(Bytes::from(init().to_string())))
            .unwrap();
        request_from(PROXY, s.addr, req)
    };
    for _ in 0..100 {
        let r = init_with("forwarded", "for=198.51.100.1;proto=http").await;
        assert_eq!(r.status(), StatusCode::OK);
    }
    let full = init_with("forwarded", "for=\"198.51.100.1:4711\"").await;
    assert_eq!(
        full.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "its share, port or not"
    );
    let other = init_with("forwarded", "for=\"[2001:db8::1]\"").await;
    assert_eq!(other.status(), StatusCode::OK, "another client's share");
    let r = init_with("forwarded", "for=_hidden").await;
    assert_eq!(
        r.status(),
        StatusCode::BAD_REQUEST,
        "a node that is no address"
    );
    // X-Forwarded-For is not read: it holds whatever the client wrote.
    let r = init_with("x-forwarded-for", "unknown").await;
    assert_eq!(r.status(), StatusCode::OK, "the proxy's own request");
    s.shutdown().await;
}

#[tokio::test]
async fn a_session_runs_a_bounded_number_of_requests_at_once() {
    let (srv, _) = server();
    let s = super::client::start(srv, HttpConfig::default(), None).await;
    let session = open(CALM, s.addr).await.unwrap();
    let call = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "provision_database", "arguments": {"name": format!("db{id}")}}})
    };
    // 32 requests, each waiting for the answer to its question.
    let mut running = Vec::new();
    for id in 0..32 {
        let mut r = send_from(CALM, s.addr, "POST", Some(&session), Some(&call(id))).await;
        assert_eq!(r.status, StatusCode::OK);
        assert_eq!(r.first_message().await["method"], "elicitation/create");
        running.push(r);
    }
    let r = send_from(CALM, s.addr, "POST", Some(&session), Some(&call(32))).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    let v = r.json().await;
    assert_eq!(v["id"], 32);
    assert_limit(&v["error"], -32603, "max_in_flight");
    // Another session of the same client is unaffected.
    let other = open(CALM, s.addr).await.unwrap();
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let r = send_from(CALM, s.addr, "POST", Some(&other), Some(&ping)).await;
    assert!(r.json().await["result"].is_object());
    // The requests wait for answers nobody gives: the server is dropped, not drained.
    drop((running, s));
}

/// A 2026-07-28 `subscriptions/listen` from `from`; its stream stays open while the
/// answer is held. `true` with an SSE answer.
async fn listen_from(from: [u8; 4], addr: SocketAddr, id: &str) -> (bool, Answer) {
    let listen = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {"_meta": super::client::meta(json!({})),
                   "notifications": {"toolsListChanged": true}}});
    let mut req = Request::post(format!("http://{addr}/mcp")).header("host", "127.0.0.1");
    for (k, v) in super::client::std_headers(&listen) {
        req = req.header(k, v);
    }
    let req = req
        .body(Full::new(Bytes::from(listen.to_string())))
        .unwrap();
    let (parts, body) = request_from(from, addr, req).await.into_parts();
    let sse = parts.headers["content-type"] == "text/event-stream";
    let answer = Answer {
        status: parts.status,
        session: None,
        body,
    };
    (sse, answer)
}

#[tokio::test]
async fn open_subscription_streams_are_a_per_client_share() {
    let (srv, _) = server();
    let s = super::client::start(srv, HttpConfig::default(), None).await;
    let limit = sterna::server::DEFAULT_LISTENS_PER_PRINCIPAL;
    let mut held = Vec::new();
    for i in 0..limit {
        let (sse, mut a) = listen_from(FLOOD, s.addr, &format!("flood-{i}")).await;
        assert!(sse, "stream {i} opens");
        let ack = a.first_message().await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        held.push(a);
    }
    // One more from the same client is refused, naming the limit, and opens no stream.
    let (sse, r) = listen_from(FLOOD, s.addr, "flood-over").await;
    assert!(!sse);
    assert_eq!(r.status, StatusCode::OK);
    let v = r.json().await;
    assert_eq!(v["id"], "flood-over");
    assert_limit(&v["error"], -32603, "listens_per_principal");
    assert_eq!(v["error"]["data"]["max"], limit);
    // Another client still listens.
    let (sse, mut calm) = listen_from(CALM, s.addr, "calm").await;
    assert!(sse);
    let ack = calm.first_message().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    // A stream that ends gives its place back.
    drop(held.pop());
    let mut again = None;
    for _ in 0..50 {
        let (sse, mut a) = listen_from(FLOOD, s.addr, "flood-again").await;
        if sse {
            let ack = a.first_message().await;
            assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
            again = Some(a);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(again.is_some(), "the freed place is taken again");
    drop((held, calm, again));
    s.shutdown().await;
}

/// A call of `FLOOD`'s waiting for the answer to the question it was pushed.
struct Waiting {
    session: String,
    /// The pushed question's id.
    push: Value,
    /// The call's stream, still open.
    answer: Answer,
}

/// Two sessions of `FLOOD`, 4 calls each, every one waiting for its pushed question's
/// answer: 8 requests in flight.
async fn eight_waiting_calls(addr: SocketAddr) -> Vec<Waiting> {
    let mut running = Vec::new();
    for _ in 0..2 {
        let session = open(FLOOD, addr).await.unwrap();
        for id in 0..4 {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "provision_database", "arguments": {"name": format!("db{id}")}}});
            let mut r = send_from(FLOOD, addr, "POST", Some(&session), Some(&call)).await;
            assert_eq!(r.status, StatusCode::OK);
            let asked = r.first_message().await;
            assert_eq!(asked["method"], "elicitation/create");
            running.push(Waiting {
                session: session.clone(),
                push: asked["id"].clone(),
                answer: r,
            });
        }
    }
    running
}

/// Whether `from` opens a session again within a second (50 tries, 20 ms apart).
async fn opens_again(from: [u8; 4], addr: SocketAddr) -> bool {
    for _ in 0..50 {
        let r = send_from(from, addr, "POST", None, Some(&init())).await;
        if r.status == StatusCode::OK {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn requests_in_flight_are_a_per_client_share() {
    let (srv, _) = server();
    let config = HttpConfig::default().requests_per_client(8);
    let s = super::client::start(srv, config, None).await;
    // Two sessions of one client, 4 requests each, every one waiting for the answer to
    // its question: 8 in flight (a session alone may run 32).
    let mut running = eight_waiting_calls(s.addr).await;
    // One more request of any kind from that client: refused before it is read.
    let over = send_from(FLOOD, s.addr, "POST", None, Some(&init())).await;
    assert_eq!(over.status, StatusCode::TOO_MANY_REQUESTS);
    let v = over.json().await;
    assert_limit(&v["error"], -32603, "requests_per_client");
    assert_eq!(v["error"]["data"]["max"], 8);
    let (sse, r) = listen_from(FLOOD, s.addr, "flood-listen").await;
    assert!(!sse);
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "2026 requests too");
    // Another client is served as if nothing happened.
    let calm = open(CALM, s.addr).await.expect("another client's share");
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let r = send_from(CALM, s.addr, "POST", Some(&calm), Some(&ping)).await;
    assert!(r.json().await["result"].is_object());
    // A request that ends (its client went away) gives its place back.
    drop(running.pop());
    let again = opens_again(FLOOD, s.addr).await;
    assert!(again, "the freed place is taken again");
    drop((running, s));
}

#[tokio::test]
async fn answers_to_pushed_questions_pass_a_full_share() {
    let (srv, _) = server();
    let config = HttpConfig::default().requests_per_client(8);
    let s = super::client::start(srv, config, None).await;
    // 8 calls of one client fill its share, each waiting for the answer to its question:
    // were the answers refused too, none could ever end.
    let mut running = eight_waiting_calls(s.addr).await;
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
    let session = &running[0].session;
    let r = send_from(FLOOD, s.addr, "POST", Some(session), Some(&ping)).await;
    assert_eq!(
        r.status,
        StatusCode::TOO_MANY_REQUESTS,
        "a request is not an answer"
    );
    assert_limit(&r.json().await["error"], -32603, "requests_per_client");
    // Every answer is taken, and each call ends with its result.
    for Waiting {
        session,
        push,
        answer: r,
    } in &mut running
    {
        let answer = json!({"jsonrpc": "2.0", "id": push, "result": {
            "action": "accept", "content": {"region": "eu-west-1"}}});
        let a = send_from(FLOOD, s.addr, "POST", Some(session), Some(&answer)).await;
        assert_eq!(
            a.status,
            StatusCode::ACCEPTED,
            "the answer passes the full share"
        );
        let done = r.first_message().await;
        assert!(
            done["result"]["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.ends_with("in eu-west-1")),
            "{done}"
        );
    }
    drop((running, s));
}

#[tokio::test]
async fn a_client_at_its_share_may_still_end_a_session() {
    let (srv, _) = server();
    let config = HttpConfig::default().requests_per_client(8);
    let s = super::client::start(srv, config, None).await;
    let running = eight_waiting_calls(s.addr).await;
    // Ending a session is how a stuck client lets go: it is never refused for the share.
    let ended = send_from(FLOOD, s.addr, "DELETE", Some(&running[0].session), None).await;
    assert_eq!(ended.status, StatusCode::OK);
    let again = opens_again(FLOOD, s.addr).await;
    assert!(again, "the ended session's requests gave their places back");
    drop((running, s));
}

#[tokio::test]
async fn a_client_at_its_share_may_still_cancel_one_of_its_calls() {
    let (srv, _) = server();
    let config = HttpConfig::default().requests_per_client(8);
    let s = super::client::start(srv, config, None).await;
    let mut running = eight_waiting_calls(s.addr).await;
    // Cancelling a call ends it, so it passes the full share as an answer does; any other
    // notification waits like a request.
    let session = running[0].session.clone();
    let other = json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"});
    let r = send_from(FLOOD, s.addr, "POST", Some(&session), Some(&other)).await;
    assert_eq!(
        r.status,
        StatusCode::TOO_MANY_REQUESTS,
        "only a cancellation"
    );
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 0, "reason": "no longer needed"}});
    let r = send_from(FLOOD, s.addr, "POST", Some(&session), Some(&cancel)).await;
    assert_eq!(
        r.status,
        StatusCode::ACCEPTED,
        "the cancellation passes the full share"
    );
    // The cancelled call's stream ends without a result, and its place is free again.
    let rest = running.remove(0).answer.rest().await;
    assert!(
        !rest.contains("\"result\""),
        "no result after a cancellation: {rest}"
    );
    let again = opens_again(FLOOD, s.addr).await;
    assert!(again, "the cancelled call gave its place back");
    drop((running, s));
}

#[tokio::test]
async fn a_client_over_its_share_is_served_once_a_place_frees() {
    use sterna::client::{Client, EraMode};
    use sterna::types::elicitation::{ElicitFormParams, ElicitResult};
    let (srv, _) = server();
    let config = HttpConfig::default().requests_per_client(1);
    let s = super::client::start(srv, config, None).await;
    // The client's one place is taken by a stream, given back a moment later.
    let (sse, held) = listen_from([127, 0, 0, 1], s.addr, "held").await;
    assert!(sse);
    let release = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        drop(held);
    });
    let client = Client::builder("busy", "1")
        .era(EraMode::Modern)
        .on_elicit(|_: ElicitFormParams| async {
            ElicitResult::accept(json!({"region": "eu-west-1"}).as_object().unwrap().clone())
        })
        .connect_http(&format!("http://{}/mcp", s.addr))
        .unwrap();
    // Refused with 429 + Retry-After: 1 at first; sent again, it is served.
    let r = client
        .call_tool("provision_database", json!({"name": "orders"}))
        .await
        .unwrap();
    assert_eq!(r.text_content(), "Created orders in eu-west-1");
    release.await.unwrap();
    client.close().await;
    s.shutdown().await;
}
