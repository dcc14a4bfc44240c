//! Fair shares across a fleet: two replicas sharing a real Redis. One client filling its
//! share of 2025 sessions, tasks or stored states is refused on every replica while
//! another client goes on; a session flooding the bus with answers nobody waits for does
//! not cost another session its cross-replica answer.

#![allow(missing_docs)]

#[path = "support/redis_server.rs"]
mod support;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use sterna::server::http::{HttpConfig, HttpServer, McpService, SessionConfig};
use sterna::server::legacy::LegacyLimits;
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::state::StoreStates;
use sterna::server::tasks::TaskSupport;
use sterna::server::{Context, NoArgs, Principal, RequestEnv, Tool};
use sterna::server::{HandlerError, Server};
use sterna::types::jsonrpc::RequestId;
use sterna_redis::{Redis, RedisBus};
use support::RedisServer;
use tokio::net::{TcpListener, TcpSocket};

const FLOOD: [u8; 4] = [127, 0, 0, 2];
const CALM: [u8; 4] = [127, 0, 0, 3];

#[derive(Deserialize, JsonSchema)]
struct Pick {
    region: String,
}

fn server(redis: &Redis, keys: &str) -> Server {
    let limits = LegacyLimits {
        leg_timeout: Duration::from_secs(8),
        ..LegacyLimits::default()
    };
    Server::builder("fleet", "1")
        .state_keys(StateKeys::from_base64_list(keys).unwrap())
        .task_store(Arc::new(redis.task_store()))
        .state_store(Arc::new(redis.state_store()), StoreStates::Always)
        .legacy_limits(limits)
        .tool(
            Tool::new("pick")
                .description("asks")
                .ask(|_: &NoArgs| form::<Pick>("Region?"))
                .run(|_c: Context, _: NoArgs, p: Elicitation<Pick>| async move {
                    Ok::<_, HandlerError>(format!("picked {}", p.required()?.region))
                }),
        )
        .tool(
            Tool::new("later")
                .task(TaskSupport::Required)
                .handler(|_: Context, _: NoArgs| async { "done" }),
        )
        .build()
        .unwrap()
}

/// A replica served by sterna's own `HttpServer` (so clients are told apart by address).
async fn replica(redis: &Redis, keys: &str) -> (SocketAddr, Arc<RedisBus>) {
    let server = server(redis, keys);
    let bus = RedisBus::new(redis);
    let sessions = SessionConfig::new()
        .store(Arc::new(redis.session_store()))
        .bus(bus.clone());
    let service = McpService::new(server.clone(), HttpConfig::default().sessions(sessions));
    bus.attach(&server, Some(service.clone()));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let http = HttpServer::from_service(service);
    tokio::spawn(http.serve_with_shutdown(listener, std::future::pending()));
    (addr, bus)
}

#[derive(Debug)]
struct Reply {
    status: u16,
    session: Option<String>,
    body: hyper::body::Incoming,
}

impl Reply {
    async fn json(self) -> Value {
        let bytes = self.body.collect().await.unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }
}

/// A 2025 POST (or DELETE) from `from`, a loopback address of the client's own.
async fn send(
    from: [u8; 4],
    addr: SocketAddr,
    method: &str,
    session: Option<&str>,
    body: Value,
) -> Reply {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(IpAddr::from(from), 0)).unwrap();
    let tcp = socket.connect(addr).await.unwrap();
    let (mut tx, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = hyper::Request::builder()
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
    let req = req.body(Full::new(Bytes::from(body.to_string()))).unwrap();
    let resp = tokio::time::timeout(Duration::from_secs(10), tx.send_request(req))
        .await
        .expect("an answer within 10 s")
        .unwrap();
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
            let data = event.lines().find_map(|l| l.strip_prefix("data: "));
            if let Some(d) = data.filter(|d| !d.is_empty()) {
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

async fn open(from: [u8; 4], addr: SocketAddr) -> Result<String, Reply> {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "fleet-quota", "version": "1"}}});
    let r = send(from, addr, "POST", None, init).await;
    match (r.status, r.session.clone()) {
        (200, Some(s)) => {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            assert_eq!(send(from, addr, "POST", Some(&s), note).await.status, 202);
            Ok(s)
        }
        _ => Err(r),
    }
}

