//! Tasks across a fleet: two replicas (two `Server`s sharing state keys and a real
//! Redis, each with its own connection). A task created on one is polled, answered,
//! cancelled and completed through the other.

#![allow(missing_docs)]

#[path = "redis.rs"]
#[allow(dead_code)]
mod harness;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::tasks::{TaskStore, TaskSupport};
use sterna::server::{Context, NoArgs, Principal, RequestEnv, Tool};
use sterna::server::{HandlerError, Server};
use sterna::types::jsonrpc::RequestId;
use sterna_redis::Redis;

const KEYS: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Color {
    color: String,
}

/// Side effects over the whole fleet, and which replica ran each body.
#[derive(Default)]
struct Effects {
    done: AtomicUsize,
    slow_started: AtomicUsize,
    slow_dropped: AtomicUsize,
}

struct OnDrop(Arc<Effects>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.slow_dropped.fetch_add(1, Ordering::SeqCst);
    }
}

async fn replica(url: &str, e: &Arc<Effects>) -> Server {
    let redis = Redis::connect(url).await.unwrap().with_prefix("fleet");
    let (wizard, slow) = (e.clone(), e.clone());
    Server::builder("fleet", "1")
        .state_keys(StateKeys::from_base64_list(KEYS).unwrap())
        .task_store(Arc::new(redis.task_store()))
        .tool(Tool::new("wizard").task(TaskSupport::Required).handler(
            move |ctx: Context, _: NoArgs| {
                let e = wizard.clone();
                async move {
                    let n = ctx.ask(form::<Name>("Name?").key("name")).await?;
                    let c = ctx.ask(form::<Color>("Colour?").key("color")).await?;
                    let (n, c) = (n.required()?, c.required()?);
                    e.done.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, HandlerError>(format!("{} likes {}", n.name, c.color))
                }
            },
        ))
        .tool(Tool::new("slow").task(TaskSupport::Required).handler(
            move |_: Context, _: NoArgs| {
                slow.slow_started.fetch_add(1, Ordering::SeqCst);
                let guard = OnDrop(slow.clone());
                async move {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    std::mem::forget(guard);
                    "never"
                }
            },
        ))
        .build()
        .unwrap()
}

fn env() -> RequestEnv {
    RequestEnv::new().principal(Principal::new("alice"))
}

async fn send(
    srv: &Server,
    env: RequestEnv,
    method: &str,
    mut params: Value,
) -> Result<Value, i32> {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    });
    let raw = RawValue::from_string(params.to_string()).unwrap();
    let r = srv
        .handle(RequestId::Number(1), method, Some(&raw), env)
        .await
        .unwrap();
    r.body
        .map(|v| serde_json::from_str(v.get()).unwrap())
        .map_err(|e| e.code.0)
}

async fn wait(srv: &Server, id: &str, want: &str) -> Value {
    for _ in 0..2000 {
        let t = send(srv, env(), "tasks/get", json!({"taskId": id}))
            .await
            .unwrap();
        if t["status"] == want {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("task never reached {want}");
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[tokio::test]
async fn a_task_created_on_one_replica_is_answered_and_completed_through_the_other() {
    let redis = harness::Server::start();
    let e = Arc::new(Effects::default());
    let (a, b) = (replica(&redis.url, &e).await, replica(&redis.url, &e).await);
    let created = send(
        &a,
        env(),
        "tools/call",
        json!({"name": "wizard", "arguments": {}}),
    )
    .await
    .unwrap();
    let id = created["taskId"].as_str().unwrap().to_owned();
    // Strong consistency: the other replica reads it at once.
    assert!(
        send(&b, env(), "tasks/get", json!({"taskId": id}))
            .await
            .is_ok()
    );
    let t = wait(&b, &id, "input_required").await;
    assert_eq!(t["inputRequests"]["name"]["method"], "elicitation/create");
    // Answered through B: B runs the handler again with the stored answers.
    send(
        &b,
        env(),
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"name": accept(json!({"name": "Ada"}))}}),
    )
    .await
    .unwrap();
    let t = wait(&a, &id, "input_required").await;
    assert!(t["inputRequests"].get("color").is_some(), "{t}");
    // The last answer, sent to both replicas at once: one run, one side effect.
    let last = json!({"taskId": id, "inputResponses": {"color": accept(json!({"color": "teal"}))}});
    let (ra, rb) = tokio::join!(
        send(&a, env(), "tasks/update", last.clone()),
        send(&b, env(), "tasks/update", last)
    );
    assert!(ra.is_ok() && rb.is_ok());
    let t = wait(&b, &id, "completed").await;
    assert_eq!(t["result"]["content"][0]["text"], "Ada likes teal");
    assert_eq!(wait(&a, &id, "completed").await["result"], t["result"]);
    assert_eq!(e.done.load(Ordering::SeqCst), 1);
    // Another principal gets the same answer as an unknown id, on either replica.
    let bob = RequestEnv::new().principal(Principal::new("bob"));
    assert_eq!(
        send(&b, bob, "tasks/get", json!({"taskId": id}))
            .await
            .unwrap_err(),
        -32602
    );
    assert_eq!(
        send(&a, env(), "tasks/get", json!({"taskId": "x".repeat(24)}))
            .await
            .unwrap_err(),
        -32602
    );
}

