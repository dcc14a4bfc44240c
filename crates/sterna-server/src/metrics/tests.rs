//! What the endpoint records: requests by method and outcome, rounds, refusals (with
//! their span), through a recorder and a subscriber local to the test's thread.

use crate::http::{HttpConfig, McpService};
use crate::{Context, NoArgs, Server, Tool};
use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tower_service::Service;
use tracing_subscriber::layer::SubscriberExt;

/// Counters and histogram counts by `name{label=value,…}`.
#[derive(Default)]
struct Recorded {
    counters: Mutex<HashMap<String, Arc<AtomicU64>>>,
    samples: Mutex<HashMap<String, Arc<Samples>>>,
}

#[derive(Default)]
struct Samples(Mutex<Vec<f64>>);

impl metrics::HistogramFn for Samples {
    fn record(&self, value: f64) {
        self.0.lock().unwrap().push(value);
    }
}

fn render(key: &Key) -> String {
    let labels: Vec<String> = key
        .labels()
        .map(|l| format!("{}={}", l.key(), l.value()))
        .collect();
    format!("{}{{{}}}", key.name(), labels.join(","))
}

impl Recorder for Recorded {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        let mut c = self.counters.lock().unwrap();
        Counter::from_arc(c.entry(render(key)).or_default().clone())
    }

    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::noop()
    }

    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        let mut s = self.samples.lock().unwrap();
        Histogram::from_arc(s.entry(render(key)).or_default().clone())
    }
}

impl Recorded {
    fn count(&self, key: &str) -> u64 {
        let c = self.counters.lock().unwrap();
        c.get(key).map_or(0, |v| v.load(Ordering::SeqCst))
    }

    fn samples(&self, key: &str) -> Vec<f64> {
        let s = self.samples.lock().unwrap();
        s.get(key)
            .map(|v| v.0.lock().unwrap().clone())
            .unwrap_or_default()
    }
}

/// The reasons of the `mcp.refused` spans opened.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Spans {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if attrs.metadata().name() != "mcp.refused" {
            return;
        }
        struct Reason<'a>(&'a mut String);
        impl tracing::field::Visit for Reason<'_> {
            fn record_str(&mut self, f: &tracing::field::Field, v: &str) {
                if f.name() == "mcp.refused.reason" {
                    v.clone_into(self.0);
                }
            }
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
        }
        let mut reason = String::new();
        attrs.record(&mut Reason(&mut reason));
        self.0.lock().unwrap().push(reason);
    }
}

fn post(body: &str, content_type: &str, method: &str) -> Request<Full<Bytes>> {
    Request::post("/mcp")
        .header("content-type", content_type)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", "echo")
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap()
}

fn call(method: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {
        "name": "echo", "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string()
}

#[tokio::test]
async fn requests_rounds_and_refusals_are_counted_and_refusals_traced() {
    let recorded = Arc::new(Recorded::default());
    let _metrics = metrics::set_default_local_recorder(&*recorded);
    let spans = Spans::default();
    let subscriber = tracing_subscriber::registry().with(spans.clone());
    let _tracing = tracing::subscriber::set_default(subscriber);
    let server = Server::builder("metrics", "1")
        .state_keys(crate::state::StateKeys::ephemeral())
        .tool(Tool::new("echo").handler(|_: Context, _: NoArgs| async { "echoed" }))
        .build()
        .unwrap();
    let mut service = McpService::new(server, HttpConfig::default());
    let r = service
        .call(post(&call("tools/call"), "text/plain", "tools/call"))
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
    let r = service
        .call(post(&call("tools/call"), "application/json", "tools/call"))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = service
        .call(post(&call("no/such"), "application/json", "no/such"))
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(
        recorded.count("sterna_http_refused_total{reason=content_type}"),
        1
    );
    assert_eq!(
        recorded.count("sterna_requests_total{method=tools/call,outcome=complete}"),
        1
    );
    assert_eq!(
        recorded.count("sterna_requests_total{method=other,outcome=error}"),
        1,
        "an unknown method is counted under other, never under its own name"
    );
    assert_eq!(
        recorded.samples("sterna_operation_rounds{method=tools/call}"),
        [1.0]
    );
    assert_eq!(*spans.0.lock().unwrap(), ["content_type"]);
}