fn assert_share(e: &Value) {
    assert_eq!(e["code"], -32603, "{e}");
    assert_eq!(e["data"]["limit"], "per_principal", "{e}");
}

#[tokio::test]
async fn sessions_are_shared_fairly_across_replicas() {
    let redis_server = RedisServer::start_with(&[]);
    let redis = Redis::connect(&redis_server.url).await.unwrap();
    let keys = StateKeys::generate_base64();
    let ((a, _), (b, _)) = (replica(&redis, &keys).await, replica(&redis, &keys).await);
    let mut held = Vec::new();
    for i in 0..100 {
        let at = if i % 2 == 0 { a } else { b };
        held.push(open(FLOOD, at).await.expect("within the share"));
    }
    for at in [a, b] {
        let refused = open(FLOOD, at)
            .await
            .expect_err("over the share, everywhere");
        assert_eq!(refused.status, 429);
        assert_share(&refused.json().await["error"]);
    }
    let calm = open(CALM, b).await.expect("another client's share");
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let r = send(CALM, a, "POST", Some(&calm), ping).await;
    assert!(r.json().await["result"].is_object());
    // A session ended on one replica frees the share on the other.
    assert_eq!(
        send(FLOOD, a, "DELETE", Some(&held[1]), json!(null))
            .await
            .status,
        200
    );
    open(FLOOD, b).await.expect("a slot again");
}

async fn call(srv: &Server, who: &str, tool: &str) -> Result<Value, Value> {
    let params = json!({"name": tool, "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    }});
    let raw = RawValue::from_string(params.to_string()).unwrap();
    let env = RequestEnv::new().principal(Principal::new(who));
    let r = srv
        .handle(RequestId::Number(1), "tools/call", Some(&raw), env)
        .await
        .unwrap();
    match r.body {
        Ok(v) => Ok(serde_json::from_str(v.get()).unwrap()),
        Err(e) => Err(serde_json::to_value(&e).unwrap()),
    }
}

#[tokio::test]
async fn tasks_and_stored_states_are_shared_fairly_across_replicas() {
    let redis_server = RedisServer::start_with(&[]);
    let redis = Redis::connect(&redis_server.url).await.unwrap();
    let keys = StateKeys::generate_base64();
    let replicas = [server(&redis, &keys), server(&redis, &keys)];
    for i in 0..100 {
        let t = call(&replicas[i % 2], "flood", "later").await.unwrap();
        assert_eq!(t["resultType"], "task", "{t}");
    }
    for r in &replicas {
        assert_share(&call(r, "flood", "later").await.unwrap_err());
        let t = call(r, "calm", "later").await.unwrap();
        assert_eq!(t["resultType"], "task", "{t}");
    }
    for i in 0..1000 {
        let r = call(&replicas[i % 2], "flood", "pick").await.unwrap();
        assert_eq!(r["resultType"], "input_required", "{r}");
    }
    for r in &replicas {
        assert_share(&call(r, "flood", "pick").await.unwrap_err());
        let first = call(r, "calm", "pick").await.unwrap();
        assert_eq!(first["resultType"], "input_required", "{first}");
    }
}

#[tokio::test]
async fn an_answer_crosses_replicas_while_another_session_floods_the_bus() {
    // A subscriber that falls 64 KiB behind is disconnected, as in the audit.
    let limit = ["--client-output-buffer-limit", "pubsub 64kb 32kb 1"];
    let redis_server = RedisServer::start_with(&limit);
    let redis = Redis::connect(&redis_server.url).await.unwrap();
    let keys = StateKeys::generate_base64();
    let ((a, _), (b, _)) = (replica(&redis, &keys).await, replica(&redis, &keys).await);
    tokio::time::sleep(Duration::from_millis(300)).await; // both subscribed
    let flooder = open(FLOOD, b).await.unwrap();
    let sent = Arc::new(AtomicUsize::new(0));
    let relayed = Arc::new(AtomicUsize::new(0));
    let stop = flag();
    let mut floods = Vec::new();
    for worker in 0..4 {
        let (flooder, sent, relayed, stop) =
            (flooder.clone(), sent.clone(), relayed.clone(), stop.clone());
        floods.push(tokio::spawn(async move {
            let blob = "z".repeat(100 * 1024);
            for n in 0..500 {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let id = format!("sterna-deadbeef-{worker}-{n}");
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"blob": blob}});
                let r = send(FLOOD, b, "POST", Some(&flooder), answer).await;
                if r.status == 202 {
                    relayed.fetch_add(1, Ordering::SeqCst);
                }
                sent.fetch_add(1, Ordering::SeqCst);
            }
        }));
    }
    while sent.load(Ordering::SeqCst) < 40 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Meanwhile another client's call runs on A and its answer arrives at B.
    let done = answer_crosses(a, b).await;
    stop.store(true, Ordering::SeqCst);
    for f in floods {
        f.await.unwrap();
    }
    assert_eq!(
        done["result"]["content"][0]["text"], "picked eu",
        "the answer crossed replicas during the flood: {done}"
    );
    assert_eq!(
        relayed.load(Ordering::SeqCst),
        0,
        "no answer to an unknown push was accepted for relaying"
    );
}

