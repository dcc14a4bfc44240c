//! Each client's share of requests in flight on an endpoint (see
//! [`HttpConfig::requests_per_client`](super::HttpConfig::requests_per_client)): busy
//! connections cannot be closed for a newcomer, so one client may not hold them all.

use super::body::McpBody;
use super::respond::rpc_error;
use crate::metrics::{Refusal, refused};
use crate::server::places::{Place, Places, Share};
use crate::server::{Principal, QuotaKey};
use http::header::RETRY_AFTER;
use http::{HeaderValue, Response, StatusCode};
use std::sync::Arc;

/// The share of requests in flight.
const REQUESTS: Share = Share {
    setting: "requests_per_client",
    what: "requests in flight",
    remedy: "wait for one to end",
};

/// Each client's requests in flight, at most `limit` each.
pub(super) fn places(limit: usize) -> Arc<Places> {
    Places::new(limit, REQUESTS)
}

/// A place for one more request of `principal` (`None`: an anonymous caller of unknown
/// address, who cannot be told apart from the others, is not counted), or the refusal:
/// 429 with `-32603` naming the limit.
pub(super) fn admit(
    places: &Arc<Places>,
    principal: &Principal,
) -> Result<Option<Place>, Box<Response<McpBody>>> {
    if principal.id().is_none() && principal.peer().is_none() {
        return Ok(None);
    }
    places.take(QuotaKey::of(principal)).map(Some).map_err(|e| {
        refused(Refusal::QuotaExceeded, 429);
        let mut r = rpc_error(StatusCode::TOO_MANY_REQUESTS, None, &e);
        r.headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from_static("1"));
        Box::new(r)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_is_counted_by_its_key_and_unknown_callers_not_at_all() {
        let places = places(1);
        let unknown = Principal::default();
        assert!(admit(&places, &unknown).unwrap().is_none(), "not counted");
        assert!(admit(&places, &unknown).unwrap().is_none(), "never refused");
        let peer = Principal::default().with_peer("198.51.100.1".parse().unwrap());
        let held = admit(&places, &peer).unwrap();
        assert!(held.is_some());
        let refused = admit(&places, &peer).unwrap_err();
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(refused.headers()[RETRY_AFTER], "1");
        let alice = Principal::new("alice").with_peer("198.51.100.1".parse().unwrap());
        assert!(
            admit(&places, &alice).unwrap().is_some(),
            "a principal's own share"
        );
        drop(held);
        assert!(admit(&places, &peer).unwrap().is_some(), "given back");
    }
}
