//! OpenTelemetry export (feature `otel`), into an in-memory exporter: the rounds of one
//! flow served by two replicas share a flow id, and a caller's `traceparent` is the parent
//! of the request span; a malformed one is ignored.

#![allow(missing_docs)]

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::trace::opentelemetry::KeyValue;
use sterna::server::trace::opentelemetry::trace::{SpanId, TraceId, TracerProvider};
use sterna::server::trace::opentelemetry_sdk::error::OTelSdkResult;
use sterna::server::trace::opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use sterna::server::{Context, NoArgs, RequestEnv, Tool};
use sterna::server::{HandlerError, Server};
use sterna::types::jsonrpc::RequestId;
use tracing_subscriber::layer::SubscriberExt;

/// Keeps every exported span.
#[derive(Debug, Clone, Default)]
struct Memory(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Memory {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.0.lock().unwrap().extend(batch);
        Ok(())
    }
}

#[derive(Deserialize, JsonSchema)]
struct Pick {
    region: String,
}

fn replica(keys: &str) -> Server {
    Server::builder("traced", "1")
        .state_keys(StateKeys::from_base64_list(keys).unwrap())
        .tool(
            Tool::new("pick")
                .ask(|_: &NoArgs| form::<Pick>("Region?"))
                .run(|_c: Context, _: NoArgs, p: Elicitation<Pick>| async move {
                    Ok::<_, HandlerError>(format!("picked {}", p.required()?.region))
                }),
        )
        .build()
        .unwrap()
}

fn params(traceparent: &str, extra: Value) -> Box<RawValue> {
    let mut p = json!({
        "name": "pick",
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
            "traceparent": traceparent,
        }
    });
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            p[k] = v;
        }
    }
    to_raw_value(&p).unwrap()
}

async fn call(server: &Server, traceparent: &str, extra: Value) -> Value {
    let p = params(traceparent, extra);
    let r = server
        .handle(
            RequestId::Number(1),
            "tools/call",
            Some(&p),
            RequestEnv::new(),
        )
        .await
        .unwrap();
    serde_json::from_str(r.body.unwrap().get()).unwrap()
}

fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|KeyValue { key: k, .. }| k.as_str() == key)
        .map(|kv| kv.value.as_str().into_owned())
}

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[tokio::test]
async fn two_replicas_one_flow_one_flow_id_under_the_callers_trace() {
    let memory = Memory::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(memory.clone())
        .build();
    let layer =
        sterna::server::trace::tracing_opentelemetry::layer().with_tracer(provider.tracer("t"));
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));

    let keys = StateKeys::generate_base64();
    let (a, b) = (replica(&keys), replica(&keys));
    let first = call(&a, TRACEPARENT, json!({})).await;
    let state = first["requestState"].as_str().unwrap().to_owned();
    let answers = json!({"pick": {"action": "accept", "content": {"region": "eu"}}});
    let extra = json!({"inputResponses": answers, "requestState": state});
    // The retry lands on the other replica, with a malformed traceparent (ignored).
    let done = call(&b, "00-not-a-trace-parent", extra).await;
    assert_eq!(done["resultType"], "complete", "{done}");

    let spans = memory.0.lock().unwrap().clone();
    let requests: Vec<&SpanData> = spans.iter().filter(|s| s.name == "tools/call").collect();
    assert_eq!(requests.len(), 2, "{spans:#?}");
    let (r1, r2) = (requests[0], requests[1]);
    let flow = attr(r1, "mcp.flow_id").expect("the first round has a flow id");
    assert_eq!(flow.len(), 32);
    assert_eq!(
        attr(r2, "mcp.flow_id"),
        Some(flow),
        "one flow id across replicas"
    );
    assert_eq!(attr(r1, "mcp.round").as_deref(), Some("1"));
    assert_eq!(attr(r2, "mcp.round").as_deref(), Some("2"));
    assert_eq!(attr(r1, "mcp.outcome").as_deref(), Some("input_required"));
    assert_eq!(attr(r2, "mcp.outcome").as_deref(), Some("complete"));
    assert_eq!(attr(r1, "mcp.target").as_deref(), Some("pick"));
    assert!(attr(r1, "mcp.latency_us").is_some());
    // The caller's trace is the parent of round 1; round 2's bad header started a new one.
    let want = TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap();
    assert_eq!(r1.span_context.trace_id(), want);
    assert_eq!(
        r1.parent_span_id,
        SpanId::from_hex("00f067aa0ba902b7").unwrap()
    );
    assert!(r1.parent_span_is_remote);
    assert_eq!(attr(r1, "mcp.traceparent").as_deref(), Some(TRACEPARENT));
    assert_ne!(r2.span_context.trace_id(), want);
    assert_eq!(attr(r2, "mcp.traceparent"), None);
}

#[tokio::test]
async fn errors_carry_their_code() {
    let memory = Memory::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(memory.clone())
        .build();
    let layer =
        sterna::server::trace::tracing_opentelemetry::layer().with_tracer(provider.tracer("t"));
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
    let server = replica(&StateKeys::generate_base64());
    let extra = json!({"inputResponses": {}, "requestState": "forged"});
    let p = params(TRACEPARENT, extra);
    let r = server
        .handle(
            RequestId::Number(7),
            "tools/call",
            Some(&p),
            RequestEnv::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.error_code().map(|c| c.0), Some(-32602));
    let spans = memory.0.lock().unwrap().clone();
    let span = spans.iter().find(|s| s.name == "tools/call").unwrap();
    assert_eq!(attr(span, "mcp.outcome").as_deref(), Some("error"));
    assert_eq!(attr(span, "mcp.error_code").as_deref(), Some("-32602"));
}

/// The setup the guide shows (crates/sterna/docs/guide.md, "OpenTelemetry"): the lines
/// between the markers are the guide's code block, word for word
/// (`scripts/lib/markdown_links.py` checks it).
#[test]
fn the_guides_setup_compiles_and_installs_a_layer() {
    // [guide]
    use sterna::server::trace::opentelemetry::trace::TracerProvider as _;
    use sterna::server::trace::opentelemetry_sdk::trace::SdkTracerProvider;
    use tracing_subscriber::layer::SubscriberExt;
    let provider = SdkTracerProvider::builder()
        // .with_batch_exporter(an OTLP exporter from `opentelemetry-otlp`)
        .build();
    let layer = sterna::server::trace::tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("my-server"));
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer)).unwrap();
    // [/guide]
}
