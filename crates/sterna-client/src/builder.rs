//! Building a client: its identity, the handlers (which decide the declared
//! capabilities), limits and era mode, gathered into the state its stages share. The
//! finishing methods that make the [`Client`](crate::Client) from a transport
//! ([`ClientBuilder::build`] and its shortcuts) are in `client.rs`, above this file.

use super::era::EraMode;
use super::events::{EventCallback, EventHub, ServerEvent};
use super::handlers::{
    FormHandler, Handlers, RootsHandler, SamplingHandler, StaticRoots, UrlHandler,
};
use super::link::Dual;
use super::shared::{Limits, Shared};
use super::transport::{NotificationSink, Transport};
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use sterna_types::capabilities::{ClientCapabilities, ElicitationCapability, SamplingCapability};
use sterna_types::meta::Implementation;
use sterna_types::roots::Root;

/// Builds a [`Client`](crate::Client): identity, handlers (which decide the declared capabilities),
/// limits, then a transport.
pub struct ClientBuilder {
    info: Implementation,
    handlers: Handlers,
    limits: Limits,
    sink: Option<NotificationSink>,
    on_event: Option<EventCallback>,
    send_client_info: bool,
    era_mode: EraMode,
    probe_wait: Duration,
    tasks: bool,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("info", &self.info)
            .finish()
    }
}

impl ClientBuilder {
    pub(crate) fn new(info: Implementation) -> Self {
        Self {
            info,
            handlers: Handlers::default(),
            limits: Limits::default(),
            sink: None,
            on_event: None,
            send_client_info: true,
            era_mode: EraMode::default(),
            probe_wait: Duration::from_secs(5),
            tasks: false,
        }
    }

    /// Answers form elicitations (declares `elicitation.form`).
    pub fn on_elicit(mut self, handler: impl FormHandler) -> Self {
        self.handlers.form = Some(Arc::new(handler));
        self
    }

    /// Answers URL elicitations (declares `elicitation.url`).
    pub fn on_elicit_url(mut self, handler: impl UrlHandler) -> Self {
        self.handlers.url = Some(Arc::new(handler));
        self
    }

    /// Answers sampling requests (declares `sampling`).
    pub fn on_sample(mut self, handler: impl SamplingHandler) -> Self {
        self.handlers.sampling = Some(Arc::new(handler));
        self
    }

    /// The sampling handler supports tool use (declares `sampling.tools`).
    pub fn sampling_tools(mut self, yes: bool) -> Self {
        self.handlers.sampling_tools = yes;
        self
    }

    /// Answers roots requests with a handler (declares `roots`).
    pub fn on_roots(mut self, handler: impl RootsHandler) -> Self {
        self.handlers.roots = Some(Arc::new(handler));
        self
    }

    /// Answers roots requests with a fixed list (declares `roots`).
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.handlers.roots = Some(Arc::new(StaticRoots(Arc::new(roots))));
        self
    }

    /// Receives the server's notifications (progress, log messages, subscription events)
    /// as raw JSON-RPC messages.
    pub fn on_notification(mut self, sink: impl Fn(&[u8]) + Send + Sync + 'static) -> Self {
        self.sink = Some(Arc::new(sink));
        self
    }

    /// Receives the server's notifications as typed [`ServerEvent`]s (list changes,
    /// resource updates, completed URL elicitations, progress, log messages), from either
    /// era. See also [`Client::events`](crate::Client::events).
    pub fn on_event(mut self, callback: impl Fn(ServerEvent) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(callback));
        self
    }

    /// How the client finds the server's era (default [`EraMode::Auto`]: probe with
    /// `server/discover`, fall back to 2025-11-25).
    pub fn era(mut self, mode: EraMode) -> Self {
        self.era_mode = mode;
        self
    }

    /// How long the era probe waits for an answer (default 5 s). On stdio silence means
    /// a 2025-11-25 server; over HTTP it is an error.
    pub fn probe_timeout(mut self, wait: Duration) -> Self {
        self.probe_wait = wait;
        self
    }

    /// The most rounds one call may take (default 10).
    pub fn max_rounds(mut self, n: u32) -> Self {
        self.limits.max_rounds = n.max(1);
        self
    }

    /// The most questions (`inputRequests`) one round may ask (default 64). A round that
    /// asks more is a protocol violation: none of its questions is put to the handlers
    /// (or the user), and the call ends.
    pub fn max_input_requests(mut self, n: usize) -> Self {
        self.limits.max_input_requests = n.max(1);
        self
    }

    /// The most time one call may take, rounds and handlers included (default 10 min).
    pub fn time_budget(mut self, budget: Duration) -> Self {
        self.limits.budget = budget;
        self
    }

    /// The pause before retrying a round that carried only state (no questions): starts
    /// at `first`, doubles each consecutive state-only round, up to `max` (default 50 ms
    /// to 1 s).
    pub fn state_only_backoff(mut self, first: Duration, max: Duration) -> Self {
        self.limits.backoff = (first, max.max(first));
        self
    }

    /// Declares the tasks extension (`io.modelcontextprotocol/tasks`) on every request: a
    /// server may then answer a `tools/call` with a task, which
    /// [`Client::run`](crate::Client::run) follows
    /// to its end (polling, answering its questions with the same handlers, cancelling
    /// it when the call is dropped or runs out of time).
    pub fn tasks(mut self, yes: bool) -> Self {
        self.tasks = yes;
        self
    }

    /// Leaves `clientInfo` out of `_meta`.
    pub fn without_client_info(mut self) -> Self {
        self.send_client_info = false;
        self
    }

    /// The capabilities the handlers registered so far allow.
    pub fn capabilities(&self) -> ClientCapabilities {
        let h = &self.handlers;
        ClientCapabilities {
            elicitation: (h.form.is_some() || h.url.is_some()).then(|| ElicitationCapability {
                form: h.form.is_some().then(Default::default),
                url: h.url.is_some().then(Default::default),
            }),
            sampling: h.sampling.is_some().then(|| SamplingCapability {
                context: None,
                tools: h.sampling_tools.then(Default::default),
            }),
            roots: h.roots.is_some().then(Default::default),
            extensions: self.tasks.then(|| {
                let ext = sterna_types::tasks::EXTENSION.to_owned();
                [(ext, Default::default())].into_iter().collect()
            }),
            ..ClientCapabilities::default()
        }
    }

    /// The shared state of a client over `transport` (the client itself is made in
    /// `client.rs`: [`build`](Self::build) and the shortcuts next to it).
    pub(crate) fn into_shared(self, transport: impl Transport) -> Shared {
        let caps = self.capabilities();
        let (transport, dual) = Dual::split(transport);
        let events = Arc::new(EventHub::new(self.sink, self.on_event));
        Shared {
            transport,
            dual,
            info: self.send_client_info.then(|| self.info.clone()),
            identity: self.info,
            caps,
            handlers: self.handlers,
            limits: self.limits,
            sink: events.sink(),
            events,
            era_mode: self.era_mode,
            probe_wait: self.probe_wait,
            conn: tokio::sync::Mutex::new(None),
            version: Mutex::new(sterna_types::version::LATEST.to_owned()),
            next_id: Arc::new(AtomicI64::new(1)),
            mirrors: RwLock::new(None),
        }
    }
}
