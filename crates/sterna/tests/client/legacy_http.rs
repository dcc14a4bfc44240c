//! A 2025-11-25 session over Streamable HTTP against a scripted server: session headers,
//! pushes on the POST and GET streams answered by POST, resumption with `Last-Event-ID`
//! after `retry`, a lost session initialized again, DELETE on close.

use super::http_peer::{HttpPeer, Reply, Seen, SseTx, serve, sse};
use futures_util::FutureExt;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use sterna::client::{Call, Client, EraMode, ServerEvent, Step};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};
use sterna::types::roots::Root;
use tokio::sync::oneshot;

/// What a scripted session server shares between its requests.
#[derive(Default)]
struct State {
    /// Sessions minted so far (`sess-1`, `sess-2` …).
    sessions: u32,
    /// Sessions the server forgot (404).
    forgotten: Vec<String>,
    /// The GET streams opened.
    gets: Vec<SseTx>,
    /// Answers to pushed requests, by push id.
    waiting: HashMap<String, oneshot::Sender<Value>>,
    /// When the tools/call stream was dropped.
    dropped_at: Option<Instant>,
    /// The tools/call id, once seen.
    call_id: Option<Value>,
}

type Shared = Arc<Mutex<State>>;

fn rpc(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn push(id: &str, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Registers interest in the client's answer to push `id`.
fn answer_of(state: &Shared, id: &str) -> oneshot::Receiver<Value> {
    let (tx, rx) = oneshot::channel();
    state.lock().unwrap().waiting.insert(id.into(), tx);
    rx
}

/// The common part of every script: initialize, initialized, answers, GET, DELETE.
fn session(state: &Shared, s: &Seen, get: bool) -> Option<Reply> {
    let mut st = state.lock().unwrap();
    if let Some(id) = s.header("mcp-session-id")
        && st.forgotten.iter().any(|f| f == id)
    {
        return Some(Reply::Status(404));
    }
    match (s.method.as_str(), s.rpc()) {
        ("POST", "initialize") => {
            st.sessions += 1;
            let id = format!("sess-{}", st.sessions);
            Some(
                Reply::json(rpc(
                    &s.body["id"],
                    json!({"protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {"listChanged": true}},
                    "serverInfo": {"name": "scripted-http", "version": "1"}}),
                ))
                .with_session(&id),
            )
        }
        ("POST", "notifications/initialized") => Some(Reply::Status(202)),
        ("POST", "") => {
            // The client's answer to a pushed request.
            let id = s.body["id"].as_str().unwrap_or_default().to_owned();
            if let Some(tx) = st.waiting.remove(&id) {
                let _ = tx.send(s.body.clone());
            }
            Some(Reply::Status(202))
        }
        ("GET", _) if get && s.header("last-event-id").is_none() => {
            let (tx, reply) = sse();
            tx.priming("g-0", 5000);
            st.gets.push(tx);
            Some(reply)
        }
        ("GET", _) if !get && s.header("last-event-id").is_none() => Some(Reply::Status(405)),
        ("DELETE", _) => Some(Reply::Status(200)),
        _ => None,
    }
}

fn client(peer: &HttpPeer) -> Client {
    Client::builder("http-legacy", "0")
        .on_elicit(|_f: ElicitFormParams| async {
            ElicitResult::accept(json!({"name": "Ada"}).as_object().unwrap().clone())
        })
        .roots(vec![Root::new("file:///work", "work")])
        .time_budget(std::time::Duration::from_secs(20))
        .era(EraMode::Legacy)
        .connect_http(&peer.url())
        .unwrap()
}

/// Every request after initialize carries the session and the negotiated version, and
/// no 2026-07-28 header or `_meta`.
fn assert_session_headers(peer: &HttpPeer, session: &str) {
    for s in peer.seen().iter().filter(|s| s.rpc() != "initialize") {
        assert_eq!(s.header("mcp-session-id"), Some(session), "{s:?}");
        assert_eq!(
            s.header("mcp-protocol-version"),
            Some("2025-11-25"),
            "{s:?}"
        );
        assert!(s.header("mcp-method").is_none() && s.header("mcp-name").is_none());
        let meta = &s.body["params"]["_meta"];
        assert!(
            meta.as_object()
                .is_none_or(|m| m.keys().all(|k| !k.starts_with("io.modelcontextprotocol/"))),
            "{s:?}"
        );
    }
}

#[tokio::test]
async fn pushes_on_the_post_and_get_streams_are_answered_by_post() {
    let state: Shared = Arc::default();
    let st = state.clone();
    let peer = serve(Arc::new(move |s: Seen| {
        let st = st.clone();
        async move {
            if let Some(r) = session(&st, &s, true) {
                return r;
            }
            assert_eq!(s.rpc(), "tools/call");
            let (tx, reply) = sse();
            let id = s.body["id"].clone();
            tokio::spawn(async move {
                tx.priming("c-0", 5000);
                // A push related to the call, on its own stream …
                let elicit = answer_of(&st, "e1");
                tx.event(Some("c-1"), &push("e1", "elicitation/create", json!({
                    "message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}})));
                let e = elicit.await.unwrap();
                // … and one with no related request, on the GET stream.
                let roots = answer_of(&st, "r1");
                let get = st.lock().unwrap().gets[0].clone();
                get.event(Some("g-1"), &push("r1", "roots/list", json!({})));
                get.event(Some("g-2"), &json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
                let r = roots.await.unwrap();
                let text = format!("{} {}", e["result"]["content"]["name"], r["result"]["roots"][0]["uri"]);
                tx.event(Some("c-2"), &rpc(&id, json!({"content": [{"type": "text", "text": text}]})));
            });
            reply
        }
        .boxed()
    }))
    .await;
    let c = client(&peer);
    let mut events = c.events();
    let r = c.call_tool("x", json!({})).await.unwrap();
    assert_eq!(r.text_content(), r#""Ada" "file:///work""#);
    assert_eq!(events.recv().await.unwrap(), ServerEvent::ToolsChanged);
    c.close().await;
    assert_session_headers(&peer, "sess-1");
    let seen = peer.seen();
    let init = &seen[0];
    assert_eq!(init.rpc(), "initialize");
    assert!(
        init.header("mcp-session-id").is_none() && init.header("mcp-protocol-version").is_none()
    );
    assert_eq!(seen[1].rpc(), "notifications/initialized");
    assert_eq!(
        seen[2].method, "GET",
        "the GET stream opens before any call"
    );
    assert_eq!(seen[2].header("accept"), Some("text/event-stream"));
    assert_eq!(seen.last().unwrap().method, "DELETE");
}

#[tokio::test]
async fn a_dropped_stream_is_resumed_with_last_event_id_and_replayed() {
    let state: Shared = Arc::default();
    let st = state.clone();
    let peer = serve(Arc::new(move |s: Seen| {
        let st = st.clone();
        async move {
            if let Some(r) = session(&st, &s, false) {
                return r;
            }
            if s.method == "GET" {
                // The resume: replay what the client missed, then the rest of the call.
                assert_eq!(s.header("last-event-id"), Some("s1-0"));
                let dropped = st.lock().unwrap().dropped_at.unwrap();
                assert!(dropped.elapsed() >= Duration::from_millis(180), "retry honoured");
                let id = st.lock().unwrap().call_id.clone().unwrap();
                let (tx, reply) = sse();
                tokio::spawn(async move {
                    let elicit = answer_of(&st, "e1");
                    tx.event(Some("s1-1"), &push("e1", "elicitation/create", json!({
                        "message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}})));
                    let e = elicit.await.unwrap();
                    tx.event(Some("s1-2"), &rpc(&id, json!({"content": [{"type": "text",
                        "text": format!("resumed {}", e["result"]["content"]["name"])}]})));
                });
                return reply;
            }
            // tools/call: prime, then drop the connection before anything else.
            st.lock().unwrap().call_id = Some(s.body["id"].clone());
            let (tx, reply) = sse();
            tx.priming("s1-0", 200);
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(30)).await;
                st.lock().unwrap().dropped_at = Some(Instant::now());
                drop(tx);
            });
            reply
        }
        .boxed()
    }))
    .await;
    let c = client(&peer);
    let r = c.call_tool("x", json!({})).await.unwrap();
    assert_eq!(r.text_content(), r#"resumed "Ada""#);
    assert_session_headers(&peer, "sess-1");
    assert_eq!(peer.posts("tools/call").len(), 1, "resumed, not sent again");
}

#[tokio::test]
async fn the_get_stream_is_reconnected_with_last_event_id() {
    let state: Shared = Arc::default();
    let st = state.clone();
    let gets = Arc::new(Mutex::new(0u32));
    let g = gets.clone();
    let peer = serve(Arc::new(move |s: Seen| {
        let (st, g) = (st.clone(), g.clone());
        async move {
            if s.method == "GET" {
                let n = {
                    let mut g = g.lock().unwrap();
                    *g += 1;
                    *g
                };
                let (tx, reply) = sse();
                if n == 1 {
                    // Prime with a short retry, then end the connection.
                    tx.priming("g-1", 50);
                } else {
                    assert_eq!(s.header("last-event-id"), Some("g-1"));
                    tx.event(Some("g-2"), &json!({"jsonrpc": "2.0",
                        "method": "notifications/resources/updated", "params": {"uri": "file:///x"}}));
                    st.lock().unwrap().gets.push(tx);
                }
                return reply;
            }
            session(&st, &s, false).unwrap_or_else(|| {
                Reply::json(rpc(&s.body["id"], json!({"tools": []})))
            })
        }
        .boxed()
    }))
    .await;
    let c = client(&peer);
    let mut events = c.events();
    c.list_tools().await.unwrap();
    let ev = tokio::time::timeout(Duration::from_secs(5), events.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        ev,
        ServerEvent::ResourceUpdated {
            uri: "file:///x".into()
        }
    );
    assert_eq!(*gets.lock().unwrap(), 2);
    assert_session_headers(&peer, "sess-1");
}

#[tokio::test]
async fn a_lost_session_is_initialized_again_and_the_request_retried() {
    let state: Shared = Arc::default();
    let st = state.clone();
    let peer = serve(Arc::new(move |s: Seen| {
        let st = st.clone();
        async move {
            if let Some(r) = session(&st, &s, false) {
                return r;
            }
            let mut st = st.lock().unwrap();
            if st.sessions == 1 {
                // The server restarts and forgets sess-1.
                st.forgotten.push("sess-1".into());
                return Reply::Status(404);
            }
            Reply::json(rpc(
                &s.body["id"],
                json!({"content": [{"type": "text", "text": "again"}]}),
            ))
        }
        .boxed()
    }))
    .await;
    let c = client(&peer);
    let r = c.call_tool("x", json!({})).await.unwrap();
    assert_eq!(r.text_content(), "again");
    let calls = peer.posts("tools/call");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].header("mcp-session-id"), Some("sess-1"));
    assert_eq!(calls[1].header("mcp-session-id"), Some("sess-2"));
    assert_ne!(calls[0].body["id"], calls[1].body["id"]);
    let inits = peer.posts("initialize");
    assert_eq!(inits.len(), 2);
    assert!(inits[1].header("mcp-session-id").is_none());
}

#[tokio::test]
async fn manual_mode_over_http() {
    let state: Shared = Arc::default();
    let st = state.clone();
    let peer = serve(Arc::new(move |s: Seen| {
        let st = st.clone();
        async move {
            if let Some(r) = session(&st, &s, false) {
                return r;
            }
            let (tx, reply) = sse();
            let id = s.body["id"].clone();
            tokio::spawn(async move {
                let elicit = answer_of(&st, "e9");
                tx.event(None, &push("e9", "elicitation/create", json!({
                    "message": "Region?", "requestedSchema": {"type": "object", "properties": {"region": {"type": "string"}}}})));
                let e = elicit.await.unwrap();
                tx.event(None, &rpc(&id, json!({"content": [{"type": "text",
                    "text": format!("in {}", e["result"]["content"]["region"])}]})));
            });
            reply
        }
        .boxed()
    }))
    .await;
    let c = client(&peer);
    let Step::InputRequired(p) = c.start(Call::tool("x", json!({}))).await.unwrap() else {
        panic!("the push should surface");
    };
    assert_eq!(p.requests().keys().collect::<Vec<_>>(), ["e9"]);
    let mut answers = sterna::types::mrtr::InputResponses::new();
    answers.insert(
        "e9".into(),
        sterna::types::mrtr::InputResponse::Elicit(ElicitResult::accept(
            json!({"region": "eu"}).as_object().unwrap().clone(),
        )),
    );
    let Step::Complete(r) = c.resume(p, answers).await.unwrap() else {
        panic!("done");
    };
    assert_eq!(r.text_content(), r#"in "eu""#);
}

/// A busy refusal, as sterna's server answers a client over its share.
fn busy() -> Reply {
    Reply::Json {
        status: 429,
        headers: vec![("retry-after".into(), "0".into())],
        body: json!({"jsonrpc": "2.0", "error": {"code": -32603, "message": "busy"}}),
    }
}

#[tokio::test]
async fn a_busy_session_call_and_a_busy_answer_are_sent_again() {
    let state: Shared = Arc::default();
    let st = state.clone();
    // The first call, and the first answer to the pushed question: busy.
    let refused = Arc::new(Mutex::new([false; 2]));
    let peer = serve(Arc::new(move |s: Seen| {
        let (st, refused) = (st.clone(), refused.clone());
        async move {
            let which = match (s.method.as_str(), s.rpc()) {
                ("POST", "tools/call") => Some(0),
                ("POST", "") => Some(1),
                _ => None,
            };
            if let Some(i) = which
                && !std::mem::replace(&mut refused.lock().unwrap()[i], true)
            {
                return busy();
            }
            if let Some(r) = session(&st, &s, false) {
                return r;
            }
            assert_eq!(s.rpc(), "tools/call");
            let (tx, reply) = sse();
            let id = s.body["id"].clone();
            tokio::spawn(async move {
                let elicit = answer_of(&st, "e1");
                tx.event(Some("c-1"), &push("e1", "elicitation/create", json!({
                    "message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}})));
                let e = elicit.await.unwrap();
                let text = e["result"]["content"]["name"].as_str().unwrap_or("?").to_owned();
                tx.event(Some("c-2"), &rpc(&id, json!({"content": [{"type": "text", "text": text}]})));
            });
            reply
        }
        .boxed()
    }))
    .await;
    let c = client(&peer);
    let r = c.call_tool("x", json!({})).await.unwrap();
    assert_eq!(r.text_content(), "Ada");
    let calls = peer.posts("tools/call").len();
    let answers = peer.posts("").len();
    assert_eq!(
        (calls, answers),
        (2, 2),
        "each refused once, then sent again"
    );
    c.close().await;
}
