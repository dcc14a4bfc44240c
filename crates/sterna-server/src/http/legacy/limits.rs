//! What one 2025-11-25 session may hold and do: the size of what its record keeps
//! (capabilities, client info, subscriptions), its requests in flight, its pushes waiting
//! for answers, and what it may send to the other replicas of a fleet. Each refusal names
//! the limit it hit.

use crate::legacy::{LegacyRequest, SessionRecord};
use crate::server::quota::limit_error;
use serde::Deserialize;
use serde_json::value::RawValue;
use sterna_types::error::{ErrorCode, ErrorObject};

/// Bounds of one 2025-11-25 session (see [`SessionConfig::limits`](super::SessionConfig::limits)).
///
/// How many sessions one client may hold is the store's business
/// ([`MemorySessionStore::per_principal`](super::MemorySessionStore::per_principal)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionLimits {
    /// The largest `capabilities` an `initialize` may declare, in bytes of JSON (default
    /// 16 KiB). A larger one is refused with `-32602`.
    pub max_capabilities: usize,
    /// The largest `clientInfo` an `initialize` may carry, in bytes of JSON (default
    /// 8 KiB, room for an inline icon). A larger one is refused with `-32602`.
    pub max_client_info: usize,
    /// How many resources a session may be subscribed to at once (default 64).
    pub max_subscriptions: usize,
    /// The longest URI a session may subscribe to, in bytes (default 1024).
    pub max_subscription_uri: usize,
    /// How many requests of one session may run at once (default 32); one more is
    /// answered `429`.
    pub max_in_flight: usize,
    /// How many questions one session may have pushed and not yet had answered (default
    /// 32). A request that would push one more waits until an earlier one is answered,
    /// times out or is cancelled, within its leg time.
    pub max_pending_pushes: usize,
    /// The largest event (an answer to a pushed question, a cancellation) a replica
    /// publishes to the fleet's bus, in bytes of JSON (default 1 MiB); a larger answer
    /// posted to a replica that does not run its request is refused with `413`.
    pub max_published: usize,
    /// How many cancellations and answers to questions nobody waits for one session may
    /// send per second for other replicas (default 16, with bursts as large); beyond,
    /// such POSTs are answered `429` until the budget refills. Answers to questions that
    /// wait are relayed without being charged (each at most once).
    pub publish_rate: u32,
    /// How many events of a session's streams are kept for resumption with
    /// `Last-Event-ID` (default 4096): per stream in the memory of the replica running
    /// the request, and for the whole session in a shared
    /// [`StreamStore`](super::StreamStore) (older events are dropped first; a client that
    /// resumes after them misses them).
    pub max_replay_events: usize,
    /// How many ended streams of a session the replica that ran their requests keeps for
    /// resumption within the resume window (default 64, besides the requests still
    /// running): a client sending requests as fast as it can holds a bounded number; the
    /// oldest are forgotten first (a sweep keeps between half of them and all).
    pub max_replay_streams: usize,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_capabilities: 16 * 1024,
            max_client_info: 8 * 1024,
            max_subscriptions: 64,
            max_subscription_uri: 1024,
            max_in_flight: 32,
            max_pending_pushes: 32,
            max_published: 1024 * 1024,
            publish_rate: 16,
            max_replay_events: 4096,
            max_replay_streams: 64,
        }
    }
}

impl SessionLimits {
    /// Refuses an `initialize` whose `capabilities` or `clientInfo` is too large as sent,
    /// before anything is decoded (a 4 MB declaration is never turned into values).
    pub(crate) fn check_initialize(&self, params: Option<&RawValue>) -> Result<(), ErrorObject> {
        #[derive(Deserialize)]
        struct Parts<'a> {
            #[serde(borrow, default)]
            capabilities: Option<&'a RawValue>,
            #[serde(borrow, default, rename = "clientInfo")]
            client_info: Option<&'a RawValue>,
        }
        // Unreadable params are `initialize`'s to refuse.
        let Some(Ok(parts)) = params.map(|p| serde_json::from_str::<Parts<'_>>(p.get())) else {
            return Ok(());
        };
        let caps = parts.capabilities.map_or(0, |r| r.get().len());
        if caps > self.max_capabilities {
            let max = self.max_capabilities;
            return Err(too_large("capabilities", caps, "max_capabilities", max));
        }
        let info = parts.client_info.map_or(0, |r| r.get().len());
        if info > self.max_client_info {
            let max = self.max_client_info;
            return Err(too_large("clientInfo", info, "max_client_info", max));
        }
        Ok(())
    }

    /// Refuses a record `initialize` would store when its parts are too large (as the
    /// store keeps them).
    pub(crate) fn check_record(&self, record: &SessionRecord) -> Result<(), ErrorObject> {
        let caps = json_len(&record.capabilities);
        if caps > self.max_capabilities {
            return Err(too_large(
                "capabilities",
                caps,
                "max_capabilities",
                self.max_capabilities,
            ));
        }
        let info = json_len(&record.client);
        if info > self.max_client_info {
            return Err(too_large(
                "clientInfo",
                info,
                "max_client_info",
                self.max_client_info,
            ));
        }
        Ok(())
    }

    /// Refuses a `resources/subscribe` that would make the record too large: a URI too
    /// long, or one more subscription than allowed. Other requests pass.
    pub(crate) fn check_request(
        &self,
        record: &SessionRecord,
        request: &LegacyRequest,
    ) -> Result<(), ErrorObject> {
        // Judged on the request as decoded to run it.
        let LegacyRequest::Subscribe { uri, on: true } = request else {
            return Ok(());
        };
        if uri.len() > self.max_subscription_uri {
            let msg = format!(
                "Invalid params: the URI is {} bytes, longer than this server accepts for a subscription ({} bytes, max_subscription_uri)",
                uri.len(),
                self.max_subscription_uri
            );
            let limit = self.max_subscription_uri;
            return Err(limit_error(
                ErrorCode::INVALID_PARAMS,
                msg,
                "max_subscription_uri",
                limit,
            ));
        }
        let held = record.subscriptions.len();
        if held >= self.max_subscriptions && !record.subscriptions.contains(uri) {
            let msg = format!(
                "Invalid params: this session is subscribed to {held} resources, the most it may (max_subscriptions = {}); unsubscribe from one first",
                self.max_subscriptions
            );
            let max = self.max_subscriptions;
            return Err(limit_error(
                ErrorCode::INVALID_PARAMS,
                msg,
                "max_subscriptions",
                max,
            ));
        }
        Ok(())
    }
}

fn json_len<T: serde::Serialize>(v: &T) -> usize {
    serde_json::to_vec(v).map_or(usize::MAX, |b| b.len())
}

fn too_large(what: &str, len: usize, limit: &str, max: usize) -> ErrorObject {
    let msg = format!(
        "Invalid params: {what} is {len} bytes of JSON, more than this server keeps for a session ({max} bytes, {limit})"
    );
    limit_error(ErrorCode::INVALID_PARAMS, msg, limit, max)
}
