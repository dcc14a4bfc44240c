//! What the replicas of a fleet tell each other about 2025-11-25 sessions, so that a
//! legacy client works behind a plain round-robin balancer: the answer to a pushed
//! question, a cancellation or the end of a session may arrive at another replica than
//! the one running the request.

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::fmt;
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::RequestId;

/// An event for every replica.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SessionEvent {
    /// The client answered a question this session pushed.
    Answer {
        /// The session.
        session: String,
        /// The id of the pushed request.
        id: RequestId,
        /// The answer (a result), or the error the client sent.
        outcome: Result<Box<RawValue>, ErrorObject>,
    },
    /// The client cancelled a request (`notifications/cancelled`).
    Cancel {
        /// The session.
        session: String,
        /// The cancelled request.
        request: RequestId,
    },
    /// The session ended (`DELETE`).
    End {
        /// The session.
        session: String,
    },
}

/// Publishes [`SessionEvent`]s to every other replica. Each replica hands what it
/// receives to [`McpService::deliver`](crate::http::McpService::deliver).
pub trait SessionBus: Send + Sync + fmt::Debug + 'static {
    /// Publishes an event (best effort: a lost event is a lost answer, which the push
    /// waiting for it times out on).
    fn publish(&self, event: SessionEvent) -> BoxFuture<'_, ()>;
}
