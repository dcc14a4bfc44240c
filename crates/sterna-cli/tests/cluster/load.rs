//! A load of MRTR operations through nginx with sterna's client, one client per
//! operation (each with a transport recording which replica answered each leg).

use super::transport::{Leg, Recording, pool};
use futures_util::StreamExt;
use serde_json::{Map, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use sterna::client::{Call, Client, EraMode};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};

/// What the load did.
#[derive(Debug, Default)]
pub(crate) struct Report {
    /// Each operation: its tool, its legs, and its error if it failed.
    pub(crate) ops: Vec<(String, Vec<Leg>, Option<String>)>,
}

impl Report {
    pub(crate) fn failures(&self) -> Vec<&str> {
        self.ops.iter().filter_map(|o| o.2.as_deref()).collect()
    }

    /// Operations whose legs were served by more than one replica.
    pub(crate) fn spread(&self, tool: &str) -> usize {
        self.ops
            .iter()
            .filter(|o| o.0 == tool)
            .filter(|o| {
                let mut r: Vec<&str> = o.1.iter().map(|l| l.replica.as_str()).collect();
                r.dedup();
                r.len() > 1
            })
            .count()
    }

    /// (replica, leg kind) → count; kind is `first` or `retry` (with requestState) for
    /// `tools/call`, else the method.
    pub(crate) fn matrix(&self) -> BTreeMap<(String, String), usize> {
        let mut m = BTreeMap::new();
        for leg in self.ops.iter().flat_map(|o| &o.1) {
            let kind = match (leg.method.as_str(), leg.with_state) {
                ("tools/call", false) => "tools/call first".to_owned(),
                ("tools/call", true) => "tools/call retry".to_owned(),
                (other, _) => other.to_owned(),
            };
            *m.entry((leg.replica.clone(), kind)).or_insert(0) += 1;
        }
        m
    }

    pub(crate) fn print(&self, label: &str) {
        let legs: usize = self.ops.iter().map(|o| o.1.len()).sum();
        let bad_gateway = self
            .ops
            .iter()
            .flat_map(|o| &o.1)
            .filter(|l| l.status >= 500)
            .count();
        println!(
            "[{label}] {} operations, {} failed, {legs} legs ({bad_gateway} answered 5xx and re-issued)",
            self.ops.len(),
            self.failures().len()
        );
        for tool in [
            "provision_database",
            "redeem_voucher",
            "deploy",
            "archive_logs",
        ] {
            let n = self.ops.iter().filter(|o| o.0 == tool).count();
            if n > 0 {
                let s = self.spread(tool);
                println!("[{label}]   {tool}: {n} ops, {s} with legs on more than one replica");
            }
        }
        for ((replica, kind), n) in self.matrix() {
            println!("[{label}]   replica {replica}: {n} {kind} legs");
        }
    }
}

/// Answers the demo server's forms: the region, the voucher confirmation, the retention.
fn answer(form: ElicitFormParams) -> ElicitResult {
    let schema = serde_json::to_value(&form.requested_schema).unwrap_or_default();
    let mut content = Map::new();
    if schema["properties"].get("region").is_some() {
        content.insert("region".into(), json!("eu-west-1"));
    }
    if schema["properties"].get("confirm").is_some() {
        content.insert("confirm".into(), json!(true));
    }
    if schema["properties"].get("days").is_some() {
        content.insert("days".into(), json!(30));
    }
    ElicitResult::accept(content)
}

/// One operation: `provision_database` (even `i`, or every one when `safe_only`) or the
/// single-use `redeem_voucher`.
pub(crate) async fn operation(
    http: &Recording,
    i: usize,
    safe_only: bool,
) -> (String, Vec<Leg>, Option<String>) {
    let transport = Recording::new(&http.http, &http.url);
    let client = Client::builder("cluster-test", "1")
        .era(EraMode::Modern)
        .on_elicit(|f: ElicitFormParams| async move { answer(f) })
        .build(transport.clone());
    let (tool, args, expect) = if safe_only || i.is_multiple_of(2) {
        let name = format!("db{i}");
        let expect = format!("Created {name} in eu-west-1");
        ("provision_database", json!({ "name": name }), expect)
    } else {
        let code = format!("v{i}");
        let expect = format!("Redeemed voucher {code}");
        ("redeem_voucher", json!({ "code": code }), expect)
    };
    let error = match client.call_tool(tool, &args).await {
        Ok(r) if r.text_content() == expect => None,
        Ok(r) => Some(format!(
            "{tool} #{i}: unexpected result {:?}",
            r.text_content()
        )),
        Err(e) => Some(format!("{tool} #{i}: {e}")),
    };
    client.close().await;
    (tool.to_owned(), transport.legs(), error)
}

