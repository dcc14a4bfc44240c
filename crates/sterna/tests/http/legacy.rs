//! 2025-11-25 clients over Streamable HTTP: sessions, pushed questions on the POST's
//! stream, answers posted back, resumption with `Last-Event-ID`, DELETE.

use super::client::{call, post, start};
use super::fixture::{server, server_with};
use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use std::time::Duration;
use sterna::server::http::HttpConfig;
use tokio::net::TcpStream;

/// A streaming response.
pub struct Stream {
    pub status: StatusCode,
    pub headers: HeaderMap,
    body: hyper::body::Incoming,
    buf: String,
    /// SSE comments (keep-alives) skipped so far.
    pub comments: usize,
}

/// One SSE event: its id and its data (empty data for priming events).
#[derive(Debug, Clone)]
pub struct Event {
    pub id: Option<String>,
    pub data: Option<Value>,
}

impl Stream {
    /// The next event (comments skipped); `None` at the end of the stream.
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let raw: String = self.buf.drain(..end + 2).collect();
                if raw.starts_with(':') {
                    self.comments += 1;
                    continue;
                }
                let id = raw
                    .lines()
                    .find_map(|l| l.strip_prefix("id: "))
                    .map(str::to_owned);
                let data = raw
                    .lines()
                    .find_map(|l| l.strip_prefix("data: "))
                    .filter(|d| !d.is_empty())
                    .map(|d| serde_json::from_str(d).unwrap());
                return Some(Event { id, data });
            }
            let frame = tokio::time::timeout(Duration::from_secs(10), self.body.frame())
                .await
                .expect("an event within 10 s")?;
            if let Ok(data) = frame.unwrap().into_data() {
                self.buf.push_str(&String::from_utf8_lossy(&data));
            }
        }
    }

    /// The next event with data.
    pub async fn message(&mut self) -> Value {
        loop {
            let e = self.next().await.expect("the stream ended early");
            if let Some(d) = e.data {
                assert_legacy(&d);
                return d;
            }
        }
    }

    pub async fn json(mut self) -> Value {
        let bytes = self.body.collect().await.unwrap().to_bytes();
        self.buf.push_str(&String::from_utf8_lossy(&bytes));
        let v: Value = serde_json::from_str(&self.buf).unwrap();
        assert_legacy(&v);
        v
    }
}

/// Nothing a legacy client receives may carry 2026-only members.
fn assert_legacy(msg: &Value) {
    let text = msg.to_string();
    for banned in [
        "resultType",
        "inputRequests",
        "requestState",
        "ttlMs",
        "cacheScope",
    ] {
        assert!(
            !text.contains(banned),
            "{banned} reached a legacy client: {msg}"
        );
    }
}

/// A request as a 2025 client sends it (no 2026 headers; the session once it has one).
pub async fn send(
    addr: std::net::SocketAddr,
    method: &str,
    session: Option<&str>,
    extra: &[(&str, &str)],
    body: Option<&Value>,
) -> Stream {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = Request::builder()
        .method(method)
        .uri(format!("http://{addr}/mcp"))
        .header("host", format!("127.0.0.1:{}", addr.port()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(s) = session {
        req = req
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", "2025-11-25");
    }
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    let body = body.map_or(String::new(), Value::to_string);
    let req = req.body(Full::new(Bytes::from(body))).unwrap();
    let resp = tokio::time::timeout(Duration::from_secs(10), sender.send_request(req))
        .await
        .expect("an answer within 10 s")
        .unwrap();
    let (parts, body) = resp.into_parts();
    Stream {
        status: parts.status,
        headers: parts.headers,
        body,
        buf: String::new(),
        comments: 0,
    }
}

pub async fn initialize(addr: std::net::SocketAddr, caps: Value) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": caps,
        "clientInfo": {"name": "legacy-http-test", "version": "1"}}});
    let r = send(addr, "POST", None, &[], Some(&init)).await;
    assert_eq!(r.status, StatusCode::OK);
    let session = r.headers["mcp-session-id"].to_str().unwrap().to_owned();
    assert!(session.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    let v = r.json().await;
    assert_eq!(v["result"]["protocolVersion"], "2025-11-25");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = send(addr, "POST", Some(&session), &[], Some(&note)).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    session
}

