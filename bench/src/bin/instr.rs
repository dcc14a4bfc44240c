//! The endpoint's own work per operation, with no sockets and no idle time: the demo's
//! `echo` and both legs of `provision_database` through `McpService` in process, N times.
//! Run it under `valgrind --tool=callgrind` twice with different N and divide the
//! difference in instructions by the difference in operations (bench/instructions.sh);
//! the count does not depend on what else the machine is doing.
//!
//! `legacy` is the 2025-11-25 push flow of `provision_database` in a session opened once
//! up front (the call's SSE stream, the pushed `elicitation/create`, the answer POSTed,
//! the result read from the stream; see `instr/legacy.rs`), `legacy-echo` an in-session
//! `tools/call echo`. Every mode is linear in N (a session's streams kept for replay are
//! swept at amortized O(1) per new stream; before that fix the push flow's count grew
//! with the operations done before it in the session).
//!
//! `mrtr-stored` runs the MRTR legs in stored-state mode with the in-memory store,
//! `mrtr-redis` with Redis at `$REDIS_URL` (its own work happens in another process: count
//! this side's instructions, time the round trips). Each run prints its wall time per
//! operation to stderr. `sizes` prints the `requestState` of a large flow in both modes.
//!
//! ```text
//! instr echo|mrtr|legacy|legacy-echo|mrtr-stored|mrtr-redis N
//! instr sizes
//! ```

#[path = "instr/allocs.rs"]
mod allocs;
#[path = "instr/legacy.rs"]
mod legacy;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Instant;
use sterna::server::http::{HttpConfig, McpService};
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::state::{MemoryStateStore, StateStore, StoreStates};
use sterna::server::{Context, NoArgs, Tool};
use sterna::server::{HandlerError, Server};
use tower_service::Service;

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct ProvisionArgs {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
enum Region {
    #[serde(rename = "eu-west-1")]
    EuWest1,
    #[serde(rename = "us-east-1")]
    UsEast1,
}

#[derive(Deserialize, JsonSchema)]
struct Notes {
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct Confirm {
    ok: bool,
}

#[derive(Deserialize, JsonSchema)]
struct PickRegion {
    region: Region,
}

fn server(store: Option<Arc<dyn StateStore>>) -> Server {
    let b = Server::builder("sterna-demo", "0.1.0").state_keys(StateKeys::ephemeral());
    let b = match store {
        Some(s) => b.state_store(s, StoreStates::Always),
        None => b,
    };
    b.tool(
        Tool::new("notes")
            .description("Two rounds; the first answer (long notes) is carried to the second")
            .handler(|ctx: Context, _: NoArgs| async move {
                let notes = ctx.elicit::<Notes>("Notes?").await?.required()?;
                let ok = ctx.elicit::<Confirm>("Save them?").await?.required()?;
                Ok::<_, HandlerError>(format!("{} bytes, saved: {}", notes.text.len(), ok.ok))
            }),
    )
    .tool(
        Tool::new("echo")
            .description("Returns the text it is given")
            .handler(|_ctx: Context, a: EchoArgs| async move { a.text }),
    )
    .tool(
        Tool::new("provision_database")
            .description("Creates a database in the region the user picks")
            .ask(|a: &ProvisionArgs| form::<PickRegion>(format!("Which region for {}?", a.name)))
            .run(
                |_c: Context, a: ProvisionArgs, p: Elicitation<PickRegion>| async move {
                    let region = match p.required()?.region {
                        Region::EuWest1 => "eu-west-1",
                        Region::UsEast1 => "us-east-1",
                    };
                    Ok::<_, HandlerError>(format!("Created {} in {region}", a.name))
                },
            ),
    )
    .build()
    .expect("valid")
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"instr","version":"1"}}"#;

async fn post(svc: &mut McpService, name: &str, body: String) -> Vec<u8> {
    let req = http::Request::post("http://127.0.0.1/mcp")
        // The client's address, as `HttpServer` puts it on every request.
        .extension(sterna::server::http::PeerAddr(
            ([127, 0, 0, 1], 40000).into(),
        ))
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .body(Full::new(Bytes::from(body)))
        .expect("valid request");
    let resp = allocs::endpoint(svc.call(req)).await;
    let mut body = resp.expect("infallible").into_body();
    let mut whole = Vec::new();
    while let Some(frame) = allocs::endpoint(body.frame()).await {
        if let Ok(data) = frame.expect("body").into_data() {
            whole.extend_from_slice(&data);
        }
    }
    whole
}

async fn mrtr(svc: &mut McpService, i: u64) {
    let first = format!(
        r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"provision_database","arguments":{{"name":"orders"}},{META}}}}}"#
    );
    let r: serde_json::Value =
        serde_json::from_slice(&post(svc, "provision_database", first).await).expect("json");
    let state = r["result"]["requestState"].as_str().expect("a state");
    let retry = format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"provision_database","arguments":{{"name":"orders"}},"inputResponses":{{"pick_region":{{"action":"accept","content":{{"region":"eu-west-1"}}}}}},"requestState":"{state}",{META}}}}}"#,
        i + 1
    );
    let done = post(svc, "provision_database", retry).await;
    assert!(
        done.windows(7).any(|w| w == b"Created"),
        "{}",
        String::from_utf8_lossy(&done)
    );
}

