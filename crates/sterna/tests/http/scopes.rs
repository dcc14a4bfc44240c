//! Per-target scope rules hold for every body shape of both eras: the target the
//! authorization step judges is the target that runs, or the request is refused.
//!
//! The server has protected targets (`drop_table`, the prompt `secret`, the resource
//! `docs://secret`) that count their runs, and a free tool `open`. Tokens hold the base
//! scope only, or one target scope. Every body — hand-written 2025 and 2026 shapes, mutated
//! `_meta`/`requestState`/`name`/`uri`, the fuzz corpus of the server decoder rewritten to
//! name protected targets — is sent with and without a 2025 session; a protected target
//! may run only for a token holding its scope.

use super::client::{Reply, meta, start};
use futures_util::future::BoxFuture;
use http::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use sterna::server::Server;
use sterna::server::http::HttpConfig;
use sterna::server::http::auth::{AuthError, AuthLayer, Authenticator, Presented, ScopePolicy};
use sterna::server::state::StateKeys;
use sterna::server::{AccessGrant, Context, NoArgs, Principal, Prompt, Resource, Tool};

/// Sends one request; a body still streaming after a moment (a listen stream, a pushed
/// question) is cut there: what matters is whether a handler ran.
async fn send(
    addr: std::net::SocketAddr,
    method: &str,
    headers: &[(String, String)],
    body: &str,
) -> Reply {
    use http_body_util::BodyExt;
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let io = hyper_util::rt::TokioIo::new(tcp);
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io).await.unwrap();
    tokio::spawn(conn);
    let mut req = http::Request::builder()
        .method(method)
        .uri(format!("http://{addr}/mcp"))
        .header("host", format!("127.0.0.1:{}", addr.port()));
    for (k, v) in headers {
        req = req.header(k.as_str(), v.as_str());
    }
    let req = req
        .body(http_body_util::Full::new(bytes::Bytes::from(
            body.to_owned(),
        )))
        .unwrap();
    let wait = std::time::Duration::from_secs(10);
    let resp = tokio::time::timeout(wait, sender.send_request(req))
        .await
        .expect("an answer within 10 s")
        .unwrap();
    let (parts, body) = resp.into_parts();
    let short = std::time::Duration::from_millis(500);
    let text = match tokio::time::timeout(short, body.collect()).await {
        Ok(Ok(b)) => String::from_utf8_lossy(&b.to_bytes()).into_owned(),
        _ => "(still streaming)".to_owned(),
    };
    Reply {
        status: parts.status,
        headers: parts.headers,
        body: text,
    }
}

/// Runs of each protected target, and of the free tool.
#[derive(Default)]
struct Runs {
    drop_table: AtomicUsize,
    secret_prompt: AtomicUsize,
    secret_doc: AtomicUsize,
    open: AtomicUsize,
}

impl Runs {
    fn protected(&self) -> [usize; 3] {
        [
            self.drop_table.load(Ordering::SeqCst),
            self.secret_prompt.load(Ordering::SeqCst),
            self.secret_doc.load(Ordering::SeqCst),
        ]
    }
}

fn server(runs: &Arc<Runs>) -> Server {
    let (a, b, c, d) = (runs.clone(), runs.clone(), runs.clone(), runs.clone());
    Server::builder("scopes", "1")
        .state_keys(StateKeys::ephemeral())
        .tool(
            Tool::new("drop_table").handler(move |_: Context, _: NoArgs| {
                let a = a.clone();
                async move {
                    a.drop_table.fetch_add(1, Ordering::SeqCst);
                    "dropped"
                }
            }),
        )
        .tool(Tool::new("open").handler(move |_: Context, _: NoArgs| {
            let d = d.clone();
            async move {
                d.open.fetch_add(1, Ordering::SeqCst);
                "open"
            }
        }))
        .prompt(Prompt::new("secret").handler(move |_: Context, _: NoArgs| {
            let b = b.clone();
            async move {
                b.secret_prompt.fetch_add(1, Ordering::SeqCst);
                "the secret prompt".to_owned()
            }
        }))
        .resource(
            Resource::new("docs://secret", "secret").handler(move |_: Context, _: NoArgs| {
                let c = c.clone();
                async move {
                    c.secret_doc.fetch_add(1, Ordering::SeqCst);
                    "the secret document".to_owned()
                }
            }),
        )
        .build()
        .expect("the server builds")
}