fn tool_call(id: i64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}})
}

/// POSTs `tools/call` `name` in `session`: its response (JSON, or the SSE stream).
async fn call_in(
    addr: std::net::SocketAddr,
    session: &str,
    id: i64,
    name: &str,
    args: Value,
) -> Stream {
    let body = tool_call(id, name, args);
    send(addr, "POST", Some(session), &[], Some(&body)).await
}

/// POSTs `tools/call provision_database` for a database `name` in `session`: its SSE
/// stream, which carries the pushed question.
async fn provision(addr: std::net::SocketAddr, session: &str, id: i64, name: &str) -> Stream {
    call_in(
        addr,
        session,
        id,
        "provision_database",
        json!({ "name": name }),
    )
    .await
}

/// POSTs the client's `result` for the pushed request `id`: the response's status.
async fn answer_push(
    addr: std::net::SocketAddr,
    session: &str,
    id: &Value,
    result: Value,
) -> StatusCode {
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
    send(addr, "POST", Some(session), &[], Some(&answer))
        .await
        .status
}

#[tokio::test]
async fn a_session_pushes_a_question_and_the_handler_completes() {
    let (srv, c) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let session = initialize(s.addr, json!({"elicitation": {}})).await;
    let r = send(
        s.addr,
        "POST",
        Some(&session),
        &[],
        Some(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
    )
    .await;
    assert!(r.json().await["result"]["tools"].is_array());
    let mut stream = provision(s.addr, &session, 2, "orders").await;
    assert_eq!(stream.headers["content-type"], "text/event-stream");
    let priming = stream.next().await.unwrap();
    assert!(priming.id.is_some() && priming.data.is_none());
    let push = stream.message().await;
    assert_eq!(push["method"], "elicitation/create");
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 0);
    let region = accept(json!({"region": "us-east-1"}));
    let status = answer_push(s.addr, &session, &push["id"], region).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let done = stream.message().await;
    assert_eq!(done["id"], 2);
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Created orders in us-east-1"
    );
    assert!(
        stream.next().await.is_none(),
        "the stream ends after the response"
    );
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 1);
    // A 2026 request on the same endpoint is served statelessly.
    let r = post(s.addr, &call(3, "add", json!({"a": 1, "b": 2}))).await;
    assert_eq!(r.json()["result"]["resultType"], "complete");
    s.shutdown().await;
}

#[tokio::test]
async fn a_stream_waiting_for_an_answer_carries_keep_alives_then_the_result() {
    let (srv, c) = server();
    let s = start(
        srv,
        HttpConfig::default().keep_alive(Duration::from_millis(100)),
        None,
    )
    .await;
    let session = initialize(s.addr, json!({"elicitation": {}})).await;
    let mut stream = provision(s.addr, &session, 1, "orders").await;
    let push = stream.message().await;
    assert_eq!(push["method"], "elicitation/create");
    assert_eq!(stream.comments, 0, "no keep-alive before the question");
    tokio::time::sleep(Duration::from_millis(450)).await;
    let region = accept(json!({"region": "eu-west-1"}));
    let status = answer_push(s.addr, &session, &push["id"], region).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let done = stream.message().await;
    assert_eq!(done["id"], 1);
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 1);
    // One comment per 100 ms of silence: about four, never a burst.
    assert!(
        (2..=6).contains(&stream.comments),
        "{} keep-alive comments in 450 ms",
        stream.comments
    );
    assert!(stream.next().await.is_none());
    s.shutdown().await;
}

/// The GET that resumes a session's stream after `last` (its `Last-Event-ID`); 200.
async fn resume(addr: std::net::SocketAddr, session: &str, last: &str) -> Stream {
    let resumed = send(addr, "GET", Some(session), &[("last-event-id", last)], None).await;
    assert_eq!(resumed.status, StatusCode::OK);
    resumed
}

