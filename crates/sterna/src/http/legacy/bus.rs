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
        #[serde(with = "outcome")]
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

/// The answer's (de)serialization. An internally tagged enum is read through serde's
/// buffer, which cannot hold a `RawValue` ("invalid type: newtype struct"): every answer
/// published on a bus failed to decode on the replica waiting for it. The answer is read
/// as a `Value` and turned back into raw JSON; the wire form is unchanged
/// (`{"Ok": <result>}` or `{"Err": <error>}`).
mod outcome {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::Value;
    use serde_json::value::RawValue;
    use sterna_types::error::ErrorObject;

    type Outcome = Result<Box<RawValue>, ErrorObject>;

    pub(super) fn serialize<S: Serializer>(o: &Outcome, s: S) -> Result<S::Ok, S::Error> {
        o.serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Outcome, D::Error> {
        match Result::<Value, ErrorObject>::deserialize(d)? {
            Ok(v) => serde_json::value::to_raw_value(&v)
                .map(Ok)
                .map_err(serde::de::Error::custom),
            Err(e) => Ok(Err(e)),
        }
    }
}

/// Publishes [`SessionEvent`]s to every other replica. Each replica hands what it
/// receives to [`McpService::deliver`](crate::http::McpService::deliver).
pub trait SessionBus: Send + Sync + fmt::Debug + 'static {
    /// Publishes an event (best effort: a lost event is a lost answer, which the push
    /// waiting for it times out on).
    fn publish(&self, event: SessionEvent) -> BoxFuture<'_, ()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_survives_serialization() {
        let raw = RawValue::from_string(r#"{"action":"accept"}"#.into()).unwrap();
        let event = SessionEvent::Answer {
            session: "s".into(),
            id: RequestId::from("p-1"),
            outcome: Ok(raw),
        };
        let json = serde_json::to_string(&event).unwrap();
        let back: SessionEvent = serde_json::from_str(&json).unwrap();
        let SessionEvent::Answer { outcome, .. } = back else {
            panic!("{json}")
        };
        assert_eq!(outcome.unwrap().get(), r#"{"action":"accept"}"#);
        let failed = SessionEvent::Answer {
            session: "s".into(),
            id: RequestId::from(3),
            outcome: Err(ErrorObject::internal("no")),
        };
        let json = serde_json::to_string(&failed).unwrap();
        let back: SessionEvent = serde_json::from_str(&json).unwrap();
        assert!(matches!(
            back,
            SessionEvent::Answer {
                outcome: Err(_),
                ..
            }
        ));
    }
}
