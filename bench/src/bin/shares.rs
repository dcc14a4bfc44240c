//! Fair shares, measured over real connections on the loopback (two anonymous clients
//! told apart by address: 127.0.0.2 floods, 127.0.0.3 works).
//!
//! ```text
//! shares rss      a server in a child process; its RSS (VmRSS) before, after 40 and
//!                 after 80 `initialize`s carrying 3.9 MB of capabilities each
//! shares flood    127.0.0.2 floods 2025 sessions, tasks and stored states (stores of
//!                 2,000 sessions, 2,000 tasks and 5,000 states, so the flood fills them
//!                 where nothing bounds one client); once its attempts exceed those sizes,
//!                 127.0.0.3 runs 100 MRTR operations (stored state), opens a session and
//!                 creates a task while the flood goes on. Prints every count.
//! ```

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use sterna::server::http::{HttpConfig, HttpServer, MemorySessionStore, SessionConfig};
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::state::{MemoryStateStore, StoreStates};
use sterna::server::tasks::{MemoryTaskStore, TaskSupport};
use sterna::server::{Context, NoArgs, Tool};
use sterna::server::{HandlerError, Server};
use tokio::net::{TcpListener, TcpSocket};

const FLOOD: [u8; 4] = [127, 0, 0, 2];
const CALM: [u8; 4] = [127, 0, 0, 3];

#[derive(Deserialize, JsonSchema)]
struct Sure {
    ok: bool,
}

fn server() -> Server {
    Server::builder("shares", "1")
        .state_keys(StateKeys::ephemeral())
        .state_store(
            Arc::new(MemoryStateStore::with_limits(5_000, 64 << 20)),
            StoreStates::Always,
        )
        .task_store(Arc::new(MemoryTaskStore::with_capacity(2_000)))
        .tool(
            Tool::new("later")
                .description("a task")
                .task(TaskSupport::Required)
                .handler(|_: Context, _: NoArgs| async { "done" }),
        )
        .tool(
            Tool::new("confirm")
                .description("asks once")
                .ask(|_: &NoArgs| form::<Sure>("Sure?").key("ok"))
                .run(|_: Context, _: NoArgs, s: Elicitation<Sure>| async move {
                    Ok::<_, HandlerError>(format!("ok={}", s.required()?.ok))
                }),
        )
        .build()
        .expect("valid")
}

async fn serve(listener: TcpListener) {
    let sessions = SessionConfig::new().store(Arc::new(MemorySessionStore::with_capacity(2_000)));
    let http = HttpServer::new(server()).config(HttpConfig::new().sessions(sessions));
    let _ = http
        .serve_with_shutdown(listener, std::future::pending())
        .await;
}

/// One POST from `from`: the status, the session id given, the body.
async fn post(
    from: [u8; 4],
    addr: SocketAddr,
    headers: &[(&str, &str)],
    body: &Value,
) -> Option<(u16, Option<String>, Value)> {
    let socket = TcpSocket::new_v4().ok()?;
    socket.bind(SocketAddr::new(IpAddr::from(from), 0)).ok()?;
    let tcp = socket.connect(addr).await.ok()?;
    let (mut tx, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .ok()?;
    tokio::spawn(conn);
    let mut req = http::Request::post(format!("http://{addr}/mcp"))
        .header("host", format!("127.0.0.1:{}", addr.port()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Full::new(Bytes::from(body.to_string()))).ok()?;
    let resp = tokio::time::timeout(Duration::from_secs(30), tx.send_request(req))
        .await
        .ok()?
        .ok()?;
    let status = resp.status().as_u16();
    let session = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = resp.into_body().collect().await.ok()?.to_bytes();
    Some((
        status,
        session,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    ))
}

fn initialize(caps: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": caps,
        "clientInfo": {"name": "shares", "version": "1"}}})
}