#[tokio::test]
async fn a_pushed_question_answered_with_no_object_or_twice_is_refused_not_taken() {
    // The answer goes on as the client wrote it: the round that reads it still refuses
    // what is not an object, and a second answer to the same push finds nobody waiting.
    let (srv, c) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let session = initialize(s.addr, json!({"elicitation": {}})).await;
    let mut answered = Vec::new();
    let (r, pushes) = drive(
        s.addr,
        &session,
        6,
        "provision_database",
        json!({"name": "z"}),
        |p| {
            answered.push(p["id"].clone());
            json!("eu-west-1")
        },
    )
    .await;
    assert_eq!(pushes.len(), 1);
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 0);
    let region = accept(json!({"region": "eu-west-1"}));
    let status = answer_push(s.addr, &session, &answered[0], region).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "answered twice");
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 0);
    s.shutdown().await;
}

#[tokio::test]
async fn a_stream_cut_mid_question_is_resumed_with_last_event_id() {
    let (srv, c) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let session = initialize(s.addr, json!({"elicitation": {}})).await;
    let mut stream = provision(s.addr, &session, 5, "logs").await;
    let _priming = stream.next().await.unwrap();
    let push_event = loop {
        let e = stream.next().await.unwrap();
        if e.data.is_some() {
            break e;
        }
    };
    let push = push_event.data.unwrap();
    drop(stream); // the connection breaks: not a cancellation in 2025-11-25
    let region = accept(json!({"region": "eu-west-1"}));
    answer_push(s.addr, &session, &push["id"], region).await;
    let last = push_event.id.unwrap();
    let mut resumed = resume(s.addr, &session, &last).await;
    let done = resumed.message().await;
    assert_eq!(done["id"], 5);
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Created logs in eu-west-1"
    );
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 1);
    s.shutdown().await;
}

/// A tool that closes its stream's connection, then answers (SEP-1699 polling).
fn polling_tool(
    b: sterna::server::ServerBuilder<sterna::server::state::StateKeys>,
) -> sterna::server::ServerBuilder<sterna::server::state::StateKeys> {
    use sterna::server::{Context, NoArgs, Tool};
    b.tool(
        Tool::new("poll")
            .description("closes the connection, then answers")
            .handler(|ctx: Context, _: NoArgs| async move {
                let closed = ctx.close_stream();
                tokio::time::sleep(Duration::from_millis(50)).await;
                format!("closed: {closed}")
            }),
    )
}

/// A tool that asks first, then closes its stream's connection and answers later.
fn ask_then_close_tool(
    b: sterna::server::ServerBuilder<sterna::server::state::StateKeys>,
) -> sterna::server::ServerBuilder<sterna::server::state::StateKeys> {
    use sterna::server::{Context, HandlerError, NoArgs, Tool};
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Go {
        go: bool,
    }
    b.tool(
        Tool::new("ask_then_close")
            .description("asks, closes the connection, then answers")
            .handler(|ctx: Context, _: NoArgs| async move {
                let go = ctx.elicit::<Go>("Go on?").await?.required()?;
                let closed = ctx.close_stream();
                tokio::time::sleep(Duration::from_millis(50)).await;
                Ok::<_, HandlerError>(format!("go: {}, closed: {closed}", go.go))
            }),
    )
}

