//! Two replicas sharing a real Redis: a change made on one reaches the other's listeners,
//! and a 2025-11-25 client's answer posted to one replica completes the request running
//! on the other.

#![allow(missing_docs)]

#[path = "redis.rs"]
#[allow(dead_code)]
mod harness;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use sterna::server::http::{HttpConfig, McpService, SessionConfig};
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::{Context, NoArgs, Tool};
use sterna::server::{HandlerError, Server};
use sterna_redis::{Redis, RedisBus};
use tokio::net::{TcpListener, TcpStream};

#[derive(Deserialize, JsonSchema)]
struct Pick {
    region: String,
}

fn server(keys: &str) -> Server {
    Server::builder("fleet", "1")
        .state_keys(StateKeys::from_base64_list(keys).unwrap())
        .tool(
            Tool::new("pick")
                .description("asks")
                .ask(|_: &NoArgs| form::<Pick>("Region?"))
                .run(|_c: Context, _: NoArgs, p: Elicitation<Pick>| async move {
                    Ok::<_, HandlerError>(format!("picked {}", p.required()?.region))
                }),
        )
        .tool(
            Tool::new("announce")
                .description("changes the tool list")
                .handler(|ctx: Context, _: NoArgs| async move {
                    ctx.changes().tools_list_changed();
                    "announced"
                }),
        )
        .build()
        .unwrap()
}

async fn replica(redis: &Redis, keys: &str) -> SocketAddr {
    let server = server(keys);
    let bus = RedisBus::new(redis);
    let sessions = SessionConfig::new()
        .store(Arc::new(redis.session_store()))
        .bus(bus.clone());
    let config = HttpConfig::default().sessions(sessions);
    let service = McpService::new(server.clone(), config);
    // The bus hands events to the very service that serves the requests.
    bus.attach(&server, Some(service.clone()));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().route_service("/mcp", service);
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

struct Reply {
    status: u16,
    session: Option<String>,
    body: hyper::body::Incoming,
}

async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: Value) -> Reply {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (mut tx, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = hyper::Request::post(format!("http://{addr}/mcp"))
        .header("host", format!("127.0.0.1:{}", addr.port()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Full::new(Bytes::from(body.to_string()))).unwrap();
    let resp = tx.send_request(req).await.unwrap();
    let session = resp
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    Reply {
        status: resp.status().as_u16(),
        session,
        body: resp.into_body(),
    }
}

/// The next `data:` JSON message of an SSE body.
async fn next_message(body: &mut hyper::body::Incoming, buf: &mut String) -> Value {
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
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .expect("a message within 10 s")
            .expect("the stream is open")
            .unwrap();
        if let Ok(d) = frame.into_data() {
            buf.push_str(&String::from_utf8_lossy(&d));
        }
    }
}

#[tokio::test]
async fn a_legacy_answer_posted_to_another_replica_completes_the_request() {
    let redis_server = harness::Server::start();
    let redis = Redis::connect(&redis_server.url).await.unwrap();
    let keys = StateKeys::generate_base64();
    let (a, b) = (replica(&redis, &keys).await, replica(&redis, &keys).await);
    tokio::time::sleep(Duration::from_millis(300)).await; // both subscribed
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "fleet-test", "version": "1"}}});
    let session = post(a, &[], init).await.session.expect("a session id");
    let h = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    // initialized, sent to B: the record is shared.
    let r = post(
        b,
        &h,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(r.status, 202);
    // The call runs on A; its question arrives on A's stream.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "pick", "arguments": {}}});
    let mut stream = post(a, &h, call).await;
    let mut buf = String::new();
    let push = next_message(&mut stream.body, &mut buf).await;
    assert_eq!(push["method"], "elicitation/create");
    // The answer goes to B, which hands it to A through Redis.
    let answer = json!({"jsonrpc": "2.0", "id": push["id"], "result": {"action": "accept", "content": {"region": "eu"}}});
    assert_eq!(post(b, &h, answer).await.status, 202);
    let done = next_message(&mut stream.body, &mut buf).await;
    assert_eq!(done["result"]["content"][0]["text"], "picked eu");
    // DELETE at B ends the session everywhere.
    let tcp = TcpStream::connect(b).await.unwrap();
    let (mut tx, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    let del = hyper::Request::delete(format!("http://{b}/mcp"))
        .header("host", format!("127.0.0.1:{}", b.port()))
        .header("mcp-session-id", &session)
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert_eq!(tx.send_request(del).await.unwrap().status(), 200);
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    assert_eq!(post(a, &h, ping).await.status, 404);
}

#[tokio::test]
async fn a_change_on_one_replica_reaches_listeners_on_the_other() {
    let redis_server = harness::Server::start();
    let redis = Redis::connect(&redis_server.url).await.unwrap();
    let keys = StateKeys::generate_base64();
    let (a, b) = (replica(&redis, &keys).await, replica(&redis, &keys).await);
    tokio::time::sleep(Duration::from_millis(300)).await; // both subscribed
    assert!(
        change_crosses(a, b).await,
        "the change reached the other replica"
    );
}

/// Whether a tool list change made on `b` reaches a listener on `a` within 2 s.
async fn change_crosses(a: SocketAddr, b: SocketAddr) -> bool {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let modern = |method: &'static str, name: Option<&'static str>| {
        let mut h = vec![
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", method),
        ];
        if let Some(n) = name {
            h.push(("mcp-name", n));
        }
        h
    };
    let listen = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                        "params": {"notifications": {"toolsListChanged": true}, "_meta": meta}});
    let mut stream = post(a, &modern("subscriptions/listen", None), listen).await;
    let mut buf = String::new();
    let ack = next_message(&mut stream.body, &mut buf).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "announce", "arguments": {}, "_meta": meta}});
    let r = post(b, &modern("tools/call", Some("announce")), call).await;
    assert_eq!(r.status, 200);
    match tokio::time::timeout(
        Duration::from_secs(2),
        next_message(&mut stream.body, &mut buf),
    )
    .await
    {
        Ok(change) => {
            assert_eq!(change["method"], "notifications/tools/list_changed");
            true
        }
        Err(_) => false,
    }
}