/// A 2026-07-28 `tools/call` (declaring the tasks extension), its result or error.
async fn call(from: [u8; 4], addr: SocketAddr, tool: &str, extra: Value) -> Option<Value> {
    let mut params = json!({"name": tool, "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}}});
    if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let h = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", tool),
    ];
    post(from, addr, &h, &body).await.map(|(_, _, v)| v)
}

/// One MRTR operation: the first leg (a question and a stored state), then the retry.
async fn mrtr(from: [u8; 4], addr: SocketAddr) -> bool {
    let Some(first) = call(from, addr, "confirm", json!({})).await else {
        return false;
    };
    let Some(state) = first["result"]["requestState"].as_str() else {
        return false;
    };
    let retry = json!({"requestState": state,
        "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}}});
    let done = call(from, addr, "confirm", retry).await;
    done.is_some_and(|d| d["result"]["content"][0]["text"] == "ok=true")
}

#[derive(Default)]
struct Tally {
    ok: AtomicUsize,
    refused: AtomicUsize,
}

impl Tally {
    fn count(&self, ok: bool) {
        let c = if ok { &self.ok } else { &self.refused };
        c.fetch_add(1, Ordering::Relaxed);
    }

    fn attempts(&self) -> usize {
        self.ok.load(Ordering::Relaxed) + self.refused.load(Ordering::Relaxed)
    }

    fn show(&self, what: &str) {
        let (ok, refused) = (
            self.ok.load(Ordering::Relaxed),
            self.refused.load(Ordering::Relaxed),
        );
        println!("  {what:<16} {ok:>6} accepted {refused:>6} refused");
    }
}

/// The flooder: `n` attempts of one kind, four at a time.
async fn flood(addr: SocketAddr, kind: &'static str, n: usize, tally: Arc<Tally>) {
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..4 {
        let (next, tally) = (next.clone(), tally.clone());
        workers.push(tokio::spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < n {
                let ok = match kind {
                    "session" => post(FLOOD, addr, &[], &initialize(json!({})))
                        .await
                        .is_some_and(|(s, id, _)| s == 200 && id.is_some()),
                    "task" => call(FLOOD, addr, "later", json!({}))
                        .await
                        .is_some_and(|v| v["result"]["resultType"] == "task"),
                    _ => call(FLOOD, addr, "confirm", json!({}))
                        .await
                        .is_some_and(|v| v["result"]["resultType"] == "input_required"),
                };
                tally.count(ok);
            }
        }));
    }
    for w in workers {
        let _ = w.await;
    }
}

/// The other client, once the flood is past the stores' sizes: 100 MRTR operations, a
/// session, a task.
async fn calm(addr: SocketAddr) -> (Tally, bool, bool) {
    let ops = Tally::default();
    for _ in 0..100 {
        ops.count(mrtr(CALM, addr).await);
    }
    let session = post(CALM, addr, &[], &initialize(json!({}))).await;
    let session_ok = session.is_some_and(|(s, id, _)| s == 200 && id.is_some());
    let task = call(CALM, addr, "later", json!({})).await;
    let task_ok = task.is_some_and(|v| v["result"]["resultType"] == "task");
    (ops, session_ok, task_ok)
}

async fn flood_run() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(serve(listener));
    let [sessions, tasks, states] = [(); 3].map(|()| Arc::new(Tally::default()));
    let started = std::time::Instant::now();
    let floods = [
        tokio::spawn(flood(addr, "session", 3_000, sessions.clone())),
        tokio::spawn(flood(addr, "task", 3_000, tasks.clone())),
        tokio::spawn(flood(addr, "state", 7_000, states.clone())),
    ];
    while sessions.attempts() < 2_100 || tasks.attempts() < 2_100 || states.attempts() < 5_100 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (ops, session_ok, task_ok) = calm(addr).await;
    let during = (sessions.attempts(), tasks.attempts(), states.attempts());
    for f in floods {
        let _ = f.await;
    }
    println!(
        "flood from 127.0.0.2 ({:.1} s):",
        started.elapsed().as_secs_f64()
    );
    sessions.show("2025 sessions");
    tasks.show("tasks");
    states.show("stored states");
    println!(
        "  (attempts while the other client ran: {} sessions, {} tasks, {} states)",
        during.0, during.1, during.2
    );
    let (ok, failed) = (
        ops.ok.load(Ordering::Relaxed),
        ops.refused.load(Ordering::Relaxed),
    );
    println!("127.0.0.3 during the flood:");
    println!("  MRTR operations  {ok:>6} completed {failed:>6} failed");
    println!(
        "  2025 session     {}",
        if session_ok { "opened" } else { "REFUSED" }
    );
    println!(
        "  task             {}",
        if task_ok { "created" } else { "REFUSED" }
    );
}

/// VmRSS of `pid` in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

async fn rss_run() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let exe = std::env::current_exe().expect("own path");
    let mut child = std::process::Command::new(exe)
        .args(["serve", &port.to_string()])
        .spawn()
        .expect("the server process");
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    while tokio::net::TcpStream::connect(addr).await.is_err() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let probe = post(CALM, addr, &[], &initialize(json!({}))).await;
    assert!(
        probe.is_some_and(|(s, _, _)| s == 200),
        "the server answers"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rss_kib(child.id());
    println!("server VmRSS before: {before} KiB");
    let blob = "x".repeat(3_900_000);
    for round in 1..=2 {
        let (mut opened, mut refused) = (0, 0);
        for _ in 0..40 {
            let caps = json!({"experimental": {"blob": {"data": blob}}});
            match post(FLOOD, addr, &[], &initialize(caps)).await {
                Some((200, Some(_), _)) => opened += 1,
                _ => refused += 1,
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let after = rss_kib(child.id());
        println!(
            "after {} initialize of 3.9 MB ({opened} opened, {refused} refused): {after} KiB ({:+} KiB)",
            round * 40,
            after as i64 - before as i64
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    match args.get(1).map(String::as_str) {
        Some("serve") => {
            let port: u16 = args[2].parse().expect("a port");
            rt.block_on(async {
                let l = TcpListener::bind(("127.0.0.1", port)).await.expect("bind");
                serve(l).await;
            });
        }
        Some("rss") => rt.block_on(rss_run()),
        Some("flood") => rt.block_on(flood_run()),
        _ => eprintln!("usage: shares rss | shares flood"),
    }
}
