//! What a replica passes on to the fleet for a session's request that runs elsewhere: the
//! client's answer to a pushed question, a cancellation. A client can send these at will,
//! so each is bounded before it reaches the bus (its size, the session's rate), and an
//! answer goes out only for a push some replica waits for (the bus checks).

use super::{Found, LegacyHttp, SessionEvent};
use crate::http::body::McpBody;
use crate::http::respond::{plain, rpc_error};
use crate::server::quota::limit_error;
use http::{Response, StatusCode};
use serde_json::value::RawValue;
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::RequestId;

/// The prefix of every push id a sterna session sends (see `Pushes`).
const PUSH_PREFIX: &str = "sterna-";

impl LegacyHttp {
    /// The answer to a push that does not wait in this process: `202` once relayed to the
    /// replica that waits for it, `400` when no replica does.
    pub(crate) async fn relay_answer(
        &self,
        found: &Found,
        id: RequestId,
        outcome: Result<&RawValue, ErrorObject>,
    ) -> Response<McpBody> {
        let ours = matches!(&id, RequestId::String(s) if s.starts_with(PUSH_PREFIX));
        if self.config.bus.is_none() || !ours {
            return unknown_push();
        }
        let event = SessionEvent::Answer {
            session: found.id.clone(),
            id,
            outcome: outcome.map(ToOwned::to_owned),
        };
        if let Some(refused) = self.beyond_bounds(found, &event) {
            return refused;
        }
        if self.publish(event).await {
            tracing::debug!("an answer for a push not waited for here: published to the fleet");
            plain(StatusCode::ACCEPTED)
        } else {
            // Only answers nobody waits for are charged: a client answering the
            // questions it was asked is never slowed down.
            found.live.spend_publish();
            unknown_push()
        }
    }

    /// `notifications/cancelled` for a request that does not run here: relayed to the
    /// fleet (when there is one), within the session's bounds.
    pub(crate) async fn relay_cancel(
        &self,
        found: &Found,
        request: RequestId,
    ) -> Response<McpBody> {
        if self.config.bus.is_none() {
            return plain(StatusCode::ACCEPTED);
        }
        let event = SessionEvent::Cancel {
            session: found.id.clone(),
            request,
        };
        if let Some(refused) = self.beyond_bounds(found, &event) {
            return refused;
        }
        found.live.spend_publish();
        self.publish(event).await;
        plain(StatusCode::ACCEPTED)
    }

    /// Refuses an event larger than a replica publishes (`413`), or any event once the
    /// session spent its budget (`429`): cancellations, and answers nobody waited for.
    fn beyond_bounds(&self, found: &Found, event: &SessionEvent) -> Option<Response<McpBody>> {
        let limits = &self.config.limits;
        let len = serde_json::to_vec(event).map_or(usize::MAX, |b| b.len());
        if len > limits.max_published {
            let msg = format!(
                "Invalid params: this message is {len} bytes, more than a replica relays to the one running the request ({} bytes, max_published)",
                limits.max_published
            );
            let max = limits.max_published;
            let e = limit_error(ErrorCode::INVALID_PARAMS, msg, "max_published", max);
            return Some(rpc_error(StatusCode::PAYLOAD_TOO_LARGE, None, &e));
        }
        if !found.live.may_publish(limits.publish_rate) {
            tracing::warn!("a session sends answers or cancellations faster than it may relay");
            let msg = format!(
                "Too many cancellations and answers to unknown questions for other replicas: at most {} a second per session (publish_rate); slow down",
                limits.publish_rate
            );
            let rate = limits.publish_rate as usize;
            let e = limit_error(ErrorCode::INTERNAL_ERROR, msg, "publish_rate", rate);
            let mut r = rpc_error(StatusCode::TOO_MANY_REQUESTS, None, &e);
            r.headers_mut()
                .insert("retry-after", http::HeaderValue::from_static("1"));
            return Some(r);
        }
        None
    }
}

/// `400`: an answer to a push nobody waits for (unknown, answered already, timed out).
fn unknown_push() -> Response<McpBody> {
    let e = ErrorObject::new(
        ErrorCode::INVALID_REQUEST,
        "Invalid request: no question with this id waits for an answer in this session (unknown, already answered, or timed out)",
    );
    rpc_error(StatusCode::BAD_REQUEST, None, &e)
}