/// A legacy call on `a` whose answer is posted to `b`: completed through the bus.
async fn answer_crosses(a: SocketAddr, b: SocketAddr) -> Value {
    let session = open(CALM, a).await.unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "pick", "arguments": {}}});
    let mut stream = send(CALM, a, "POST", Some(&session), call).await;
    let mut buf = String::new();
    let push = next_message(&mut stream.body, &mut buf).await;
    assert_eq!(push["method"], "elicitation/create");
    let answer = json!({"jsonrpc": "2.0", "id": push["id"], "result": {"action": "accept", "content": {"region": "eu"}}});
    assert_eq!(
        send(CALM, b, "POST", Some(&session), answer).await.status,
        202
    );
    next_message(&mut stream.body, &mut buf).await
}

#[tokio::test]
async fn a_dropped_subscription_is_noticed_and_renewed() {
    let redis_server = RedisServer::start_with(&[]);
    let redis = Redis::connect(&redis_server.url).await.unwrap();
    let keys = StateKeys::generate_base64();
    let ((a, bus_a), (b, bus_b)) = (replica(&redis, &keys).await, replica(&redis, &keys).await);
    tokio::time::sleep(Duration::from_millis(300)).await; // both subscribed
    assert_eq!((bus_a.resubscriptions(), bus_b.resubscriptions()), (0, 0));
    // Redis closes every subscriber (as it does past the pub/sub output buffer limit).
    let killed: i64 = match &redis_server.cluster {
        // On the bus channel's shard (the subscribers are there).
        Some(cluster) => support::cluster::cli(
            cluster.owner("sterna:bus:all"),
            &["client", "kill", "type", "pubsub"],
        )
        .trim()
        .parse()
        .unwrap(),
        None => {
            let client = redis::Client::open(redis_server.url.as_str()).unwrap();
            let mut conn = client.get_multiplexed_async_connection().await.unwrap();
            redis::cmd("CLIENT")
                .arg("KILL")
                .arg("TYPE")
                .arg("pubsub")
                .query_async(&mut conn)
                .await
                .unwrap()
        }
    };
    assert_eq!(killed, 2);
    let mut renewed = false;
    for _ in 0..200 {
        if bus_a.resubscriptions() >= 1 && bus_b.resubscriptions() >= 1 {
            renewed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(renewed, "both replicas noticed and subscribed again");
    let done = answer_crosses(a, b).await;
    assert_eq!(done["result"]["content"][0]["text"], "picked eu", "{done}");
}

fn flag() -> Arc<std::sync::atomic::AtomicBool> {
    Arc::new(std::sync::atomic::AtomicBool::new(false))
}

fn record() -> sterna::server::legacy::SessionRecord {
    serde_json::from_value(json!({
        "version": "2025-11-25", "capabilities": {}, "client": {"name": "c", "version": "1"},
        "initialized": false, "log_level": null, "subscriptions": [], "principal": null
    }))
    .unwrap()
}

#[tokio::test]
async fn a_session_in_use_keeps_its_share_and_an_ended_one_gives_it_back() {
    use sterna::server::QuotaKey;
    use sterna::server::http::{SessionError, SessionStore};
    let redis_server = RedisServer::start_with(&[]);
    let redis = Redis::connect(&redis_server.url).await.unwrap();
    let store = redis.session_store().per_principal(1);
    let me = QuotaKey::of(&Principal::new("me"));
    let idle = Duration::from_millis(1500);
    store.create("s1", &me, record(), idle).await.unwrap();
    // Used again before it expires: its share moves with it.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(store.touch("s1", &me, idle).await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let r = store.create("s2", &me, record(), idle).await;
    assert!(
        matches!(r, Err(SessionError::QuotaExceeded { limit: 1 })),
        "s1 lives on, and so does its share: {r:?}"
    );
    // Another principal's use of the id moves nothing of ours.
    let other = QuotaKey::of(&Principal::new("other"));
    store.create("o1", &other, record(), idle).await.unwrap();
    assert!(store.remove("s1", &me).await.unwrap());
    store.create("s2", &me, record(), idle).await.unwrap();
    // Unused, a session expires and its share with it.
    tokio::time::sleep(Duration::from_millis(1700)).await;
    store.create("s3", &me, record(), idle).await.unwrap();
}

#[tokio::test]
async fn what_a_session_relays_to_the_fleet_is_bounded_in_size_and_rate() {
    let redis_server = RedisServer::start_with(&[]);
    let redis = Redis::connect(&redis_server.url).await.unwrap();
    let keys = StateKeys::generate_base64();
    let (b, _) = replica(&redis, &keys).await;
    let session = open(FLOOD, b).await.unwrap();
    let answer = |n: usize, blob: &str| {
        let id = format!("sterna-deadbeef-{n}");
        json!({"jsonrpc": "2.0", "id": id, "result": {"blob": blob}})
    };
    // Larger than a replica relays (max_published, 1 MiB by default): 413, naming the limit.
    let big = "z".repeat(1024 * 1024 + 1);
    let r = send(FLOOD, b, "POST", Some(&session), answer(0, &big)).await;
    assert_eq!(r.status, 413);
    let e = r.json().await;
    assert_eq!(e["error"]["data"]["limit"], "max_published", "{e}");
    // Answers nobody waits for: 400 while the session's budget lasts (16 a second by
    // default), then 429 naming publish_rate.
    let mut statuses = Vec::new();
    let mut refusal = None;
    for n in 1..=40 {
        let r = send(FLOOD, b, "POST", Some(&session), answer(n, "small")).await;
        statuses.push(r.status);
        if r.status == 429 && refusal.is_none() {
            refusal = Some(r.json().await);
        }
    }
    assert_eq!(&statuses[..10], &[400; 10], "{statuses:?}");
    let e = refusal.unwrap_or_else(|| panic!("no 429 in {statuses:?}"));
    assert_eq!(e["error"]["data"]["limit"], "publish_rate", "{e}");
    // Another session of the same replica is not slowed down by this one's budget.
    let calm = open(CALM, b).await.unwrap();
    let r = send(CALM, b, "POST", Some(&calm), answer(99, "small")).await;
    assert_eq!(
        r.status, 400,
        "another session's unknown answer: its own budget"
    );
}
