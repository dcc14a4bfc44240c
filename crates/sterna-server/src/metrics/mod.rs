//! Per-replica metrics through the [`metrics`](https://docs.rs/metrics) facade: sterna
//! records, your recorder (the Prometheus exporter `sterna serve --metrics` installs, or
//! any other) exports. Without a recorder every update is a no-op.
//!
//! | name | kind | labels | what |
//! |---|---|---|---|
//! | `sterna_requests_total` | counter | `method`, `outcome` | requests served, by JSON-RPC method (`other` for a method the server does not know) and outcome (`complete`, `input_required`, `error`, `cancelled`); both eras |
//! | `sterna_operation_rounds` | histogram | `method` | rounds an MRTR operation (`tools/call`, `prompts/get`, `resources/read`) took, recorded when it ends (1: answered at once) |
//! | `sterna_request_state_bytes` | histogram | | size of each `requestState` issued |
//! | `sterna_store_seconds` | histogram | `store`, `op` | latency of the stores (`replay`, `state`, `task`, `session`, `stream`) by operation |
//! | `sterna_bus_lag_seconds` | histogram | | from publication on another replica to delivery here (a fleet's bus) |
//! | `sterna_http_refused_total` | counter | `reason` | HTTP requests refused before routing (see [`REFUSED`]) |
//! | `sterna_sessions_live` | gauge | | 2025-11-25 sessions this replica holds live state for |
//! | `sterna_tasks_running` | gauge | | task runs in this process |
//! | `sterna_task_takeovers_total` | counter | `outcome` | tasks taken over after their lease lapsed (`rerun`, `failed`) |
//! | `sterna_stream_resumes_total` | counter | `from` | 2025-11-25 streams resumed with `Last-Event-ID`, from this replica's memory (`local`) or the shared store (`store`) |
//!
//! No label carries an id, a principal or a client-chosen string: every label value is
//! one of a fixed set. Install the recorder before building the [`Server`](crate::Server):
//! the per-request handles are registered when it is built.

#[cfg(feature = "http")]
pub(crate) mod refused;
pub(crate) mod stores;
#[cfg(all(test, feature = "http"))]
mod tests;

#[cfg(feature = "http")]
pub(crate) use refused::{Refusal, refused};

use metrics::{Counter, Histogram};
use std::time::Duration;

/// Requests served, by `method` and `outcome`.
pub const REQUESTS: &str = "sterna_requests_total";
/// Rounds an MRTR operation took, by `method`.
pub const ROUNDS: &str = "sterna_operation_rounds";
/// Bytes of each `requestState` issued.
pub const STATE_BYTES: &str = "sterna_request_state_bytes";
/// Store latency in seconds, by `store` and `op`.
pub const STORE_SECONDS: &str = "sterna_store_seconds";
/// Bus lag in seconds.
pub const BUS_LAG: &str = "sterna_bus_lag_seconds";
/// Requests refused before routing, by `reason`: `origin`, `content_type`, `accept`,
/// `body_too_large`, `body_timeout`, `timeout`, `malformed_body`, `method_not_allowed`,
/// `not_found`, `bad_headers`, `unauthenticated`, `invalid_token`, `insufficient_scope`,
/// `auth_unavailable`.
pub const REFUSED: &str = "sterna_http_refused_total";
/// 2025-11-25 sessions held live by this replica.
pub const SESSIONS_LIVE: &str = "sterna_sessions_live";
/// Task runs in this process.
pub const TASKS_RUNNING: &str = "sterna_tasks_running";
/// Tasks taken over, by `outcome`.
pub const TAKEOVERS: &str = "sterna_task_takeovers_total";
/// Streams resumed, by `from`.
pub const RESUMES: &str = "sterna_stream_resumes_total";

