//! What a working task costs while it waits, on tokio's paused clock (time advances only
//! when everything is idle, so "an hour" takes no time and counts are exact): it reads
//! its record rarely when the store cannot announce changes, and not at all when it can
//! (the in-process store); a cancel through another server sharing the store still
//! stops the run.

use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use sterna::server::Server;
use sterna::server::state::StateKeys;
use sterna::server::tasks::{MemoryTaskStore, StoredTask, TaskStore, TaskStoreError, TaskSupport};
use sterna::server::{Context, NoArgs, RequestEnv, Tool};
use sterna::types::jsonrpc::RequestId;

/// A store that counts reads and cannot announce changes (like one in another process).
#[derive(Debug, Default)]
struct Counting {
    inner: MemoryTaskStore,
    loads: AtomicUsize,
}

impl TaskStore for Counting {
    fn create(
        &self,
        id: &str,
        owner: &sterna::server::QuotaKey,
        bytes: Vec<u8>,
        keep: Duration,
    ) -> futures_util::future::BoxFuture<'_, Result<bool, TaskStoreError>> {
        self.inner.create(id, owner, bytes, keep)
    }

    fn load(
        &self,
        id: &str,
    ) -> futures_util::future::BoxFuture<'_, Result<Option<StoredTask>, TaskStoreError>> {
        self.loads.fetch_add(1, Ordering::SeqCst);
        self.inner.load(id)
    }

    fn swap(
        &self,
        id: &str,
        version: u64,
        bytes: Vec<u8>,
        keep: Duration,
    ) -> futures_util::future::BoxFuture<'_, Result<bool, TaskStoreError>> {
        self.inner.swap(id, version, bytes, keep)
    }
}

/// Runs of `wait` started and dropped.
#[derive(Debug, Default)]
struct Runs {
    started: AtomicUsize,
    dropped: AtomicUsize,
}

struct OnDrop(Arc<Runs>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

fn server(store: Arc<dyn TaskStore>, runs: &Arc<Runs>) -> Server {
    let runs = runs.clone();
    Server::builder("waiting", "1")
        .state_keys(StateKeys::new(&[[4u8; 32]]).unwrap())
        .task_store(store)
        .tool(Tool::new("wait").task(TaskSupport::Required).handler(
            move |_: Context, _: NoArgs| {
                runs.started.fetch_add(1, Ordering::SeqCst);
                let guard = OnDrop(runs.clone());
                async move {
                    std::future::pending::<()>().await;
                    drop(guard);
                    "never"
                }
            },
        ))
        .build()
        .unwrap()
}

async fn send(srv: &Server, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    });
    let raw = serde_json::value::to_raw_value(&params).unwrap();
    let r = srv
        .handle(RequestId::Number(1), method, Some(&raw), RequestEnv::new())
        .await
        .unwrap();
    serde_json::from_str(r.body.unwrap().get()).unwrap()
}

/// Creates a `wait` task on `srv` and lets its run start.
async fn started(srv: &Server, runs: &Runs) -> String {
    let before = runs.started.load(Ordering::SeqCst);
    let t = send(srv, "tools/call", json!({"name": "wait", "arguments": {}})).await;
    for _ in 0..100 {
        if runs.started.load(Ordering::SeqCst) > before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert_eq!(runs.started.load(Ordering::SeqCst), before + 1);
    t["taskId"].as_str().unwrap().to_owned()
}

async fn status(srv: &Server, id: &str) -> Value {
    send(srv, "tasks/get", json!({"taskId": id})).await["status"].clone()
}

#[tokio::test(start_paused = true)]
async fn an_idle_working_task_reads_its_record_rarely() {
    let store = Arc::new(Counting::default());
    let runs = Arc::new(Runs::default());
    let srv = server(store.clone(), &runs);
    let id = started(&srv, &runs).await;
    let before = store.loads.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(60)).await;
    let reads = store.loads.load(Ordering::SeqCst) - before;
    // Every 500 ms would be 120; backing off to a read every 5 s is at most 20.
    assert!(
        reads <= 20,
        "{reads} reads of the record in one idle minute"
    );
    assert_eq!(status(&srv, &id).await, "working");
}

#[tokio::test(start_paused = true)]
async fn a_cancel_through_another_server_stops_the_run_within_the_backoff() {
    let store = Arc::new(Counting::default());
    let runs = Arc::new(Runs::default());
    let (a, b) = (server(store.clone(), &runs), server(store.clone(), &runs));
    let id = started(&a, &runs).await;
    // A minute idle first: the run has backed off to its slowest reads.
    tokio::time::sleep(Duration::from_secs(60)).await;
    send(&b, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(status(&a, &id).await, "cancelled");
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(
        runs.dropped.load(Ordering::SeqCst),
        1,
        "the run on a stopped"
    );
}

#[tokio::test(start_paused = true)]
async fn with_the_memory_store_a_cancel_elsewhere_stops_the_run_at_once() {
    let store = Arc::new(MemoryTaskStore::default());
    let runs = Arc::new(Runs::default());
    let (a, b) = (server(store.clone(), &runs), server(store.clone(), &runs));
    let id = started(&a, &runs).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    send(&b, "tasks/cancel", json!({"taskId": id})).await;
    // The store announces the change: no read interval to wait out.
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(
        runs.dropped.load(Ordering::SeqCst),
        1,
        "the run on a stopped"
    );
}