/// `n` concurrent `deploy` calls (20 steps of 100 ms: SSE streams of progress that live
/// for 2 s), for a replica to die under.
/// `streams` counts the calls whose SSE response has begun.
pub(crate) async fn deploys(url: &str, n: usize, streams: Arc<AtomicUsize>) -> Report {
    let http = Recording::new(&pool(), url);
    let calls = (0..n).map(|i| {
        let mut transport = Recording::new(&http.http, &http.url);
        transport.streams = streams.clone();
        async move {
            let client = Client::builder("cluster-test", "1")
                .era(EraMode::Modern)
                .build(transport.clone());
            let args = json!({"steps": 20, "step_ms": 100});
            // A progress token: the answer is an SSE stream of progress, begun at once.
            let call = Call::tool("deploy", &args).meta("progressToken", i);
            let error = match client.run(call).await {
                Ok(r) if r.text_content() == "Deployed in 20 steps" => None,
                Ok(r) => Some(format!(
                    "deploy #{i}: unexpected result {:?}",
                    r.text_content()
                )),
                Err(e) => Some(format!("deploy #{i}: {e}")),
            };
            client.close().await;
            ("deploy".to_owned(), transport.legs(), error)
        }
    });
    Report {
        ops: futures_util::future::join_all(calls).await,
    }
}

/// `ops` operations through `url`, `concurrency` at a time; `done` counts finished ones.
pub(crate) async fn drive(
    url: &str,
    ops: usize,
    concurrency: usize,
    safe_only: bool,
    done: Arc<AtomicUsize>,
) -> Report {
    let http = Recording::new(&pool(), url);
    let ops = futures_util::stream::iter(0..ops)
        .map(|i| {
            let (http, done) = (http.clone(), done.clone());
            async move {
                let r = operation(&http, i, safe_only).await;
                done.fetch_add(1, Ordering::SeqCst);
                r
            }
        })
        .buffer_unordered(concurrency)
        .collect()
        .await;
    Report { ops }
}

/// Operations until `stop` is set, `concurrency` at a time. `started(i)` is called as
/// operation `i` starts and `finished(i)` as it ends.
pub(crate) async fn until(
    url: &str,
    concurrency: usize,
    stop: Arc<AtomicBool>,
    hooks: Arc<dyn Fn(usize, bool) + Send + Sync>,
) -> Report {
    let http = Recording::new(&pool(), url);
    let next = Arc::new(AtomicUsize::new(0));
    let workers = (0..concurrency).map(|_| {
        let (http, stop, next, hooks) = (http.clone(), stop.clone(), next.clone(), hooks.clone());
        tokio::spawn(async move {
            let mut mine = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                let i = next.fetch_add(1, Ordering::SeqCst);
                hooks(i, true);
                mine.push(operation(&http, i, false).await);
                hooks(i, false);
            }
            mine
        })
    });
    let mut ops = Vec::new();
    for w in futures_util::future::join_all(workers).await {
        ops.extend(w.unwrap());
    }
    Report { ops }
}

/// `n` `archive_logs` calls from a client that declares the tasks extension, `concurrency`
/// at a time: each is answered with a task, which the client follows (`tasks/get`) and
/// answers (`tasks/update`) through nginx, whatever replica each leg reaches.
pub(crate) async fn tasks(url: &str, n: usize, concurrency: usize) -> Report {
    let http = Recording::new(&pool(), url);
    let ops = futures_util::stream::iter(0..n)
        .map(|i| {
            let transport = Recording::new(&http.http, &http.url);
            async move {
                let client = Client::builder("cluster-test", "1")
                    .era(EraMode::Modern)
                    .tasks(true)
                    .on_elicit(|f: ElicitFormParams| async move { answer(f) })
                    .build(transport.clone());
                let service = format!("svc{i}");
                let expect = format!("Archived {service} logs for 30 days");
                let call = Call::tool("archive_logs", json!({ "service": service }));
                let error = match client.run(call).await {
                    Ok(r) if r.text_content() == expect => None,
                    Ok(r) => Some(format!(
                        "task #{i}: unexpected result {:?}",
                        r.text_content()
                    )),
                    Err(e) => Some(format!("task #{i}: {e}")),
                };
                client.close().await;
                ("archive_logs".to_owned(), transport.legs(), error)
            }
        })
        .buffer_unordered(concurrency)
        .collect()
        .await;
    Report { ops }
}
