//! A load generator for MCP servers over Streamable HTTP: 2026-07-28, and 2025-11-25
//! sessions.
//!
//! ```text
//! loadgen --url http://127.0.0.1:3000/mcp --mode echo|mrtr|single-use|legacy|legacy-echo [--h2] --concurrency 32 --duration 10 --warmup 2
//! ```
//!
//! With `--h2` (or a mode named `…-h2`, e.g. `mrtr-h2`) every worker sends its requests as
//! streams of one shared prior-knowledge HTTP/2 connection (h2c) instead of a connection
//! of its own.
//!
//! C workers, each on its own persistent keep-alive connection, run operations back to
//! back: `echo` is one `tools/call echo {text}`; `mrtr` is a full MRTR operation —
//! `tools/call provision_database {name}` → `input_required` → the retry with a new id,
//! an answer for every question and the `requestState` echoed exactly → `complete`;
//! `single-use` is the same with the demo server's single-use `redeem_voucher` (a new
//! voucher code each operation), whose final leg consumes its state in the replay store.
//! `legacy` and `legacy-echo` speak 2025-11-25: each worker keeps one session on two
//! connections; `legacy` is the push flow of `provision_database` (the pushed
//! `elicitation/create` read from the call's SSE stream, the answer POSTed on the second
//! connection, the result read from the stream), `legacy-echo` an in-session echo
//! (see `loadgen/legacy.rs`).
//! Every response is checked (JSON or SSE); a wrong one counts as an error. Prints one
//! JSON line: ops/s, latency percentiles, errors, and this process's CPU time.

#[path = "loadgen/conn.rs"]
mod conn;
#[path = "loadgen/legacy.rs"]
mod legacy;
#[path = "loadgen/worker.rs"]
mod worker;

use bytes::Bytes;
use conn::{Conn, connect};
use http::HeaderValue;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What one operation is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Echo,
    Mrtr,
    SingleUse,
    /// The 2025-11-25 push flow in a session.
    Legacy,
    /// `tools/call echo` in a 2025-11-25 session.
    LegacyEcho,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Self::Echo => "echo",
            Self::Mrtr => "mrtr",
            Self::SingleUse => "single-use",
            Self::Legacy => "legacy",
            Self::LegacyEcho => "legacy-echo",
        }
    }

    /// HTTP requests per operation.
    fn requests(self) -> u64 {
        match self {
            Self::Echo | Self::LegacyEcho => 1,
            Self::Mrtr | Self::SingleUse | Self::Legacy => 2,
        }
    }
}

/// An MRTR operation: the tool, its arguments, the answer to each question, and the text
/// of the completed result.
struct Flow {
    tool: &'static str,
    args: String,
    answer: &'static str,
    expect: String,
}

impl Flow {
    fn new(mode: Mode, id: u64) -> Self {
        match mode {
            Mode::SingleUse => Self {
                tool: "redeem_voucher",
                args: format!(r#"{{"code":"v{id}"}}"#),
                answer: r#"{"action":"accept","content":{"confirm":true}}"#,
                expect: format!("Redeemed voucher v{id}"),
            },
            _ => Self {
                tool: "provision_database",
                args: r#"{"name":"orders"}"#.to_owned(),
                answer: r#"{"action":"accept","content":{"region":"eu-west-1"}}"#,
                expect: "Created orders in eu-west-1".to_owned(),
            },
        }
    }
}

#[derive(Clone)]
struct Opts {
    host: String,
    port: u16,
    /// `host:port`, the `Host` header of every request (built once, not per request).
    authority: http::HeaderValue,
    path: String,
    mode: Mode,
    concurrency: usize,
    duration: Duration,
    warmup: Duration,
    /// The shared HTTP/2 connection (`--h2`), once open.
    h2: Option<conn::Shared>,
    /// HTTP/2 asked for (the mode's name says so in the report).
    use_h2: bool,
}

fn parse_args() -> Result<Opts, String> {
    let mut url = None;
    let mut mode = "echo".to_owned();
    let mut concurrency = 1;
    let mut duration = 10.0;
    let mut warmup = 2.0;
    let mut use_h2 = false;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut val = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--url" => url = Some(val()?),
            "--mode" => mode = val()?,
            "--concurrency" | "-c" => concurrency = val()?.parse().map_err(|e| format!("{e}"))?,
            "--duration" | "-d" => duration = val()?.parse().map_err(|e| format!("{e}"))?,
            "--warmup" => warmup = val()?.parse().map_err(|e| format!("{e}"))?,
            "--h2" => use_h2 = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let url = url.ok_or("--url is required")?;
    let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
    let (authority, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_owned()), |(a, p)| (a, format!("/{p}")));
    let (host, port) = authority.rsplit_once(':').ok_or("the URL needs a port")?;
    if let Some(m) = mode.strip_suffix("-h2") {
        use_h2 = true;
        mode = m.to_owned();
    }
    let port: u16 = port.parse().map_err(|e| format!("port: {e}"))?;
    Ok(Opts {
        host: host.to_owned(),
        port,
        authority: http::HeaderValue::try_from(format!("{host}:{port}"))
            .map_err(|e| format!("host: {e}"))?,
        path,
        mode: match mode.as_str() {
            "echo" => Mode::Echo,
            "mrtr" => Mode::Mrtr,
            "single-use" => Mode::SingleUse,
            "legacy" => Mode::Legacy,
            "legacy-echo" => Mode::LegacyEcho,
            m => return Err(format!("unknown mode {m}")),
        },
        concurrency: concurrency.max(1),
        duration: Duration::from_secs_f64(duration),
        warmup: Duration::from_secs_f64(warmup),
        h2: None,
        use_h2,
    })
}

