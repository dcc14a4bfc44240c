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
    /// What `initialize` declared (capabilities, client info) as the `_meta` a handler
    /// sees, at the log level the session had when this value was made: shared by the
    /// session's requests, not copied for each.
    declared: Arc<RequestMeta>,
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
            declared: declared_meta(
                version,
                capabilities,
                params.client_info,
                LoggingLevel::Debug,
            ),
            initialized: AtomicBool::new(false),
            log_level: Mutex::new(None),
            subscriptions: Mutex::new(BTreeSet::new()),
            pushes: Arc::default(),
        }
    }

    #[cfg(feature = "http")]
    /// A session from its stored record, with the pushes of this process and what it
    /// keeps of the session's declarations (`declared`).
    pub(crate) fn from_record(
        record: &SessionRecord,
        pushes: Arc<Pushes>,
        declared: &Declared,
    ) -> Self {
        Self {
            version: sterna_types::legacy::negotiate(&record.version),
            declared: declared.of(record),
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
        let declared = &*self.declared;
        SessionRecord {
            version: self.version.to_owned(),
            capabilities: declared.client_capabilities.clone(),
            // Always set: `declared` is made from a client info.
            client: (declared.client_info.clone())
                .unwrap_or_else(|| Implementation::new("unknown", "0")),
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
    /// client sets a level, every log message goes out (2025 semantics). Shared with the
    /// session's other requests unless this one differs (a progress token, a new level).
    pub(crate) fn meta(&self, progress_token: Option<ProgressToken>) -> Arc<RequestMeta> {
        let level = Some(lock(&self.log_level).unwrap_or(LoggingLevel::Debug));
        if progress_token.is_none() && self.declared.log_level == level {
            return self.declared.clone();
        }
        let mut meta = (*self.declared).clone();
        meta.log_level = level;
        meta.progress_token = progress_token;
        Arc::new(meta)
    }
}

/// The `_meta` a session's requests share: its revision, capabilities and client info, at
/// log level `level`, with no progress token.
fn declared_meta(
    version: &'static str,
    capabilities: ClientCapabilities,
    client: Implementation,
    level: LoggingLevel,
) -> Arc<RequestMeta> {
    let mut meta = RequestMeta::new(version, capabilities);
    meta.client_info = Some(client);
    meta.log_level = Some(level);
    Arc::new(meta)
}

/// What this process keeps of a stored session's declarations: the `_meta` its requests
/// share ([`LegacySession::meta`]), made from the record once instead of for each request.
/// A record's revision, capabilities and client info never change after `initialize`;
/// only the log level does, and a value made at another level is made again.
#[cfg(feature = "http")]
#[derive(Debug, Default)]
pub(crate) struct Declared(Mutex<Option<Arc<RequestMeta>>>);

#[cfg(feature = "http")]
impl Declared {
    fn of(&self, record: &SessionRecord) -> Arc<RequestMeta> {
        let level = record.log_level.unwrap_or(LoggingLevel::Debug);
        let mut kept = lock(&self.0);
        match &*kept {
            Some(meta) if meta.log_level == Some(level) => meta.clone(),
            _ => {
                let meta = declared_meta(
                    sterna_types::legacy::negotiate(&record.version),
                    record.capabilities.clone(),
                    record.client.clone(),
                    level,
                );
                *kept = Some(meta.clone());
                meta
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sterna_types::jsonrpc::RequestId;

    fn opened() -> LegacySession {
        let capabilities = ClientCapabilities {
            elicitation: Some(Default::default()),
            ..Default::default()
        };
        LegacySession::open(InitializeParams {
            protocol_version: sterna_types::legacy::V2025_11_25.to_owned(),
            capabilities,
            client_info: Implementation::new("probe", "1.2"),
            meta: None,
        })
    }

    #[test]
    fn a_sessions_requests_share_its_meta_until_one_differs() {
        let session = opened();
        let a = session.meta(None);
        assert!(Arc::ptr_eq(&a, &session.meta(None)));
        assert_eq!(a.protocol_version, sterna_types::legacy::V2025_11_25);
        assert!(a.client_capabilities.elicitation.is_some());
        assert_eq!(
            a.client_info.as_ref().map(|c| c.name.as_str()),
            Some("probe")
        );
        assert_eq!(a.log_level, Some(LoggingLevel::Debug));
        assert_eq!(a.progress_token, None);

        let token = RequestId::Number(7);
        let with_token = session.meta(Some(token.clone()));
        assert_eq!(with_token.progress_token, Some(token));
        assert_eq!(with_token.client_info, a.client_info);
        assert!(session.meta(None).progress_token.is_none());

        session.set_log_level(LoggingLevel::Error);
        let quieter = session.meta(None);
        assert_eq!(quieter.log_level, Some(LoggingLevel::Error));
        assert_eq!(quieter.client_capabilities, a.client_capabilities);
    }

    #[cfg(feature = "http")]
    #[test]
    fn a_stored_sessions_declarations_are_read_once_per_log_level() {
        let record = opened().record(Some("alice".into()), None);
        let declared = Declared::default();
        let session = || LegacySession::from_record(&record, Arc::default(), &declared);
        let first = session().meta(None);
        assert!(Arc::ptr_eq(&first, &session().meta(None)));
        assert_eq!(session().record(Some("alice".into()), None), record);

        let mut louder = record.clone();
        louder.log_level = Some(LoggingLevel::Warning);
        let at_warning = LegacySession::from_record(&louder, Arc::default(), &declared);
        assert_eq!(at_warning.meta(None).log_level, Some(LoggingLevel::Warning));
        assert_eq!(at_warning.record(Some("alice".into()), None), louder);
        // Back at the first level, the value is made again, equal to the first.
        assert_eq!(*session().meta(None), *first);
    }
}