/// Describes every metric to the installed recorder (its help text and unit): call it
/// once after installing the recorder.
pub fn describe() {
    use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(REQUESTS, "Requests served, by JSON-RPC method and outcome");
    describe_histogram!(ROUNDS, "Rounds an MRTR operation took when it ended");
    describe_histogram!(STATE_BYTES, Unit::Bytes, "Size of each requestState issued");
    describe_histogram!(
        STORE_SECONDS,
        Unit::Seconds,
        "Store latency, by store and operation"
    );
    describe_histogram!(
        BUS_LAG,
        Unit::Seconds,
        "From publication on another replica to delivery here"
    );
    describe_counter!(REFUSED, "HTTP requests refused before routing, by reason");
    describe_gauge!(
        SESSIONS_LIVE,
        "2025-11-25 sessions held live by this replica"
    );
    describe_gauge!(TASKS_RUNNING, "Task runs in this process");
    describe_counter!(
        TAKEOVERS,
        "Tasks taken over after their lease lapsed, by outcome"
    );
    describe_counter!(
        RESUMES,
        "2025-11-25 streams resumed, by where their events came from"
    );
}

/// Records the lag of one message of a fleet's bus (for bus implementations: the time
/// from its publication on another replica to its delivery here).
pub fn bus_lag(lag: Duration) {
    metrics::histogram!(BUS_LAG).record(lag.as_secs_f64());
}

/// The outcomes a request is counted under.
const OUTCOMES: [&str; 4] = ["complete", "input_required", "error", "cancelled"];

/// The handles of one method.
pub(crate) struct MethodMetrics {
    outcomes: [Counter; 4],
    rounds: Histogram,
}

impl MethodMetrics {
    fn new(method: &'static str) -> Self {
        Self {
            outcomes: OUTCOMES
                .map(|o| metrics::counter!(REQUESTS, "method" => method, "outcome" => o)),
            rounds: metrics::histogram!(ROUNDS, "method" => method),
        }
    }

    /// Counts a request that ended with `outcome` (as its span records it; `None`:
    /// cancelled).
    pub(crate) fn ended(&self, outcome: Option<&str>) {
        let i = match outcome {
            Some("complete") => 0,
            Some("input_required") => 1,
            Some(_) => 2,
            None => 3,
        };
        self.outcomes[i].increment(1);
    }

    /// Records that an operation ended after `rounds` rounds.
    pub(crate) fn rounds(&self, rounds: u32) {
        self.rounds.record(f64::from(rounds));
    }
}

/// The per-request handles of one server, registered when it is built.
pub(crate) struct RequestMetrics {
    /// In [`CORE`]'s order, then the wings': a scan compares lengths first, so finding
    /// `tools/call` costs a few comparisons where a hash of the name cost more.
    by_method: Vec<(&'static str, MethodMetrics)>,
    other: MethodMetrics,
    state_bytes: Histogram,
}

/// The methods of the core, in both eras (the calls first: the most frequent).
const CORE: &[&str] = &[
    "tools/call",
    "prompts/get",
    "resources/read",
    "initialize",
    "ping",
    "server/discover",
    "subscriptions/listen",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
];

impl RequestMetrics {
    /// Handles for the core's methods and `extra` (the wings').
    pub(crate) fn new(extra: impl IntoIterator<Item = &'static str>) -> Self {
        let mut by_method: Vec<(&'static str, MethodMetrics)> = Vec::new();
        for m in CORE.iter().copied().chain(extra) {
            if by_method.iter().all(|(known, _)| *known != m) {
                by_method.push((m, MethodMetrics::new(m)));
            }
        }
        Self {
            by_method,
            other: MethodMetrics::new("other"),
            state_bytes: metrics::histogram!(STATE_BYTES),
        }
    }

    /// The handles of `method` (`other` for one the server does not know).
    pub(crate) fn of(&self, method: &str) -> &MethodMetrics {
        self.by_method
            .iter()
            .find(|(m, _)| *m == method)
            .map_or(&self.other, |(_, handles)| handles)
    }

    /// Records the size of a `requestState` issued.
    pub(crate) fn state_issued(&self, bytes: usize) {
        self.state_bytes.record(bytes as f64);
    }
}

impl std::fmt::Debug for RequestMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestMetrics")
            .field("methods", &self.by_method.len())
            .finish()
    }
}