/// `Content-Type` of every request (a static value: no copy per request).
fn json() -> HeaderValue {
    HeaderValue::from_static("application/json")
}

/// `Accept` of every request.
fn accept_both() -> HeaderValue {
    HeaderValue::from_static("application/json, text/event-stream")
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"sterna-loadgen","version":"1"}}"#;

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolResult<'a> {
    #[serde(default)]
    result_type: Option<&'a str>,
    #[serde(default, borrow)]
    content: Vec<Block<'a>>,
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(default, borrow)]
    input_requests: Option<BTreeMap<String, &'a RawValue>>,
    #[serde(default)]
    request_state: Option<String>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(default, borrow)]
    text: Option<std::borrow::Cow<'a, str>>,
}

/// The JSON-RPC message of a response body (JSON, kept as received, or the last `data:`
/// event of SSE).
fn message(sse: bool, body: Bytes) -> Option<Bytes> {
    if !sse {
        return Some(body);
    }
    let text = std::str::from_utf8(&body).ok()?;
    let mut last = None;
    for event in text.split("\n\n") {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.trim_start())
            .collect();
        if !data.is_empty() {
            let joined = data.join("\n");
            if joined.contains("\"result\"") || joined.contains("\"error\"") {
                last = Some(Bytes::from(joined.into_bytes()));
            }
        }
    }
    last
}

async fn post(c: &mut Conn, o: &Opts, name: &str, body: String) -> Result<Bytes, String> {
    let req = Request::post(&o.path)
        .header(http::header::HOST, o.authority.clone())
        .header(http::header::CONTENT_TYPE, json())
        .header(http::header::ACCEPT, accept_both())
        .header(
            "mcp-protocol-version",
            HeaderValue::from_static("2026-07-28"),
        )
        .header("mcp-method", HeaderValue::from_static("tools/call"))
        .header("mcp-name", name)
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let resp = c.send(o, req).await?;
    let sse = resp
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let bytes = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    message(sse, bytes).ok_or_else(|| "no JSON-RPC message in the response".into())
}

fn result<'a>(msg: &'a [u8]) -> Result<ToolResult<'a>, String> {
    let env: Envelope<'a> = serde_json::from_slice(msg).map_err(|e| format!("bad JSON: {e}"))?;
    if let Some(e) = env.error {
        return Err(format!("JSON-RPC error {e}"));
    }
    let raw = env.result.ok_or("no result")?;
    serde_json::from_str(raw.get()).map_err(|e| format!("bad result: {e}"))
}

/// Whether the result's text blocks, joined, read `expect`.
fn text_is(r: &ToolResult<'_>, expect: &str) -> bool {
    sterna_bench::legacy::texts_are(r.content.iter().filter_map(|b| b.text.as_deref()), expect)
}

async fn echo_op(c: &mut Conn, o: &Opts, id: u64) -> Result<(), String> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hello"}},{META}}}}}"#
    );
    let msg = post(c, o, "echo", body).await?;
    let r = result(&msg)?;
    if r.result_type.is_some_and(|t| t != "complete")
        || r.is_error == Some(true)
        || !text_is(&r, "hello")
    {
        return Err(format!("wrong echo: {}", String::from_utf8_lossy(&msg)));
    }
    Ok(())
}

