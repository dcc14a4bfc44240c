//! Tasks survive the replica running them: two tasks run on r1 (`reindex`, declared safe
//! to run again, and `notify_team`, not), r1 is SIGKILLed mid-run, and the client's polls
//! through nginx take both over once their 2 s leases lapse: `reindex` completes on
//! another replica with its side effect done once, `notify_team` fails saying why, its
//! side effect never done. `/metrics` shows the takeovers and the requests.

use super::ONE_AT_A_TIME;
use super::fleet::Fleet;
use super::raw::{json_of, post};
use super::streams::{metric, scrape};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use sterna::server::state::StateKeys;

/// `_meta` of a 2026-07-28 request that declares the tasks extension.
fn tasks_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": {
               "extensions": {"io.modelcontextprotocol/tasks": {}}}})
}

/// Creates a task of `tool` on `url`: its id.
async fn create(url: &str, tool: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": {"seconds": 4}, "_meta": tasks_meta()}});
    let r = json_of(post(url, "tools/call", Some(tool), body).await).await;
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    r["result"]["taskId"].as_str().unwrap().to_owned()
}

/// `tasks/get` through `url`: the replica that answered and the task.
async fn get(url: &str, id: &str) -> (String, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
        "params": {"taskId": id, "_meta": tasks_meta()}});
    let r = post(url, "tasks/get", Some(id), body).await;
    let replica = r.replica.clone();
    (replica, json_of(r).await["result"].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tasks_on_a_killed_replica_are_taken_over_through_nginx() {
    let _one = ONE_AT_A_TIME.lock().await;
    let mut fleet = Fleet::start(3, &StateKeys::generate_base64());
    let before = scrape(&fleet, &[1, 2]).await;
    let r1 = fleet.direct(0);
    let reindex = create(&r1, "reindex").await;
    let notify = create(&r1, "notify_team").await;
    tokio::time::sleep(Duration::from_millis(500)).await; // both runs under way on r1
    tokio::task::block_in_place(|| fleet.kill(0));
    let killed = Instant::now();
    println!("[takeover] r1 killed (SIGKILL) 0.5 s into two 4 s task runs");
    // The client polls through nginx every 500 ms (its pollIntervalMs), bounded to 40 s.
    let url = fleet.url();
    let (mut done, mut failed) = (None, None);
    for _ in 0..80 {
        if done.is_none() {
            let (replica, t) = get(&url, &reindex).await;
            if t["status"] == "completed" {
                done = Some((replica, t, killed.elapsed()));
            }
        }
        if failed.is_none() {
            let (replica, t) = get(&url, &notify).await;
            if t["status"] == "failed" {
                failed = Some((replica, t, killed.elapsed()));
            }
        }
        if done.is_some() && failed.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let (replica, t, after) = done.expect("reindex completed on another replica");
    println!(
        "[takeover] reindex completed {after:.1?} after the kill (lease 2 s + a poll + its 4 s run again); seen through {replica}: {}",
        t["result"]["content"][0]["text"]
    );
    assert_eq!(t["result"]["content"][0]["text"], "Reindexed in 4 s");
    let (replica, t, after) = failed.expect("notify_team failed");
    println!(
        "[takeover] notify_team failed {after:.1?} after the kill (seen through {replica}): {}",
        t["error"]["message"]
    );
    assert!(
        t["error"]["message"]
            .as_str()
            .unwrap()
            .contains("TaskTakeover::Rerun"),
        "{t}"
    );
    let rebuilt = fleet.replica_log_lines("side effect: the index was rebuilt");
    let notified = fleet.replica_log_lines("side effect: the team was notified");
    println!(
        "[takeover] side effects: index rebuilt {rebuilt} time(s), team notified {notified} time(s)"
    );
    assert_eq!(
        rebuilt, 1,
        "the idempotent task's side effect happened once"
    );
    assert_eq!(
        notified, 0,
        "the other one never ran twice (nor once, cut short)"
    );
    let after = scrape(&fleet, &[1, 2]).await;
    let moved = |name: &str| metric(&after, name) - metric(&before, name);
    let reruns = moved("sterna_task_takeovers_total{outcome=\"rerun\"}");
    let fails = moved("sterna_task_takeovers_total{outcome=\"failed\"}");
    let gets = moved("sterna_requests_total{method=\"tasks/get\",outcome=\"complete\"}");
    println!(
        "[takeover] /metrics of r2 and r3: {reruns} rerun takeover, {fails} failed takeover, {gets} tasks/get served"
    );
    assert_eq!((reruns, fails), (1.0, 1.0));
    assert!(gets > 0.0);
}