async fn echo(svc: &mut McpService, i: u64) {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hello"}},{META}}}}}"#
    );
    let r = post(svc, "echo", body).await;
    assert!(r.windows(5).any(|w| w == b"hello"));
}

/// The `requestState` of the second round of `notes` after an answer of `len` bytes.
async fn notes_state(svc: &mut McpService, len: usize) -> usize {
    let first = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"notes","arguments":{{}},{META}}}}}"#
    );
    let r: serde_json::Value =
        serde_json::from_slice(&post(svc, "notes", first).await).expect("json");
    let state = r["result"]["requestState"].as_str().expect("a state");
    let key = r["result"]["inputRequests"]
        .as_object()
        .and_then(|o| o.keys().next())
        .expect("a question")
        .clone();
    let text = "x".repeat(len);
    let retry = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"notes","arguments":{{}},"inputResponses":{{"{key}":{{"action":"accept","content":{{"text":"{text}"}}}}}},"requestState":"{state}",{META}}}}}"#
    );
    let r: serde_json::Value =
        serde_json::from_slice(&post(svc, "notes", retry).await).expect("json");
    r["result"]["requestState"]
        .as_str()
        .expect("a second state")
        .len()
}

async fn sizes() {
    let mut inline = McpService::new(server(None), HttpConfig::default());
    let store: Arc<dyn StateStore> = Arc::new(MemoryStateStore::default());
    let mut stored = McpService::new(server(Some(store)), HttpConfig::default());
    for len in [0, 1024, 16 * 1024] {
        let i = notes_state(&mut inline, len).await;
        let s = notes_state(&mut stored, len).await;
        println!("answer of {len} bytes: requestState inline {i} bytes, stored {s} bytes");
    }
}

async fn store_for(mode: &str) -> Option<Arc<dyn StateStore>> {
    match mode {
        "mrtr-stored" => Some(Arc::new(MemoryStateStore::default())),
        "mrtr-redis" => {
            let url = std::env::var("REDIS_URL").expect("REDIS_URL for mrtr-redis");
            let redis = sterna_redis::Redis::connect(&url).await.expect("redis");
            Some(Arc::new(redis.state_store()))
        }
        _ => None,
    }
}

fn main() {
    if std::env::var_os("INSTR_SPANS").is_some() {
        tracing::subscriber::set_global_default(tracing_subscriber::registry())
            .expect("one subscriber");
    }
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "echo".into());
    let n: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        if mode == "sizes" {
            return sizes().await;
        }
        let store = store_for(&mode).await;
        let mut svc = McpService::new(server(store), HttpConfig::default());
        let session = match mode.as_str() {
            "legacy" | "legacy-echo" => Some(legacy::open(&mut svc).await),
            _ => None,
        };
        let started = Instant::now();
        let (allocs0, bytes0) = allocs::counted();
        for i in 0..n {
            match (mode.as_str(), &session) {
                ("legacy", Some(s)) => legacy::push(&mut svc, s, i + 1).await,
                ("legacy-echo", Some(s)) => legacy::echo(&mut svc, s, i + 1).await,
                (m, _) if m.starts_with("mrtr") => mrtr(&mut svc, i * 2).await,
                _ => echo(&mut svc, i).await,
            }
        }
        let per_op = started.elapsed().as_secs_f64() * 1e6 / n as f64;
        let (allocs1, bytes1) = allocs::counted();
        let ops = n.max(1) as f64;
        eprintln!(
            "{mode}: {per_op:.1} µs/op over {n} ops; the endpoint made {:.1} allocations/op \
             ({:.0} bytes/op)",
            (allocs1 - allocs0) as f64 / ops,
            (bytes1 - bytes0) as f64 / ops
        );
    });
}
