//! What idle working tasks cost: a server creates N tasks (default 3,000) whose handlers
//! wait forever, then the process's CPU time (user + system, from `/proc/self/stat`) is
//! measured over a window (default 10 s) in which nothing else happens. Every task
//! stays `working` throughout (checked at the end), so the cost is the waiting itself.
//!
//! `cargo run --release -p sterna-bench --bin idle_tasks [-- TASKS SECONDS SETTLE [redis://…]]`
//!
//! SETTLE (default 10) is how many seconds pass between the last task's creation and the
//! window: a waiting run polls a store that cannot announce changes at growing intervals
//! (0.5 s doubling to 5 s), so the window should start once they have grown.
//!
//! With a Redis URL the records live in Redis (`RedisTaskStore`); the CPU of
//! `redis-server` is not included (read it from `ps` when comparing).

use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use sterna::server::Server;
use sterna::server::state::StateKeys;
use sterna::server::tasks::TaskStore;
use sterna::server::tasks::{MemoryTaskStore, TaskSupport};
use sterna::server::{Context, NoArgs, RequestEnv, Tool};
use sterna::types::jsonrpc::RequestId;

fn server(store: Arc<dyn TaskStore>) -> Server {
    Server::builder("idle-tasks", "1")
        .state_keys(StateKeys::new(&[[9u8; 32]]).expect("one key"))
        .task_store(store)
        .tool(Tool::new("wait").task(TaskSupport::Required).handler(
            |_: Context, _: NoArgs| async {
                std::future::pending::<()>().await;
                "never"
            },
        ))
        .build()
        .expect("valid")
}

async fn send(server: &Server, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    });
    let raw = serde_json::value::to_raw_value(&params).expect("json");
    let r = server
        .handle(RequestId::Number(1), method, Some(&raw), RequestEnv::new())
        .await
        .expect("answered");
    serde_json::from_str(r.body.expect("a result").get()).expect("json")
}

/// CPU time of this process so far (user + system), from `/proc/self/stat`.
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("Linux /proc");
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: u64 = f[11].parse::<u64>().expect("utime") + f[12].parse::<u64>().expect("stime");
    // USER_HZ is 100 on Linux.
    Duration::from_millis(ticks * 10)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // Warnings (a store that failed, a record that did not open) go to stderr.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("warn"))
        .with_writer(std::io::stderr)
        .init();
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(3000, |a| a.parse().expect("TASKS"));
    let secs: u64 = args.get(2).map_or(10, |a| a.parse().expect("SECONDS"));
    let settle: u64 = args.get(3).map_or(10, |a| a.parse().expect("SETTLE"));
    let store: Arc<dyn TaskStore> = match args.get(4) {
        Some(url) => {
            let redis = sterna_redis::Redis::connect(url)
                .await
                .expect("redis")
                .with_prefix(format!("idle-{}", std::process::id()));
            Arc::new(redis.task_store())
        }
        None => Arc::new(MemoryTaskStore::with_capacity(n + 10)),
    };
    let server = server(store);
    let mut ids = Vec::with_capacity(n);
    for _ in 0..n {
        let t = send(
            &server,
            "tools/call",
            json!({"name": "wait", "arguments": {}}),
        )
        .await;
        ids.push(t["taskId"].as_str().expect("a task").to_owned());
    }
    // Let the runs start and settle into waiting.
    tokio::time::sleep(Duration::from_secs(settle)).await;
    let (c0, t0) = (cpu(), Instant::now());
    tokio::time::sleep(Duration::from_secs(secs)).await;
    let (c1, t1) = (cpu(), Instant::now());
    let used = c1 - c0;
    let wall = t1 - t0;
    let mut working = 0;
    for id in &ids {
        let t = send(&server, "tasks/get", json!({"taskId": id})).await;
        working += usize::from(t["status"] == "working");
    }
    println!(
        "{n} idle working tasks ({working} still working): {:.3} s CPU in {:.3} s = {:.1}% of one core",
        used.as_secs_f64(),
        wall.as_secs_f64(),
        100.0 * used.as_secs_f64() / wall.as_secs_f64()
    );
}