/// Tries `change_crosses` for up to 15 s: after how many tries it did.
async fn crosses_again(a: SocketAddr, b: SocketAddr) -> Option<usize> {
    let started = std::time::Instant::now();
    let mut tries = 0;
    while started.elapsed() < Duration::from_secs(15) {
        tries += 1;
        if change_crosses(a, b).await {
            return Some(tries);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    None
}

/// On a cluster with replicas (always, whatever `STERNA_REDIS_CLUSTER` says): the bus's
/// sharded channel follows its slot when the slot's primary is killed (its replica
/// promoted) and when the slot moves to another primary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bus_follows_its_channel_through_a_failover_and_a_slot_move() {
    let mut cluster = harness::cluster::Cluster::start(1, &[]);
    let redis = Redis::connect(&cluster.url).await.unwrap();
    let keys = StateKeys::generate_base64();
    let (a, b) = (replica(&redis, &keys).await, replica(&redis, &keys).await);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(change_crosses(a, b).await, "before");

    let owner = cluster.owner("sterna:bus:all");
    cluster.kill(owner);
    let cluster = tokio::task::spawn_blocking(move || {
        cluster.wait_failover();
        cluster
    })
    .await
    .unwrap();
    let tries = crosses_again(a, b).await;
    println!(
        "bus: the channel's primary {owner} killed; changes cross again after {tries:?} tries"
    );
    assert!(tries.is_some(), "changes cross after the failover");

    let from = cluster.owner("sterna:bus:all");
    let to = *cluster.primaries().iter().find(|&&p| p != from).unwrap();
    let cluster = tokio::task::spawn_blocking(move || {
        cluster.move_slot_of("sterna:bus:all", to);
        cluster
    })
    .await
    .unwrap();
    assert_eq!(cluster.owner("sterna:bus:all"), to);
    let tries = crosses_again(a, b).await;
    println!(
        "bus: the channel's slot moved from {from} to {to}; changes cross again after {tries:?} tries"
    );
    assert!(tries.is_some(), "changes cross after the slot moved");
}