#[tokio::test]
async fn a_handler_closes_its_stream_after_a_pushed_question_and_the_client_resumes_it() {
    // The request's body drives it while the client reads; closing the stream ends that
    // body, and the request goes on on its own task until the client resumes it.
    let (srv, _) = server_with(ask_then_close_tool);
    let s = start(srv, HttpConfig::default(), None).await;
    let session = initialize(s.addr, json!({"elicitation": {}})).await;
    let mut stream = call_in(s.addr, &session, 4, "ask_then_close", json!({})).await;
    assert_eq!(stream.headers["content-type"], "text/event-stream");
    let _priming = stream.next().await.unwrap();
    let push = stream.next().await.unwrap();
    let question = push.data.clone().unwrap();
    assert_eq!(question["method"], "elicitation/create");
    let go = accept(json!({"go": true}));
    let status = answer_push(s.addr, &session, &question["id"], go).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert!(
        stream.next().await.is_none(),
        "the connection closes before the response"
    );
    let mut resumed = resume(s.addr, &session, &push.id.unwrap()).await;
    let done = resumed.message().await;
    assert_eq!(done["id"], 4);
    assert_eq!(
        done["result"]["content"][0]["text"],
        "go: true, closed: true"
    );
    assert!(
        resumed.next().await.is_none(),
        "the stream ends after the response"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn a_handler_closes_the_connection_and_the_client_resumes_the_stream() {
    let (srv, _) = server_with(polling_tool);
    let s = start(srv, HttpConfig::default(), None).await;
    let session = initialize(s.addr, json!({})).await;
    let mut stream = call_in(s.addr, &session, 9, "poll", json!({})).await;
    assert_eq!(stream.headers["content-type"], "text/event-stream");
    let priming = stream.next().await.unwrap();
    assert!(priming.data.is_none());
    assert!(
        stream.next().await.is_none(),
        "the connection closes before the response"
    );
    let last = priming.id.unwrap();
    let mut resumed = resume(s.addr, &session, &last).await;
    let done = resumed.message().await;
    assert_eq!(done["id"], 9);
    assert_eq!(done["result"]["content"][0]["text"], "closed: true");
    assert!(
        resumed.next().await.is_none(),
        "the stream ends after the response"
    );
    // A 2026-07-28 request has no stream to resume: closing it would cancel the request.
    let r = post(s.addr, &call(10, "poll", json!({}))).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "closed: false");
    s.shutdown().await;
}

#[tokio::test]
async fn sessions_end_with_delete_and_unknown_ones_are_404() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let session = initialize(s.addr, json!({})).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let r = send(s.addr, "POST", Some(&session), &[], Some(&ping)).await;
    assert_eq!(
        r.json().await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    let r = send(s.addr, "POST", Some("no-such-session"), &[], Some(&ping)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = send(s.addr, "DELETE", Some(&session), &[], None).await;
    assert_eq!(r.status, StatusCode::OK);
    let r = send(s.addr, "POST", Some(&session), &[], Some(&ping)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    // No session at all: served, but a question cannot be pushed — a clean refusal.
    let r = send(
        s.addr,
        "POST",
        None,
        &[],
        Some(&tool_call(2, "provision_database", json!({"name": "x"}))),
    )
    .await;
    let v = r.json().await;
    assert_eq!(v["result"]["isError"], true, "{v}");
    s.shutdown().await;
}

/// Every GET or DELETE a session refuses says why, as a JSON-RPC error (it was an empty
/// body); a `Last-Event-ID` that is not text is refused, not read as absent (which opened
/// the session's standalone stream instead).
#[tokio::test]
async fn a_session_refuses_a_get_or_delete_with_a_reason() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let session = initialize(s.addr, json!({})).await;
    // (method, Last-Event-ID, with the session, status, what the message says)
    let refusals = [
        (
            "GET",
            Some("5-abc"),
            true,
            StatusCode::BAD_REQUEST,
            "Last-Event-ID",
        ),
        (
            "GET",
            Some("5-\u{e9}"),
            true,
            StatusCode::BAD_REQUEST,
            "Last-Event-ID",
        ),
        (
            "GET",
            Some("999-0"),
            true,
            StatusCode::BAD_REQUEST,
            "no stream",
        ),
        (
            "DELETE",
            None,
            false,
            StatusCode::BAD_REQUEST,
            "Mcp-Session-Id",
        ),
        ("GET", None, true, StatusCode::CONFLICT, "already"),
    ];
    // The last case needs the session's standalone stream open already.
    let standalone = send(s.addr, "GET", Some(&session), &[], None).await;
    assert_eq!(standalone.status, StatusCode::OK);
    for (method, last, with_session, status, says) in refusals {
        let extra: Vec<_> = last.map(|l| ("last-event-id", l)).into_iter().collect();
        let id = with_session.then_some(session.as_str());
        let r = send(s.addr, method, id, &extra, None).await;
        assert_eq!(r.status, status, "{method} {last:?}");
        let v = r.json().await;
        assert_eq!(v["error"]["code"], -32600, "{v}");
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{method} {last:?}: {message}");
    }
    drop(standalone);
    s.shutdown().await;
}

/// An answer to a pushed question belongs to a session: one POSTed without
/// `Mcp-Session-Id` answers nothing and is refused (it was accepted, 202, and dropped).
#[tokio::test]
async fn an_answer_outside_any_session_is_refused() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let answer = json!({"jsonrpc": "2.0", "id": "sterna-x-1",
        "result": {"action": "accept", "content": {"region": "eu-west-1"}}});
    let r = send(s.addr, "POST", None, &[], Some(&answer)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let v = r.json().await;
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("session"),
        "{v}"
    );
    // A notification outside a session is still accepted (a stateless client's).
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = send(s.addr, "POST", None, &[], Some(&note)).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    s.shutdown().await;
}

/// Calls `tool` in an HTTP session, answering each pushed question (by POST) with
/// `answer(push)`; returns the final response and the pushes seen.
async fn drive(
    addr: std::net::SocketAddr,
    session: &str,
    id: i64,
    tool: &str,
    args: Value,
    mut answer: impl FnMut(&Value) -> Value,
) -> (Value, Vec<Value>) {
    let mut stream = call_in(addr, session, id, tool, args).await;
    if stream.headers["content-type"] == "application/json" {
        return (stream.json().await, Vec::new());
    }
    let mut pushes = Vec::new();
    loop {
        let m = stream.message().await;
        if m["id"] == id && m.get("method").is_none() {
            return (m, pushes);
        }
        if m.get("method").is_some() && m.get("id").is_some() {
            let status = answer_push(addr, session, &m["id"], answer(&m)).await;
            pushes.push(m);
            assert_eq!(status, StatusCode::ACCEPTED);
        }
    }
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[tokio::test]
async fn imperative_and_low_level_handlers_over_http() {
    let (srv, c) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let session = initialize(s.addr, json!({"elicitation": {}})).await;
    let (r, pushes) = drive(s.addr, &session, 1, "wizard", json!({}), |p| {
        let msg = p["params"]["message"].as_str().unwrap();
        if msg.starts_with("Your name") {
            accept(json!({"name": "Bo"}))
        } else if msg.starts_with("Favourite colour") {
            accept(json!({"color": "red"}))
        } else {
            accept(json!({"ok": false}))
        }
    })
    .await;
    assert_eq!(pushes.len(), 3);
    assert_eq!(
        r["result"]["content"][0]["text"],
        "Bo likes red (saved: false)"
    );
    assert_eq!(c.wizard_done.load(Ordering::SeqCst), 1);
    let (r, _) = drive(s.addr, &session, 2, "low_level", json!({}), |_| {
        accept(json!({"ok": "y"}))
    })
    .await;
    assert_eq!(
        r["result"]["content"][0]["text"],
        r#"state=my-own-state-42 answer={"ok":"y"}"#
    );
    let (r, _) = drive(
        s.addr,
        &session,
        3,
        "provision_database",
        json!({"name": "x"}),
        |_| json!({"action": "decline"}),
    )
    .await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 0);
    s.shutdown().await;
}

#[tokio::test]
async fn a_request_that_ends_at_once_is_json_and_its_notifications_still_come_first() {
    // `add` ends without a message before its answer: JSON. `progress` sends its progress
    // and a log message before it ends, in the same instant: an SSE stream carrying them
    // first, then the answer, then the end (a stream the client may resume).
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let session = initialize(s.addr, json!({})).await;
    let r = call_in(s.addr, &session, 1, "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.headers["content-type"], "application/json");
    let v = r.json().await;
    assert_eq!(v["id"], 1);
    assert_eq!(v["result"]["content"][0]["text"], "5");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "progress", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let mut stream = send(s.addr, "POST", Some(&session), &[], Some(&call)).await;
    assert_eq!(stream.headers["content-type"], "text/event-stream");
    let mut methods = Vec::new();
    let answer = loop {
        let m = stream.message().await;
        match m["method"].as_str() {
            Some(method) => methods.push(method.to_owned()),
            None => break m,
        }
    };
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/progress",
            "notifications/progress",
            "notifications/message"
        ]
    );
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"]["content"][0]["text"], "finished");
    assert!(
        stream.next().await.is_none(),
        "the stream ends after the answer"
    );
    s.shutdown().await;
}

