//! Tracing of requests: one span per request (`mcp.request`, target `sterna::request`)
//! with its method, target, round, flow id, outcome and latency (fields `mcp.method`,
//! `mcp.target`, `mcp.round`, `mcp.flow_id`, `mcp.outcome`, `mcp.error_code`,
//! `mcp.latency_us`), and the caller's W3C `traceparent` from `_meta` (`mcp.traceparent`).
//!
//! The span costs one interest check when no subscriber wants it: every field is filled
//! only when the span is enabled. With the `otel` feature and a `tracing-opentelemetry`
//! layer installed, a valid `traceparent` becomes the span's remote parent.

#[cfg(feature = "otel")]
mod otel;
mod traceparent;

pub use traceparent::TraceParent;

/// The OpenTelemetry crates sterna is built with (feature `otel`): build the exporter
/// pipeline with these, so every version agrees.
#[cfg(feature = "otel")]
pub use {opentelemetry, opentelemetry_sdk, tracing_opentelemetry};

use serde_json::Value;
use std::future::Future;
use std::time::Instant;
use sterna_types::meta::RequestMeta;
use tracing::Span;
use tracing::field::Empty;
use tracing::instrument::Instrument;

/// The span of one request, carried to the stages that add to it (a disabled span when
/// nobody listens).
#[derive(Debug, Clone)]
pub(crate) struct RequestSpan(pub(crate) Span);

impl Default for RequestSpan {
    fn default() -> Self {
        Self(Span::none())
    }
}

impl RequestSpan {
    /// Records the round number (1 for a first request).
    pub(crate) fn round(&self, round: u32) {
        if !self.0.is_disabled() {
            self.0.record("mcp.round", round);
        }
    }

    /// Records the flow id (hex).
    pub(crate) fn flow(&self, id: &[u8; 16]) {
        if !self.0.is_disabled() {
            self.0
                .record("mcp.flow_id", tracing::field::display(Hex(id)));
        }
    }
}

struct Hex<'a>(&'a [u8]);

impl std::fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// The span of a request; disabled (and nothing else computed) when no subscriber is
/// interested.
pub(crate) fn request_span(method: &str, target: Option<&str>, meta: &RequestMeta) -> Span {
    let span = tracing::info_span!(
        target: "sterna::request",
        "mcp.request",
        otel.name = method,
        otel.kind = "server",
        mcp.method = method,
        mcp.target = Empty,
        mcp.round = Empty,
        mcp.flow_id = Empty,
        mcp.outcome = Empty,
        mcp.error_code = Empty,
        mcp.latency_us = Empty,
        mcp.traceparent = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    if let Some(t) = target {
        span.record("mcp.target", t);
    }
    let parent = meta.other.get("traceparent").and_then(Value::as_str);
    if let Some(tp) = parent.and_then(TraceParent::parse) {
        span.record("mcp.traceparent", tracing::field::display(tp));
        #[cfg(feature = "otel")]
        otel::set_remote_parent(&span, &tp);
    }
    span
}

/// How a request ended, as its span records it: `complete`, `input_required` or `error`
/// (with the code).
pub(crate) trait Ending {
    fn ending(&self) -> (&'static str, Option<i32>);
}

/// Records how the request ended and how long it took.
pub(crate) fn record_outcome<T: Ending>(span: &Span, ended: Option<&T>, started: Instant) {
    let (outcome, code) = ended.map_or(("cancelled", None), Ending::ending);
    if let Some(code) = code {
        span.record("mcp.error_code", code);
    }
    span.record("mcp.outcome", outcome);
    let us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    span.record("mcp.latency_us", us);
}

/// Runs `fut` inside `span` and records its outcome.
pub(crate) async fn traced<F, T>(span: Span, fut: F) -> Option<T>
where
    F: Future<Output = Option<T>>,
    T: Ending,
{
    let started = Instant::now();
    let ended = fut.instrument(span.clone()).await;
    record_outcome(&span, ended.as_ref(), started);
    ended
}
