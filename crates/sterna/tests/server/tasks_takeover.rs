//! Task leases across two servers sharing one task store, the way two replicas share
//! Redis: server A runs in a runtime of its own, which the test shuts down mid-run (all
//! its tasks dropped at once, like a SIGKILL); server B's `tasks/get` takes the task
//! over once A's lease has lapsed — and not before, while A is alive and renewing.

use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use sterna::server::state::StateKeys;
use sterna::server::tasks::{MemoryTaskStore, TaskStore, TaskSupport, TaskTakeover};
use sterna::server::{Context, NoArgs, RequestEnv, Server, Tool};
use sterna::types::jsonrpc::RequestId;

const LEASE: Duration = Duration::from_millis(200);

/// Runs started and side effects done, per tool.
#[derive(Debug, Default)]
struct Count {
    started: AtomicUsize,
    effects: AtomicUsize,
}

/// A replica: its runs either never end (`stall`) or end at once, with the side effect.
fn replica(
    store: &Arc<MemoryTaskStore>,
    stall: bool,
    rebuild: &Arc<Count>,
    charge: &Arc<Count>,
) -> Server {
    let tool = |name: &str, takeover: TaskTakeover, count: &Arc<Count>| {
        let count = count.clone();
        Tool::new(name)
            .task(TaskSupport::Required)
            .task_takeover(takeover)
            .handler(move |_: Context, _: NoArgs| {
                let count = count.clone();
                async move {
                    count.started.fetch_add(1, Ordering::SeqCst);
                    if stall {
                        std::future::pending::<()>().await;
                    }
                    count.effects.fetch_add(1, Ordering::SeqCst);
                    "done"
                }
            })
    };
    Server::builder("takeover", "1")
        .state_keys(StateKeys::new(&[[7u8; 32]]).unwrap())
        .task_store(store.clone() as Arc<dyn TaskStore>)
        .task_lease(LEASE)
        .tool(tool("rebuild", TaskTakeover::Rerun, rebuild))
        .tool(tool("charge", TaskTakeover::Fail, charge))
        .build()
        .unwrap()
}

async fn send(srv: Server, method: &'static str, params: Value) -> Value {
    let mut params = params;
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

/// Creates a task of `tool` on A (in A's runtime) and waits for its run to start.
async fn start_on(a: &tokio::runtime::Runtime, srv: &Server, tool: &str, count: &Count) -> String {
    let call = json!({"name": tool, "arguments": {}});
    let created = a
        .spawn(send(srv.clone(), "tools/call", call))
        .await
        .unwrap();
    for _ in 0..500 {
        if count.started.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(count.started.load(Ordering::SeqCst), 1, "A runs {tool}");
    created["taskId"].as_str().unwrap().to_owned()
}

async fn get(srv: &Server, id: &str) -> Value {
    send(srv.clone(), "tasks/get", json!({"taskId": id})).await
}

/// Polls B until the task is no longer `working` (bounded: 10 s).
async fn settled(b: &Server, id: &str) -> Value {
    for _ in 0..500 {
        let t = get(b, id).await;
        if t["status"] != "working" {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {id} still working after 10 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_survives_its_replica_once_its_lease_lapses_and_only_then() {
    let store = Arc::new(MemoryTaskStore::default());
    let (rebuild_a, charge_a) = (Arc::new(Count::default()), Arc::new(Count::default()));
    let (rebuild_b, charge_b) = (Arc::new(Count::default()), Arc::new(Count::default()));
    let rt_a = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let a = replica(&store, true, &rebuild_a, &charge_a);
    let b = replica(&store, false, &rebuild_b, &charge_b);
    let rebuild = start_on(&rt_a, &a, "rebuild", &rebuild_a).await;
    let charge = start_on(&rt_a, &a, "charge", &charge_a).await;
    // A is alive and renews: three leases of polling through B take nothing over.
    for _ in 0..30 {
        assert_eq!(get(&b, &rebuild).await["status"], "working");
        assert_eq!(get(&b, &charge).await["status"], "working");
        tokio::time::sleep(LEASE / 10).await;
    }
    assert_eq!(
        rebuild_b.started.load(Ordering::SeqCst),
        0,
        "B ran nothing while A held the leases"
    );
    // A dies mid-run: every task of its runtime dropped, no goodbye.
    rt_a.shutdown_background();
    let done = settled(&b, &rebuild).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "done");
    assert_eq!(rebuild_b.started.load(Ordering::SeqCst), 1, "B ran it once");
    let effects =
        rebuild_a.effects.load(Ordering::SeqCst) + rebuild_b.effects.load(Ordering::SeqCst);
    assert_eq!(effects, 1, "the side effect happened once");
    // Not declared safe to run again: it fails, naming why, and never runs twice.
    let failed = settled(&b, &charge).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(message.contains("TaskTakeover::Rerun"), "{message}");
    assert_eq!(failed["error"]["data"]["takeover"], "not_rerun");
    assert_eq!(
        charge_b.started.load(Ordering::SeqCst),
        0,
        "B never ran charge"
    );
}