/// Sends a session's POST over a raw connection and returns the connection (the answer
/// is never read: the caller keeps the connection open, or drops it to vanish).
async fn post_and_hold(addr: std::net::SocketAddr, session: &str, body: &Value) -> TcpStream {
    use tokio::io::AsyncWriteExt;
    let body = body.to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-session-id: {session}\r\nmcp-protocol-version: 2025-11-25\r\ncontent-length: {}\r\n\r\n",
        addr.port(),
        body.len()
    );
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(head.as_bytes()).await.unwrap();
    tcp.write_all(body.as_bytes()).await.unwrap();
    tcp
}

#[tokio::test]
async fn a_request_outlives_the_resume_window_while_its_client_waits_and_ends_once_it_vanishes() {
    // A handler that sends nothing for longer than the resume window: its client still
    // waits on the POST, so the request goes on; once the client is gone (never read, never
    // resumed) for a window, it is cancelled.
    let (srv, c) = server();
    let sessions = sterna::server::http::SessionConfig::new()
        .resume_window(Duration::from_millis(150))
        .idle(Duration::from_secs(30));
    let s = start(srv, HttpConfig::default().sessions(sessions), None).await;
    let session = initialize(s.addr, json!({})).await;
    let held = post_and_hold(s.addr, &session, &tool_call(1, "slow", json!({}))).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(
        c.slow_dropped.load(Ordering::SeqCst),
        0,
        "cancelled while its client was still waiting"
    );
    drop(held);
    let mut cancelled = false;
    for _ in 0..60 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if c.slow_dropped.load(Ordering::SeqCst) == 1 {
            cancelled = true;
            break;
        }
    }
    assert!(cancelled, "the request of a vanished client still runs");
    s.shutdown().await;
}

