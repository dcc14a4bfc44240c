//! The scenarios of the deployment test.

use super::ONE_AT_A_TIME;
use super::fleet::Fleet;
use super::load::{Report, deploys, drive, tasks, until};
use super::raw::{json_of, meta, next_message, post};
use serde_json::json;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use sterna::client::{Client, EraMode};
use sterna::server::state::StateKeys;
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};

fn replicas_of(report: &Report, kind_with_state: bool) -> BTreeSet<String> {
    report
        .ops
        .iter()
        .flat_map(|o| &o.1)
        .filter(|l| l.method == "tools/call" && l.with_state == kind_with_state)
        .map(|l| l.replica.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_operation_completes_with_legs_spread_over_the_replicas() {
    let _one = ONE_AT_A_TIME.lock().await;
    let fleet = Fleet::start(3, &StateKeys::generate_base64());
    let report = drive(&fleet.url(), 150, 12, false, Arc::default()).await;
    report.print("round robin");
    assert_eq!(report.failures(), Vec::<&str>::new());
    assert_eq!(report.ops.len(), 150);
    let all: BTreeSet<String> = ["r1", "r2", "r3"].map(String::from).into();
    assert_eq!(
        replicas_of(&report, false),
        all,
        "first legs on every replica"
    );
    assert_eq!(
        replicas_of(&report, true),
        all,
        "retry legs on every replica"
    );
    for tool in ["provision_database", "redeem_voucher"] {
        assert!(
            report.spread(tool) > 0,
            "{tool}: some operation's legs on two replicas"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_killed_mid_load_costs_no_operation() {
    let _one = ONE_AT_A_TIME.lock().await;
    let mut fleet = Fleet::start(3, &StateKeys::generate_base64());
    let done = Arc::new(AtomicUsize::new(0));
    let (url, d) = (fleet.url(), done.clone());
    let load = tokio::spawn(async move { drive(&url, 240, 16, true, d).await });
    // Long SSE responses (2 s each) on every replica: the ones on r2 break when it dies.
    let (url, begun) = (fleet.url(), Arc::new(AtomicUsize::new(0)));
    let b = begun.clone();
    let streams = tokio::spawn(async move { deploys(&url, 24, b).await });
    // Kill once the load is well under way and every deploy stream has begun.
    for _ in 0..2000 {
        if done.load(Ordering::SeqCst) >= 60 && begun.load(Ordering::SeqCst) >= 24 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let at = done.load(Ordering::SeqCst);
    tokio::task::block_in_place(|| fleet.kill(1));
    println!("[kill] r2 killed (SIGKILL) after {at} of 240 operations");
    let report = load.await.unwrap();
    report.print("kill");
    assert!(at < 240, "the kill happened mid-load");
    assert_eq!(report.failures(), Vec::<&str>::new());
    assert_eq!(report.ops.len(), 240);
    let around = fleet.nginx_errors_about(1);
    println!("[kill] nginx logged {around} failed attempts on r2 and passed those requests on");
    assert!(
        around > 0,
        "nginx met the dead replica and routed around it"
    );
    let streams = streams.await.unwrap();
    streams.print("kill, deploy streams");
    let broken = streams
        .ops
        .iter()
        .flat_map(|o| &o.1)
        .filter(|l| l.broken)
        .count();
    println!("[kill] {broken} deploy streams broke with r2 and were re-issued by the client");
    assert_eq!(streams.failures(), Vec::<&str>::new());
    assert!(broken > 0, "some streams were running on r2 when it died");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_single_use_state_replayed_64_times_across_replicas_completes_once() {
    let _one = ONE_AT_A_TIME.lock().await;
    let fleet = Fleet::start(3, &StateKeys::generate_base64());
    let url = fleet.url();
    let (params, first) = first_leg(&url, "once").await;
    let (key, _) = first["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let mut retry = params.clone();
    retry["inputResponses"] =
        json!({ key.as_str(): {"action": "accept", "content": {"confirm": true}} });
    retry["requestState"] = first["requestState"].clone();
    let replays = (0..64).map(|i| {
        let (url, retry) = (url.clone(), retry.clone());
        tokio::spawn(async move {
            let body =
                json!({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": retry});
            let reply = post(&url, "tools/call", Some("redeem_voucher"), body).await;
            let replica = reply.replica.clone();
            (replica, json_of(reply).await)
        })
    });
    let mut wins = Vec::new();
    let mut refused = 0;
    let mut replicas = BTreeSet::new();
    for t in futures_util::future::join_all(replays).await {
        let (replica, v) = t.unwrap();
        replicas.insert(replica.clone());
        if v["result"]["content"][0]["text"] == "Redeemed voucher once" {
            wins.push(replica);
        } else {
            assert!(
                v["error"]["code"].is_i64(),
                "a refusal, not something else: {v}"
            );
            refused += 1;
        }
    }
    println!(
        "[single-use] 64 replays on replicas {replicas:?}: {} completed (on {wins:?}), {refused} refused",
        wins.len()
    );
    assert_eq!(wins.len(), 1, "exactly one replay completes");
    assert!(replicas.len() > 1, "the replays reached several replicas");
}

/// Phases of a rolling rotation from `old` to `new`: each is applied to every replica in turn.
fn rotation(old: &str, new: &str) -> [String; 3] {
    [
        format!("{old},{new}"),
        format!("{new},{old}"),
        new.to_owned(),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rolling_key_rotation_under_load_completes_every_flow() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (old, new) = (StateKeys::generate_base64(), StateKeys::generate_base64());
    let mut fleet = Fleet::start(3, &old);
    let (early_params, early_state) = first_leg(&fleet.url(), "early").await;
    // Operations in flight, by the phase that was complete everywhere when they started.
    let phase = Arc::new(AtomicUsize::new(0));
    let in_flight = Arc::new(Mutex::new([0usize; 4]));
    let started = Arc::new(Mutex::new(std::collections::HashMap::new()));
    let (p, f, s) = (phase.clone(), in_flight.clone(), started.clone());
    let hooks = Arc::new(move |i: usize, starting: bool| {
        let mut f = f.lock().unwrap();
        let mut s = s.lock().unwrap();
        if starting {
            let ph = p.load(Ordering::SeqCst);
            s.insert(i, ph);
            f[ph] += 1;
        } else if let Some(ph) = s.remove(&i) {
            f[ph] -= 1;
        }
    });
    let stop = Arc::new(AtomicBool::new(false));
    let halt = stop.clone();
    let url = fleet.url();
    let load = tokio::spawn(async move { until(&url, 8, stop.clone(), hooks).await });
    for (n, keys) in rotation(&old, &new).iter().enumerate() {
        if n == 2 {
            // Retire the old key only once no flow that may hold a state sealed with it
            // is in flight (in production: wait the state TTL).
            for _ in 0..1000 {
                if in_flight.lock().unwrap()[..2].iter().sum::<usize>() == 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        for i in 0..3 {
            tokio::task::block_in_place(|| fleet.restart(i, keys));
            println!("[rotation] phase {}: r{} restarted", n + 1, i + 1);
        }
        phase.store(n + 1, Ordering::SeqCst);
    }
    // A little more load on the final keys, then stop.
    tokio::time::sleep(Duration::from_millis(300)).await;
    halt.store(true, Ordering::SeqCst);
    let report = load.await.unwrap();
    report.print("rotation");
    assert!(report.ops.len() >= 20, "load ran through the rotation");
    assert_eq!(report.failures(), Vec::<&str>::new());
    // The old key is retired everywhere: a state it sealed is refused by every replica.
    for i in 0..3 {
        let v = final_leg(&fleet.direct(i), &early_params, &early_state, true).await;
        assert!(
            v["error"]["code"].is_i64(),
            "r{} refuses an old-key state: {v}",
            i + 1
        );
    }
    println!("[rotation] a state sealed with the retired key is refused by r1, r2 and r3");
}

/// The first leg of `redeem_voucher` through `url`: its params and the state it got.
async fn first_leg(url: &str, code: &str) -> (serde_json::Value, serde_json::Value) {
    let params = json!({"name": "redeem_voucher", "arguments": {"code": code}, "_meta": meta()});
    let first = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let r = json_of(post(url, "tools/call", Some("redeem_voucher"), first).await).await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    (params, r["result"].clone())
}

/// The final leg answering `first` (the result of the first leg) with `confirm`.
async fn final_leg(
    url: &str,
    params: &serde_json::Value,
    first: &serde_json::Value,
    confirm: bool,
) -> serde_json::Value {
    let (key, _) = first["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let mut retry = params.clone();
    retry["inputResponses"] =
        json!({ key.as_str(): {"action": "accept", "content": {"confirm": confirm}} });
    retry["requestState"] = first["requestState"].clone();
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": retry});
    json_of(post(url, "tools/call", Some("redeem_voucher"), body).await).await
}

fn region(_: ElicitFormParams) -> std::future::Ready<ElicitResult> {
    let mut content = serde_json::Map::new();
    content.insert("region".into(), json!("us-east-1"));
    std::future::ready(ElicitResult::accept(content))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn legacy_clients_complete_pushed_elicitations_behind_round_robin() {
    let _one = ONE_AT_A_TIME.lock().await;
    let fleet = Fleet::start(3, &StateKeys::generate_base64());
    let flows = (0..12).map(|i| {
        let url = fleet.url();
        tokio::spawn(async move {
            let client = Client::builder("cluster-legacy", "1")
                .era(EraMode::Legacy)
                .on_elicit(region)
                .connect_http(&url)
                .unwrap();
            let name = format!("legacy{i}");
            let r = client
                .call_tool("provision_database", json!({"name": name}))
                .await;
            let era = client.era().await.map(|e| e.version().to_owned());
            client.close().await;
            (
                r.map(|r| r.text_content()).map_err(|e| e.to_string()),
                era.ok(),
            )
        })
    });
    let mut ok = 0;
    for (i, t) in futures_util::future::join_all(flows)
        .await
        .into_iter()
        .enumerate()
    {
        let (text, era) = t.unwrap();
        assert_eq!(era.as_deref(), Some("2025-11-25"));
        assert_eq!(
            text.as_deref(),
            Ok(format!("Created legacy{i} in us-east-1").as_str())
        );
        ok += 1;
    }
    let crossed = fleet.replica_log_lines("published to the fleet");
    println!(
        "[legacy] {ok} of 12 2025-11-25 sessions completed a pushed elicitation through nginx; \
         {crossed} answers reached another replica than the one running the call (routed over Redis)"
    );
    assert!(
        crossed > 0,
        "round robin sent some answers to another replica"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_listen_stream_on_one_replica_sees_a_change_made_through_another() {
    let _one = ONE_AT_A_TIME.lock().await;
    let fleet = Fleet::start(3, &StateKeys::generate_base64());
    tokio::time::sleep(Duration::from_millis(300)).await; // the bus subscriptions are up
    let listen = json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": {
        "notifications": {"resourceSubscriptions": ["sterna://readme"]}, "_meta": meta()}});
    let mut stream = post(&fleet.url(), "subscriptions/listen", None, listen).await;
    let a = stream.replica.clone();
    let mut buf = String::new();
    let ack = next_message(&mut stream.body, &mut buf).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let b = fleet.replicas.iter().position(|r| r.name != a).unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                      "params": {"name": "touch_readme", "arguments": {}, "_meta": meta()}});
    let r = post(&fleet.direct(b), "tools/call", Some("touch_readme"), call).await;
    assert_eq!(r.replica, fleet.replicas[b].name);
    let _ = json_of(r).await;
    let change = next_message(&mut stream.body, &mut buf).await;
    println!(
        "[listen] stream on {a} (through nginx) got {} after touch_readme on {}",
        change["method"], fleet.replicas[b].name
    );
    assert_eq!(change["method"], "notifications/resources/updated");
    assert_eq!(change["params"]["uri"], "sterna://readme");
}

/// The tasks extension on the fleet (task records in Redis): a task created through one
/// replica is polled, answered and completed through the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tasks_created_on_one_replica_complete_through_the_others() {
    let _one = ONE_AT_A_TIME.lock().await;
    let fleet = Fleet::start(3, &StateKeys::generate_base64());
    let report = tasks(&fleet.url(), 24, 6).await;
    report.print("tasks");
    assert_eq!(report.failures(), Vec::<&str>::new());
    assert_eq!(report.ops.len(), 24);
    let count = |method: &str| {
        report
            .ops
            .iter()
            .flat_map(|o| &o.1)
            .filter(|l| l.method == method)
            .count()
    };
    // Every task was created, polled and answered (one question each).
    assert_eq!(count("tools/call"), 24, "one creating call per task");
    assert!(count("tasks/get") >= 24, "every task polled");
    assert_eq!(count("tasks/update"), 24, "every task answered once");
    // Tasks whose later legs reached a replica other than the one that created them.
    let crossed = report
        .ops
        .iter()
        .filter(|o| {
            let created = o.1.iter().find(|l| l.method == "tools/call");
            let created = created.map(|l| l.replica.as_str());
            o.1.iter()
                .any(|l| l.method.starts_with("tasks/") && Some(l.replica.as_str()) != created)
        })
        .count();
    println!(
        "[tasks] {crossed} of 24 tasks were followed through a replica other than their creator's"
    );
    assert!(crossed > 0, "some task crossed replicas");
}