/// `Bearer <scope list>` authenticates a principal holding exactly those scopes.
struct ScopedTokens;

impl Authenticator for ScopedTokens {
    fn authenticate<'a>(
        &'a self,
        presented: Presented<'a>,
    ) -> BoxFuture<'a, Result<Option<Principal>, AuthError>> {
        let token = presented.access_token().map(str::to_owned);
        Box::pin(async move {
            Ok(token.map(|t| {
                let grant = AccessGrant::new("https://issuer.test", "alice")
                    .with_scopes(t.split('+').map(str::to_owned));
                Principal::from_grant(grant)
            }))
        })
    }
}

fn policy() -> ScopePolicy {
    ScopePolicy::new()
        .always(["read"])
        .tool("drop_table", ["admin"])
        .prompt("secret", ["admin"])
        .resource("docs://secret", ["docs"])
}

async fn protected_server() -> (super::client::Running, Arc<Runs>) {
    let runs = Arc::new(Runs::default());
    let auth = AuthLayer::new(ScopedTokens).scopes(policy());
    let s = start(server(&runs), HttpConfig::default(), Some(auth)).await;
    (s, runs)
}

fn headers(token: &str, session: Option<&str>, version: Option<&str>) -> Vec<(String, String)> {
    let mut h = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        (
            "accept".to_owned(),
            "application/json, text/event-stream".to_owned(),
        ),
        ("authorization".to_owned(), format!("Bearer {token}")),
    ];
    if let Some(s) = session {
        h.push(("mcp-session-id".to_owned(), s.to_owned()));
    }
    if let Some(v) = version {
        h.push(("mcp-protocol-version".to_owned(), v.to_owned()));
    }
    h
}

/// Opens a 2025-11-25 session as `token` (the base scope suffices).
async fn open_session(addr: std::net::SocketAddr, token: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "scopes-test", "version": "1"}}});
    let r = send(addr, "POST", &headers(token, None, None), &init.to_string()).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let session = r.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let h = headers(token, Some(&session), Some("2025-11-25"));
    let r = send(addr, "POST", &h, &note.to_string()).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    session
}

/// The params of a call of each protected kind, as `(method, params without _meta)`.
fn protected_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("tools/call", json!({"name": "drop_table", "arguments": {}})),
        ("prompts/get", json!({"name": "secret"})),
        ("resources/read", json!({"uri": "docs://secret"})),
    ]
}

/// `_meta` shapes real and hostile clients send.
fn meta_shapes() -> Vec<Option<Value>> {
    vec![
        None,
        Some(json!({})),
        Some(json!({"progressToken": 1})),
        Some(json!({"progressToken": "p"})),
        Some(json!([])),
        Some(Value::Null),
        Some(json!(1)),
        Some(meta(json!({}))),
        Some(meta(json!({"elicitation": {}}))),
        Some(json!({"io.modelcontextprotocol/protocolVersion": "2025-11-25"})),
        Some(json!({"io.modelcontextprotocol/protocolVersion": 7})),
    ]
}

