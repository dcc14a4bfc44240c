//! OpenTelemetry (feature `otel`): a valid `traceparent` becomes the request span's remote
//! parent, so the exported span continues the caller's trace.

use super::TraceParent;
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// Makes `tp` the remote parent of `span` (before it is first entered).
pub(crate) fn set_remote_parent(span: &tracing::Span, tp: &TraceParent) {
    let remote = SpanContext::new(
        TraceId::from_bytes(tp.trace_id),
        SpanId::from_bytes(tp.parent_id),
        TraceFlags::new(tp.flags),
        true,
        TraceState::default(),
    );
    let cx = opentelemetry::Context::new().with_remote_span_context(remote);
    let _ = span.set_parent(cx);
}
