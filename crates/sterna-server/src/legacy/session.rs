//! A legacy (2025-11-25) session: what `initialize` negotiated, and the session-wide state
//! the 2025 revisions keep (log level, resource subscriptions, pushes in flight).

use super::pushes::Pushes;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use sterna_types::capabilities::ClientCapabilities;
use sterna_types::legacy::{InitializeParams, at_least_2025_11_25, negotiate};
use sterna_types::meta::{Implementation, LoggingLevel, ProgressToken, RequestMeta};

/// One legacy session: a stdio process after `initialize`, or an HTTP session.
#[derive(Debug)]
pub(crate) struct LegacySession {
    pub(crate) version: &'static str,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client: Implementation,
    initialized: AtomicBool,
    log_level: Mutex<Option<LoggingLevel>>,
    subscriptions: Mutex<BTreeSet<String>>,
    pub(crate) pushes: Arc<Pushes>,
}

/// What a session store keeps of a legacy session (the live parts — pushes waiting for
/// answers, streams — stay with the process serving them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The negotiated revision.
    pub version: String,
    /// The client's capabilities, as declared at `initialize`.
    pub capabilities: ClientCapabilities,
    /// The client's self-description.
    pub client: Implementation,
    /// `notifications/initialized` arrived.
    pub initialized: bool,
    /// `logging/setLevel`, if sent.
    pub log_level: Option<LoggingLevel>,
    /// `resources/subscribe`d URIs.
    pub subscriptions: BTreeSet<String>,
    /// The principal that opened the session (other principals cannot use it).
    pub principal: Option<String>,
    /// The DPoP key (its RFC 7638 thumbprint) the opener's token was bound to: the
    /// session then serves only requests proven with that key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_jkt: Option<String>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl LegacySession {
    /// The session `initialize` opens.
    pub(crate) fn open(params: InitializeParams) -> Self {
        let version = negotiate(&params.protocol_version);
        let mut capabilities = params.capabilities;
        if !at_least_2025_11_25(version) {
            // URL elicitation and tool-enabled sampling arrived in 2025-11-25.
            if let Some(e) = capabilities.elicitation.as_mut() {
                e.url = None;
            }
            if let Some(s) = capabilities.sampling.as_mut() {
                s.tools = None;
            }
        }
        Self {
            version,
            capabilities,
            client: params.client_info,
            initialized: AtomicBool::new(false),
            log_level: Mutex::new(None),
            subscriptions: Mutex::new(BTreeSet::new()),
            pushes: Arc::default(),
        }
    }

    #[cfg(feature = "http")]
    /// A session from its stored record, with the pushes of this process.
    pub(crate) fn from_record(record: &SessionRecord, pushes: Arc<Pushes>) -> Self {
        Self {
            version: sterna_types::legacy::negotiate(&record.version),
            capabilities: record.capabilities.clone(),
            client: record.client.clone(),
            initialized: AtomicBool::new(record.initialized),
            log_level: Mutex::new(record.log_level),
            subscriptions: Mutex::new(record.subscriptions.clone()),
            pushes,
        }
    }

    /// What a store keeps of this session, opened by `principal` (with a token bound to
    /// the DPoP key `dpop_jkt`).
    #[cfg(feature = "http")]
    pub(crate) fn record(
        &self,
        principal: Option<String>,
        dpop_jkt: Option<String>,
    ) -> SessionRecord {
        SessionRecord {
            version: self.version.to_owned(),
            capabilities: self.capabilities.clone(),
            client: self.client.clone(),
            initialized: self.is_initialized(),
            log_level: *lock(&self.log_level),
            subscriptions: lock(&self.subscriptions).clone(),
            principal,
            dpop_jkt,
        }
    }

    /// Whether a request changed this session since `before` was stored (its
    /// initialization, log level or subscriptions: what a request can change).
    #[cfg(feature = "http")]
    pub(crate) fn changed_since(&self, before: &SessionRecord) -> bool {
        self.is_initialized() != before.initialized
            || *lock(&self.log_level) != before.log_level
            || *lock(&self.subscriptions) != before.subscriptions
    }

    /// `notifications/initialized` arrived.
    pub(crate) fn mark_initialized(&self) {
        self.initialized.store(true, Ordering::Relaxed);
    }

    /// Whether the client said it is initialized (pushes wait for it).
    pub(crate) fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::Relaxed)
    }

    /// `logging/setLevel`.
    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        *lock(&self.log_level) = Some(level);
    }

    /// `resources/subscribe` (`true`) or `resources/unsubscribe` (`false`).
    pub(crate) fn subscribe(&self, uri: &str, on: bool) {
        let mut subs = lock(&self.subscriptions);
        if on {
            subs.insert(uri.to_owned());
        } else {
            subs.remove(uri);
        }
    }

    /// Whether the client subscribed to `uri`.
    pub(crate) fn subscribed(&self, uri: &str) -> bool {
        lock(&self.subscriptions).contains(uri)
    }

    /// The `_meta` a handler sees for a request of this session: the negotiated revision
    /// and capabilities stand in for what a 2026-07-28 request carries itself. Until the
    /// client sets a level, every log message goes out (2025 semantics).
    pub(crate) fn meta(&self, progress_token: Option<ProgressToken>) -> RequestMeta {
        let mut meta = RequestMeta::new(self.version, self.capabilities.clone());
        meta.client_info = Some(self.client.clone());
        meta.log_level = Some(lock(&self.log_level).unwrap_or(LoggingLevel::Debug));
        meta.progress_token = progress_token;
        meta
    }
}