fn body(
    id: i64,
    method: &str,
    params: &Value,
    meta: Option<&Value>,
    extra: &[(&str, Value)],
) -> String {
    let mut params = params.clone();
    if let Some(m) = meta {
        params["_meta"] = m.clone();
    }
    for (k, v) in extra {
        params[*k] = v.clone();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// Every hand-written shape of a protected call.
fn shapes() -> Vec<String> {
    let extras: Vec<Vec<(&str, Value)>> = vec![
        vec![],
        vec![("requestState", json!(1))],
        vec![("requestState", json!("AAAA"))],
        vec![("requestState", Value::Null)],
        vec![("inputResponses", json!({"x": {"action": "accept"}}))],
        vec![("inputResponses", json!([]))],
    ];
    let mut out = Vec::new();
    for (method, params) in protected_calls() {
        for m in meta_shapes() {
            for extra in &extras {
                out.push(body(7, method, &params, m.as_ref(), extra));
            }
        }
    }
    out
}

/// Hand-written hostile bodies: duplicate keys, escapes, odd nesting and types.
fn hostile() -> Vec<String> {
    let m = meta(json!({})).to_string();
    let call = |params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#)
    };
    vec![
        call(r#"{"name":"open","name":"drop_table"}"#),
        call(r#"{"name":"drop_table","name":"open"}"#),
        call(r#"{"name":"\u0064rop_table"}"#),
        call(r#"{"name":"drop_table","arguments":[]}"#),
        call(r#"{"name":["drop_table"]}"#),
        call(&format!(r#"{{"name":"drop_table","_meta":{m},"_meta":{{}}}}"#)),
        call(&format!(r#"{{"name":"drop_table","_meta":{{}},"_meta":{m}}}"#)),
        call(&format!(r#"{{"_meta":{m},"name":"drop_table","requestState":1}}"#)),
        call(&format!(r#"{{"_meta":{m},"name":"drop_table","arguments":null}}"#)),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list","params":{"name":"drop_table"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"drop_table"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"drop_table"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"docs://secret","uri":"docs://open"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"docs:\/\/secret"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"secret","arguments":null}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"s\u0065cret"}}"#.to_owned(),
        format!("\u{feff}{}", call(r#"{"name":"drop_table"}"#)),
        format!("[{}]", call(r#"{"name":"drop_table"}"#)),
        r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"drop_table"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"drop_table"}}"#.to_owned(),
    ]
}

/// Sends `body` in every way a client could: with 2026 headers, as a 2025 client with
/// and without a session, with a lying `Mcp-Method`/`Mcp-Name`.
async fn every_way(
    addr: std::net::SocketAddr,
    token: &str,
    session: &str,
    body: &str,
) -> Vec<Reply> {
    let mut out = Vec::new();
    let v: Option<Value> = serde_json::from_str(body).ok();
    let method = v
        .as_ref()
        .and_then(|v| v["method"].as_str())
        .filter(|m| http::HeaderValue::from_str(m).is_ok())
        .unwrap_or("tools/call");
    let mut modern = headers(token, None, Some("2026-07-28"));
    modern.push(("mcp-method".to_owned(), method.to_owned()));
    modern.push(("mcp-name".to_owned(), "open".to_owned()));
    out.push(send(addr, "POST", &modern, body).await);
    out.push(send(addr, "POST", &headers(token, None, None), body).await);
    let legacy = headers(token, Some(session), Some("2025-11-25"));
    out.push(send(addr, "POST", &legacy, body).await);
    out.push(send(addr, "POST", &headers(token, Some(session), None), body).await);
    out
}

#[tokio::test]
async fn a_base_token_runs_no_protected_target_in_any_shape() {
    let (s, runs) = protected_server().await;
    let session = open_session(s.addr, "read").await;
    let mut refused = 0;
    for b in shapes().into_iter().chain(hostile()) {
        for r in every_way(s.addr, "read", &session, &b).await {
            assert_eq!(
                runs.protected(),
                [0, 0, 0],
                "ran a protected target: {b}\n→ {} {}",
                r.status,
                r.body
            );
            if r.status == StatusCode::FORBIDDEN {
                let www = r.headers["www-authenticate"].to_str().unwrap();
                assert!(www.contains("insufficient_scope"), "{www}");
                refused += 1;
            }
        }
    }
    assert!(
        refused > 0,
        "nothing was refused: the test does not reach the check"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn each_scope_rule_holds_on_both_eras() {
    let (s, runs) = protected_server().await;
    let sessions = [
        open_session(s.addr, "read").await,
        open_session(s.addr, "read+admin+docs").await,
    ];
    let progress = json!({"progressToken": 1});
    for (method, params) in protected_calls() {
        // 2026-07-28, 2025 in a session with and without _meta, 2025 without a session.
        let modern = body(1, method, &params, Some(&meta(json!({}))), &[]);
        let legacy_meta = body(2, method, &params, Some(&progress), &[]);
        let legacy_bare = body(3, method, &params, None, &[]);
        let name = params["name"].as_str().or(params["uri"].as_str()).unwrap();
        for (token, session, allowed) in [
            ("read", &sessions[0], false),
            ("read+admin+docs", &sessions[1], true),
        ] {
            let mut modern_h = headers(token, None, Some("2026-07-28"));
            modern_h.push(("mcp-method".to_owned(), method.to_owned()));
            modern_h.push(("mcp-name".to_owned(), name.to_owned()));
            let replies = [
                send(s.addr, "POST", &modern_h, &modern).await,
                send(
                    s.addr,
                    "POST",
                    &headers(token, Some(session), Some("2025-11-25")),
                    &legacy_meta,
                )
                .await,
                send(
                    s.addr,
                    "POST",
                    &headers(token, Some(session), Some("2025-11-25")),
                    &legacy_bare,
                )
                .await,
                send(s.addr, "POST", &headers(token, None, None), &legacy_meta).await,
                send(s.addr, "POST", &headers(token, None, None), &legacy_bare).await,
            ];
            for (i, r) in replies.iter().enumerate() {
                let want = if allowed {
                    StatusCode::OK
                } else {
                    StatusCode::FORBIDDEN
                };
                assert_eq!(r.status, want, "{method} shape {i} as {token}: {}", r.body);
                if allowed {
                    assert!(
                        r.body.contains("secret") || r.body.contains("dropped"),
                        "{method} shape {i}: {}",
                        r.body
                    );
                }
            }
        }
    }
    // Every allowed call ran once per shape (5 shapes), none of the refused ones.
    assert_eq!(runs.protected(), [5, 5, 5]);
    s.shutdown().await;
}

/// Rewrites a corpus body so that it names protected targets wherever it names one.
fn retarget(v: &mut Value) {
    let prompt = v["method"] == "prompts/get";
    let Some(params) = v.get_mut("params").and_then(Value::as_object_mut) else {
        return;
    };
    if params.contains_key("name") {
        let name = if prompt { "secret" } else { "drop_table" };
        params.insert("name".into(), json!(name));
    }
    if params.contains_key("uri") {
        params.insert("uri".into(), json!("docs://secret"));
    }
}

fn corpus() -> Vec<String> {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/jsonrpc_server");
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("the fuzz corpus")
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let bytes = std::fs::read(&path).unwrap();
        if let Ok(mut v) = serde_json::from_slice::<Value>(&bytes) {
            retarget(&mut v);
            out.push(v.to_string());
        }
        // The raw input too (malformed ones included), when it is text.
        if let Ok(text) = String::from_utf8(bytes) {
            out.push(text);
        }
    }
    out
}

#[tokio::test]
async fn differential_the_fuzz_corpus_never_runs_a_target_the_token_may_not() {
    let (s, runs) = protected_server().await;
    let session = open_session(s.addr, "read").await;
    let bodies = corpus();
    assert!(bodies.len() > 500, "the corpus is there: {}", bodies.len());
    for b in &bodies {
        for r in every_way(s.addr, "read", &session, b).await {
            assert_eq!(
                runs.protected(),
                [0, 0, 0],
                "ran a protected target: {b}\n→ {} {}",
                r.status,
                r.body
            );
        }
    }
    // The same bodies with the admin scope (not docs): only drop_table and the prompt may run,
    // and something does run (the bodies reach the handlers).
    let admin_session = open_session(s.addr, "read+admin").await;
    for b in &bodies {
        for _ in every_way(s.addr, "read+admin", &admin_session, b).await {
            assert_eq!(
                runs.protected()[2],
                0,
                "read docs://secret without the docs scope: {b}"
            );
        }
    }
    let [dropped, prompted, _] = runs.protected();
    assert!(
        dropped > 0 && prompted > 0,
        "the corpus reached the handlers: {dropped} {prompted}"
    );
    s.shutdown().await;
}
