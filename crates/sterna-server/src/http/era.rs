//! The HTTP side of the seam: an era other than 2026-07-28 answers the POSTs that do not
//! claim 2026-07-28, and the GETs and DELETEs of its sessions. The endpoint reads each
//! POST once and hands the era what it read ([`elsewhere`]: a POST without the 2026-07-28
//! header, routed by that one reading).

use super::body::McpBody;
use super::caller::Caller;
use super::in_flight::InFlight;
use super::respond::rpc_error;
use crate::server::inbound::{Body, Inbound, classify_envelope, has_modern_claim};
use crate::server::{Server, log_panic};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use http::{HeaderMap, Response, StatusCode};
use std::any::Any;
use std::panic::AssertUnwindSafe;
use sterna_types::error::ErrorObject;

/// An era of Streamable HTTP around the 2026-07-28 endpoint.
pub(crate) trait HttpEra: Any + Send + Sync {
    /// A POST without the 2026-07-28 claim, as the endpoint read it (its envelope).
    fn post<'a>(
        &'a self,
        server: &'a Server,
        headers: &'a HeaderMap,
        caller: Caller,
        message: Inbound<'a>,
    ) -> BoxFuture<'a, Response<McpBody>>;

    /// A GET (2026-07-28 has none).
    fn get<'a>(
        &'a self,
        server: &'a Server,
        headers: &'a HeaderMap,
        caller: Caller,
    ) -> BoxFuture<'a, Response<McpBody>>;

    /// A DELETE (2026-07-28 has none).
    fn delete<'a>(
        &'a self,
        headers: &'a HeaderMap,
        caller: Caller,
    ) -> BoxFuture<'a, Response<McpBody>>;
}

/// A POST without the 2026-07-28 header, read once: answered by `era` when it belongs to
/// one of its sessions (with what that reading found), `None` when its `_meta` claims
/// 2026-07-28. A request let in over its client's share (`answer_only`) is refused with
/// that share's 429 unless the reading finds a message that ends a request in flight
/// ([`relieves`]). A panic on its behalf (its reading included) answers it with a 500, and
/// costs nothing else.
pub(super) async fn elsewhere(
    era: &dyn HttpEra,
    server: &Server,
    headers: &HeaderMap,
    caller: &Caller,
    bytes: &[u8],
    answer_only: Option<&InFlight>,
) -> Option<Response<McpBody>> {
    let answered = AssertUnwindSafe(async {
        let message = classify_envelope(bytes);
        if let Some(share) = answer_only
            && !relieves(&message)
        {
            // Let in over the client's share to end requests: anything else waits.
            return Some(*share.refusal());
        }
        if claims_modern(
            &message,
            headers.contains_key(&super::headers::PROTOCOL_VERSION),
        ) {
            return None;
        }
        Some(era.post(server, headers, caller.clone(), message).await)
    });
    answered.catch_unwind().await.unwrap_or_else(|panic| {
        log_panic(panic.as_ref());
        let e = ErrorObject::internal("Internal error");
        Some(rpc_error(StatusCode::INTERNAL_SERVER_ERROR, None, &e))
    })
}

/// Whether a message ends a request in flight, so it may pass a client's full share: an
/// answer to a pushed question (its request goes on to its end) or `notifications/cancelled`.
fn relieves(message: &Inbound<'_>) -> bool {
    match message {
        Inbound::Response { .. } => true,
        Inbound::Notification { method, .. } => method == "notifications/cancelled",
        Inbound::Request { .. } | Inbound::Malformed(_) => false,
    }
}

/// Whether a message without a 2026-07-28 version header claims 2026-07-28: its `_meta`
/// does. Everything else belongs to another era's session; an unreadable message is
/// answered by 2026-07-28 (with the parse error) unless it names another version.
fn claims_modern(message: &Inbound<'_>, versioned: bool) -> bool {
    match message {
        Inbound::Request {
            params: Body::Raw(p),
            ..
        } => has_modern_claim(*p),
        Inbound::Notification { params, .. } => has_modern_claim(*params),
        Inbound::Request { .. } | Inbound::Response { .. } => false,
        Inbound::Malformed(_) => !versioned,
    }
}

#[cfg(test)]
mod tests {
    use super::relieves;
    use crate::server::inbound::classify_envelope;

    #[test]
    fn only_answers_and_cancellations_end_a_request_in_flight() {
        let relief = |body: &str| relieves(&classify_envelope(body.as_bytes()));
        assert!(relief(
            r#"{"jsonrpc":"2.0","id":"s-1","result":{"action":"decline"}}"#
        ));
        assert!(relief(
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"user said no"}}"#
        ));
        assert!(relief(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#
        ));
        // Other notifications, requests and what cannot be read wait for a place.
        assert!(!relief(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        ));
        assert!(!relief(
            r#"{"jsonrpc":"2.0","id":1,"method":"notifications/cancelled"}"#
        ));
        assert!(!relief(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#));
        assert!(!relief(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled""#
        ));
        assert!(!relief(
            r#"[{"jsonrpc":"2.0","method":"notifications/cancelled"}]"#
        ));
    }
}