async fn mrtr_op(c: &mut Conn, o: &Opts, id: u64) -> Result<(), String> {
    let flow = Flow::new(o.mode, id);
    let (tool, args) = (flow.tool, flow.args.as_str());
    let first = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args},{META}}}}}"#
    );
    let msg = post(c, o, tool, first).await?;
    let r = result(&msg)?;
    if r.result_type != Some("input_required") {
        return Err(format!(
            "expected input_required: {}",
            String::from_utf8_lossy(&msg)
        ));
    }
    let questions = r
        .input_requests
        .as_ref()
        .ok_or("input_required without questions")?;
    if questions.is_empty() {
        return Err("no questions".into());
    }
    let mut answers = String::from("{");
    for (i, (key, q)) in questions.iter().enumerate() {
        if !q.get().contains("elicitation/create") {
            return Err(format!("unexpected question {key}: {}", q.get()));
        }
        if i > 0 {
            answers.push(',');
        }
        answers.push_str(&serde_json::to_string(key).map_err(|e| e.to_string())?);
        answers.push(':');
        answers.push_str(flow.answer);
    }
    answers.push('}');
    let state = match &r.request_state {
        Some(s) => format!(
            r#","requestState":{}"#,
            serde_json::to_string(s).map_err(|e| e.to_string())?
        ),
        None => String::new(),
    };
    let retry = format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"{tool}","arguments":{args},"inputResponses":{answers}{state},{META}}}}}"#,
        id + 1
    );
    let msg = post(c, o, tool, retry).await?;
    let r = result(&msg)?;
    if r.result_type.is_some_and(|t| t != "complete")
        || r.is_error == Some(true)
        || !text_is(&r, &flow.expect)
    {
        return Err(format!(
            "wrong completion: {}",
            String::from_utf8_lossy(&msg)
        ));
    }
    Ok(())
}

/// This process's user+system CPU time, in seconds (from /proc/self/stat).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 (utime, stime) are at 11 and 12 after the command name.
    (ticks(11) + ticks(12)) / 100.0
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    f64::from(sorted[i]) / 1000.0
}

fn main() {
    let mut o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("loadgen: {e}");
            std::process::exit(2);
        }
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    if o.use_h2 {
        match rt.block_on(conn::shared(&o)) {
            Ok(h2) => o.h2 = Some(h2),
            Err(e) => {
                eprintln!("loadgen: no HTTP/2 connection: {e}");
                std::process::exit(1);
            }
        }
    }
    let (tallies, cpu) = rt.block_on(async {
        let start = Instant::now();
        let measure_from = start + o.warmup;
        let stop_at = measure_from + o.duration;
        let handles: Vec<_> = (0..o.concurrency)
            .map(|i| tokio::spawn(worker::worker(o.clone(), i, measure_from, stop_at)))
            .collect();
        tokio::time::sleep_until(measure_from.into()).await;
        let cpu0 = cpu_seconds();
        tokio::time::sleep_until(stop_at.into()).await;
        let cpu1 = cpu_seconds();
        let mut all = Vec::new();
        for h in handles {
            all.push(h.await.expect("worker"));
        }
        (all, cpu1 - cpu0)
    });
    let ops: u64 = tallies.iter().map(|t| t.ops).sum();
    let errors: u64 = tallies.iter().map(|t| t.errors).sum();
    let mut lat: Vec<u32> = tallies
        .iter()
        .flat_map(|t| t.latencies_us.iter().copied())
        .collect();
    lat.sort_unstable();
    if let Some(e) = tallies.iter().find_map(|t| t.first_error.as_ref()) {
        eprintln!("loadgen: first error: {e}");
    }
    let secs = o.duration.as_secs_f64();
    let line = serde_json::json!({
        "mode": if o.use_h2 { format!("{}-h2", o.mode.name()) } else { o.mode.name().to_owned() },
        "http": if o.use_h2 { "2 (one shared h2c connection)" } else { "1.1 (a connection per worker)" },
        "concurrency": o.concurrency,
        "duration_s": secs,
        "ops": ops,
        "ops_per_s": ops as f64 / secs,
        "errors": errors,
        "p50_ms": percentile(&lat, 0.50),
        "p90_ms": percentile(&lat, 0.90),
        "p99_ms": percentile(&lat, 0.99),
        "loadgen_cpu_s": cpu,
        "requests": ops * o.mode.requests(),
    });
    println!("{line}");
}
