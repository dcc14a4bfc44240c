//! What the replicas of a fleet tell each other about 2025-11-25 sessions, so that a
//! legacy client works behind a plain round-robin balancer: the answer to a pushed
//! question, a cancellation or the end of a session may arrive at another replica than
//! the one running the request.

use futures_util::future::{BoxFuture, ready};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::fmt;
use std::time::Duration;
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
///
/// Answers are the events a client can send at will (one POST each), so a bus relays an
/// answer only for a push that waits for one: the replica that sends a push calls
/// [`expect`](Self::expect) first, and [`publish`](Self::publish) drops an answer to
/// anything else (and relays each answer at most once). Before publishing, the endpoint
/// also bounds what a session may publish (size and rate, see
/// [`SessionLimits`](super::SessionLimits)).
pub trait SessionBus: Send + Sync + fmt::Debug + 'static {
    /// Publishes an event (best effort: a lost event is a lost answer, which the push
    /// waiting for it times out on). `false` when the bus dropped it: an answer to a push
    /// that no replica [`expect`](Self::expect)s (unknown, already answered, expired).
    fn publish(&self, event: SessionEvent) -> BoxFuture<'_, bool>;

    /// A push of `session` with id `push` is about to be sent and waits for its answer
    /// for at most `within`: an answer to it may be published until then, once. Called
    /// before the client can see the push. The default records nothing (and a bus that
    /// records nothing must not drop answers it cannot check).
    fn expect<'a>(
        &'a self,
        session: &'a str,
        push: &'a RequestId,
        within: Duration,
    ) -> BoxFuture<'a, ()> {
        let _ = (session, push, within);
        Box::pin(ready(()))
    }

    /// The push no longer waits (answered on the replica that sent it, timed out,
    /// cancelled): answers to it are dropped from now on. The default does nothing.
    fn settle<'a>(&'a self, session: &'a str, push: &'a RequestId) -> BoxFuture<'a, ()> {
        let _ = (session, push);
        Box::pin(ready(()))
    }
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
