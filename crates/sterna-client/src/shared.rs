//! The state every stage of the client shares — the transport, the handlers, the limits,
//! the era found, the ids, the learned header annotations — below the stages that take it
//! (`connect.rs`, `driver.rs`, `rounds.rs`, `tasks.rs`, `legacy/rounds.rs`) and the
//! [`Client`](crate::Client) that owns it (built by the `ClientBuilder`).

use crate::era::EraMode;
use crate::events::EventHub;
use crate::handlers::Handlers;
use crate::link::{Connected, Dual};
use crate::transport::{NotificationSink, Transport};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use sterna_types::capabilities::ClientCapabilities;
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::Implementation;
use sterna_types::mirror::HeaderParam;

/// Limits of the round driver.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_rounds: u32,
    pub(crate) max_input_requests: usize,
    pub(crate) budget: Duration,
    pub(crate) backoff: (Duration, Duration),
}

impl Limits {
    /// Whether one round (or one look at a task) may ask `asked` questions.
    pub(crate) fn questions(&self, asked: usize) -> Result<(), crate::error::ProtocolViolation> {
        let max = self.max_input_requests;
        if asked > max {
            return Err(crate::error::ProtocolViolation::TooManyQuestions { asked, max });
        }
        Ok(())
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_rounds: 10,
            max_input_requests: 64,
            budget: Duration::from_secs(600),
            backoff: (Duration::from_millis(50), Duration::from_secs(1)),
        }
    }
}

/// What a client's stages share (one per client, behind an `Arc`).
pub(crate) struct Shared {
    pub(crate) transport: Arc<dyn Transport>,
    /// The same transport, when it can also carry a 2025-11-25 session.
    pub(crate) dual: Option<Dual>,
    /// `clientInfo` for `_meta` (none when left out).
    pub(crate) info: Option<Implementation>,
    /// `clientInfo` for `initialize` (always sent there).
    pub(crate) identity: Implementation,
    pub(crate) caps: ClientCapabilities,
    pub(crate) handlers: Handlers,
    pub(crate) limits: Limits,
    pub(crate) sink: NotificationSink,
    pub(crate) events: Arc<EventHub>,
    pub(crate) era_mode: EraMode,
    pub(crate) probe_wait: Duration,
    pub(crate) conn: tokio::sync::Mutex<Option<Connected>>,
    pub(crate) version: Mutex<String>,
    pub(crate) next_id: Arc<AtomicI64>,
    /// `x-mcp-header` annotations by tool, learned from `tools/list`.
    pub(crate) mirrors: RwLock<Option<HashMap<String, Vec<HeaderParam>>>>,
}

impl Shared {
    /// A new request id.
    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// The protocol version in use (after any negotiation).
    pub(crate) fn version(&self) -> String {
        self.version
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Sets the protocol version in use.
    pub(crate) fn set_version(&self, v: String) {
        *self.version.lock().unwrap_or_else(|p| p.into_inner()) = v;
    }
}