#[tokio::test]
async fn a_cancel_through_one_replica_stops_the_run_on_the_other() {
    let redis = harness::Server::start();
    let e = Arc::new(Effects::default());
    let (a, b) = (replica(&redis.url, &e).await, replica(&redis.url, &e).await);
    let created = send(
        &a,
        env(),
        "tools/call",
        json!({"name": "slow", "arguments": {}}),
    )
    .await
    .unwrap();
    let id = created["taskId"].as_str().unwrap().to_owned();
    for _ in 0..1000 {
        if e.slow_started.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let ack = send(&b, env(), "tasks/cancel", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(ack["resultType"], "complete");
    assert_eq!(
        send(&a, env(), "tasks/get", json!({"taskId": id}))
            .await
            .unwrap()["status"],
        "cancelled"
    );
    // A's run sees the cancel in the store (it polls it) and drops the handler.
    for _ in 0..1000 {
        if e.slow_dropped.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(e.slow_dropped.load(Ordering::SeqCst), 1);
    assert_eq!(wait(&b, &id, "cancelled").await["status"], "cancelled");
}

#[tokio::test]
async fn the_store_swaps_by_version_and_expires() {
    let redis = harness::Server::start();
    let store = Redis::connect(&redis.url).await.unwrap().task_store();
    let keep = Duration::from_millis(300);
    let me = sterna::server::QuotaKey::of(&Principal::new("me"));
    assert!(
        store
            .create("t1", &me, b"one".to_vec(), keep)
            .await
            .unwrap()
    );
    assert!(
        !store
            .create("t1", &me, b"two".to_vec(), keep)
            .await
            .unwrap(),
        "ids are never reused"
    );
    assert!(store.swap("t1", 1, b"two".to_vec(), keep).await.unwrap());
    assert!(
        !store.swap("t1", 1, b"stale".to_vec(), keep).await.unwrap(),
        "a stale writer loses"
    );
    let s = store.load("t1").await.unwrap().unwrap();
    assert_eq!((s.version, s.bytes.as_slice()), (2, b"two".as_slice()));
    assert!(store.load("nope").await.unwrap().is_none());
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(store.load("t1").await.unwrap().is_none(), "expired");
    assert!(!store.swap("t1", 2, b"late".to_vec(), keep).await.unwrap());
}

#[tokio::test]
async fn records_in_redis_are_sealed_so_altered_or_swapped_ones_are_unknown() {
    let redis = harness::Server::start();
    let e = Arc::new(Effects::default());
    let a = replica(&redis.url, &e).await;
    let call = json!({"name": "wizard", "arguments": {}});
    let one = send(&a, env(), "tools/call", call.clone()).await.unwrap()["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let two = send(&a, env(), "tools/call", call).await.unwrap()["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut conn = harness::cluster::Raw::open(&redis.url).await;
    let (k1, k2) = (format!("fleet:task:{one}"), format!("fleet:task:{two}"));
    let raw: Vec<u8> = redis::cmd("HGET")
        .arg(&k1)
        .arg("d")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(
        !raw.windows(6).any(|w| w == b"wizard"),
        "the record is not readable in Redis"
    );
    // Task two's record moved under task one's id: refused.
    let moved: Vec<u8> = redis::cmd("HGET")
        .arg(&k2)
        .arg("d")
        .query_async(&mut conn)
        .await
        .unwrap();
    let _: () = redis::cmd("HSET")
        .arg(&k1)
        .arg("d")
        .arg(moved)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(
        send(&a, env(), "tasks/get", json!({"taskId": one}))
            .await
            .unwrap_err(),
        -32602
    );
    // One flipped byte: refused.
    let mut bad = raw.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    let _: () = redis::cmd("HSET")
        .arg(&k2)
        .arg("d")
        .arg(bad)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(
        send(&a, env(), "tasks/get", json!({"taskId": two}))
            .await
            .unwrap_err(),
        -32602
    );
}
