//! Cost growth of a flow as it carries more answers: server time per operation and the
//! `requestState` the client carries, inline and in stored-state mode.
//!
//! A tool asks N questions (`PER` per round, so N / PER rounds) and completes once it has
//! every answer; each answer is a form `{"value": "…"}` of a given size. Every retry sends
//! back the state, which carries the answers of all earlier rounds (inline: sealed in the
//! token; stored: in a `MemoryStateStore` sized for the run, the token a 71-byte
//! reference). The operation
//! runs through `McpService` in process; only the server's part is timed (the call and
//! the reading of the response body, not the building of the next request).
//!
//! ```text
//! growth [--answers 1,4,16,64] [--per 1] [--size 16] [--reps 5] [--ms 400]
//! ```
//!
//! Prints a markdown table: per N, for each mode, µs of server time per operation and per
//! request (median of the repetitions), the largest `requestState` (bytes) and the state
//! bytes the client carries back over the whole operation. A flow whose inline state
//! would outgrow the server's limit (64 KiB) fails: the row says so.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use sterna::server::http::{HttpConfig, McpService};
use sterna::server::mrtr::form;
use sterna::server::state::{MemoryStateStore, StateKeys, StoreStates};
use sterna::server::{Context, HandlerError, Server, Tool};
use tower_service::Service;

#[derive(Deserialize, JsonSchema)]
struct CollectArgs {
    n: usize,
    per: usize,
}

#[derive(Deserialize, JsonSchema)]
struct Item {
    value: String,
}

fn server(store: StoreStates) -> Server {
    let b = Server::builder("growth", "1").state_keys(StateKeys::ephemeral());
    let b = if store == StoreStates::Never {
        b
    } else {
        // Every round of every flow holds an entry until it expires (10 minutes): the
        // default store's 1,000 entries per client would run out within a second here.
        let states = MemoryStateStore::with_limits(4_000_000, 4 << 30).per_principal(4_000_000);
        b.state_store(Arc::new(states), store)
    };
    b.tool(
        Tool::new("collect")
            .description("Asks n questions, per at a time, then sums the answers' lengths")
            .handler(|ctx: Context, a: CollectArgs| async move {
                let per = a.per.max(1);
                let mut total = 0;
                for round in 0..a.n.div_ceil(per) {
                    let asked = (0..per.min(a.n - round * per))
                        .map(|j| {
                            form::<Item>(format!("Item {round}.{j}?")).key(format!("q{round}_{j}"))
                        })
                        .collect::<Vec<_>>();
                    for answer in ctx.ask(asked).await? {
                        total += answer.required()?.value.len();
                    }
                }
                Ok::<_, HandlerError>(format!("{total} bytes"))
            }),
    )
    .build()
    .expect("valid")
}

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}"#;

/// What one operation cost the server.
#[derive(Default)]
struct Op {
    server: Duration,
    requests: u32,
    max_state: usize,
    carried: usize,
}

async fn post(svc: &mut McpService, body: &Value, op: &mut Op) -> Value {
    let req = http::Request::post("http://127.0.0.1/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "collect")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("valid request");
    let started = Instant::now();
    let resp = svc.call(req).await.expect("infallible");
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    op.server += started.elapsed();
    op.requests += 1;
    serde_json::from_slice(&bytes).expect("JSON")
}

/// One whole operation; `Err` with the server's error when it fails.
async fn operation(svc: &mut McpService, n: usize, per: usize, size: usize) -> Result<Op, String> {
    let mut op = Op::default();
    let meta: Value = serde_json::from_str(META).expect("meta");
    let mut params = json!({"name": "collect", "arguments": {"n": n, "per": per}, "_meta": meta});
    let value = "v".repeat(size);
    for id in 1.. {
        let r = post(
            svc,
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
            &mut op,
        )
        .await;
        let result = r.get("result").ok_or_else(|| format!("{}", r["error"]))?;
        if result["resultType"] != "input_required" {
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            if text != format!("{} bytes", n * size) {
                return Err(format!("wrong result {result}"));
            }
            return Ok(op);
        }
        let state = result["requestState"]
            .as_str()
            .ok_or("no state")?
            .to_owned();
        op.max_state = op.max_state.max(state.len());
        op.carried += state.len();
        let answers: serde_json::Map<String, Value> = result["inputRequests"]
            .as_object()
            .ok_or("no questions")?
            .keys()
            .map(|k| {
                (
                    k.clone(),
                    json!({"action": "accept", "content": {"value": value}}),
                )
            })
            .collect();
        params["inputResponses"] = Value::Object(answers);
        params["requestState"] = Value::String(state);
    }
    unreachable!("the loop returns")
}

/// Medians over `reps` runs of about `ms` each: µs per op, µs per request, and the last
/// op's sizes.
async fn measure(
    store: StoreStates,
    n: usize,
    per: usize,
    size: usize,
    reps: usize,
    ms: u64,
) -> Result<(f64, f64, Op), String> {
    let mut svc = McpService::new(server(store), HttpConfig::default());
    // Warm-up, and the sizes (the same for every op).
    let mut last = operation(&mut svc, n, per, size).await?;
    let mut per_op = Vec::new();
    let mut per_req = Vec::new();
    for _ in 0..reps {
        let (mut server, mut ops, mut requests) = (Duration::ZERO, 0u32, 0u32);
        let until = Instant::now() + Duration::from_millis(ms);
        while Instant::now() < until || ops < 3 {
            let op = operation(&mut svc, n, per, size).await?;
            server += op.server;
            requests += op.requests;
            ops += 1;
            last = op;
        }
        per_op.push(server.as_secs_f64() * 1e6 / f64::from(ops));
        per_req.push(server.as_secs_f64() * 1e6 / f64::from(requests));
    }
    Ok((median(&mut per_op), median(&mut per_req), last))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let answers: Vec<usize> = arg(&args, "--answers", "1,4,16,64".to_owned())
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    let per = arg(&args, "--per", 1usize).max(1);
    let size = arg(&args, "--size", 16usize);
    let reps = arg(&args, "--reps", 5usize).max(1);
    let ms = arg(&args, "--ms", 400u64);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "answers of {size} B, {per} per round; median of {reps} runs of {ms} ms; server time only\n"
    );
    println!(
        "| answers | rounds | mode | µs/op | µs/request | largest requestState B | state B carried back per op |"
    );
    println!("|--:|--:|---|--:|--:|--:|--:|");
    for &n in &answers {
        let rounds = n.div_ceil(per);
        for (label, store) in [
            ("inline", StoreStates::Never),
            ("stored (memory)", StoreStates::Always),
        ] {
            match rt.block_on(measure(store, n, per, size, reps, ms)) {
                Ok((op, req, last)) => println!(
                    "| {n} | {rounds} | {label} | {op:.1} | {req:.1} | {} | {} |",
                    last.max_state, last.carried
                ),
                Err(e) => println!(
                    "| {n} | {rounds} | {label} | fails: {} | | | |",
                    e.chars().take(80).collect::<String>()
                ),
            }
        }
    }
}