#[tokio::test]
async fn a_client_that_vanishes_mid_question_leaves_nothing_behind() {
    let (srv, c) = server();
    let sessions = sterna::server::http::SessionConfig::new()
        .resume_window(Duration::from_millis(150))
        .idle(Duration::from_millis(400));
    let service = sterna::server::http::McpService::new(
        srv.clone(),
        HttpConfig::default().sessions(sessions),
    );
    let app = axum::Router::new().route_service("/mcp", service.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = tokio::spawn(async move { axum::serve(listener, app).await });
    let tasks_before = tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks();
    let session = initialize(addr, json!({"elicitation": {}})).await;
    let mut stream = provision(addr, &session, 1, "x").await;
    let push = stream.message().await;
    assert_eq!(push["method"], "elicitation/create");
    assert_eq!(service.live_sessions(), 1);
    drop(stream); // gone, never resumed, never answered
    // The resume window passes: the request is cancelled; the idle time passes: the
    // session goes. Bounded wait, checked every 50 ms.
    let mut gone = false;
    for _ in 0..60 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let tasks = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks();
        if service.live_sessions() == 0 && tasks <= tasks_before {
            gone = true;
            break;
        }
    }
    assert!(
        gone,
        "live sessions {}, tasks {} (before {})",
        service.live_sessions(),
        tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks(),
        tasks_before
    );
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 0);
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
    assert_eq!(
        send(addr, "POST", Some(&session), &[], Some(&ping))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    handle.abort();
}
