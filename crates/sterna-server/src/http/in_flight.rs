//! Each client's share of requests in flight on an endpoint (see
//! [`HttpConfig::requests_per_client`](super::HttpConfig::requests_per_client)): busy
//! connections cannot be closed for a newcomer, so one client may not hold them all.

use super::body::McpBody;
use super::headers::modern_header;
use super::respond::rpc_error;
use crate::metrics::{Refusal, refused};
use crate::server::places::{Place, Places, Share};
use crate::server::{Principal, QuotaKey};
use http::header::RETRY_AFTER;
use http::request::Parts;
use http::{HeaderValue, Method, Response, StatusCode};
use std::sync::Arc;

/// The share of requests in flight.
const REQUESTS: Share = Share {
    setting: "requests_per_client",
    what: "requests in flight",
    remedy: "wait for one to end",
};

/// The places kept apart, per client, for what lets a full share go: answers to pushed
/// questions (a client whose every request waits for its answers could otherwise never
/// send them), cancellations of its requests, and the end of a session (which ends its
/// requests).
pub(crate) const RELIEF_PER_CLIENT: usize = 16;

/// Each client's requests in flight, at most `limit` each, and the answers, cancellations
/// and session ends it may send beyond them.
pub(super) struct InFlight {
    requests: Arc<Places>,
    relief: Arc<Places>,
}

/// How a request was let in.
pub(super) enum Admission {
    /// Not counted: an anonymous caller of unknown address cannot be told apart.
    Uncounted,
    /// A place of the client's share.
    Counted(Place),
    /// Over the share, on the places kept for relief: a session's end, or a POST served
    /// only if its body answers a pushed question or cancels a request.
    Relief(Place),
}

impl InFlight {
    pub(super) fn new(limit: usize) -> Self {
        Self {
            requests: Places::new(limit, REQUESTS),
            relief: Places::new(RELIEF_PER_CLIENT, REQUESTS),
        }
    }

    /// A place for one more request of `principal`, or the refusal: 429 with `-32603`
    /// naming the limit. A client at its share may still POST to a session of an earlier
    /// era (where its answers and cancellations go) or DELETE one, on the places kept for
    /// relief.
    pub(super) fn admit(
        &self,
        principal: &Principal,
        parts: &Parts,
    ) -> Result<Admission, Box<Response<McpBody>>> {
        if principal.id().is_none() && principal.peer().is_none() {
            return Ok(Admission::Uncounted);
        }
        let key = QuotaKey::of(principal);
        match self.requests.take(key.clone()) {
            Ok(place) => Ok(Admission::Counted(place)),
            Err(_) if may_relieve(parts) => match self.relief.take(key) {
                Ok(place) => Ok(Admission::Relief(place)),
                Err(_) => Err(self.refusal()),
            },
            Err(_) => Err(self.refusal()),
        }
    }

    /// 429 + `Retry-After: 1`, naming the share.
    pub(super) fn refusal(&self) -> Box<Response<McpBody>> {
        refused(Refusal::QuotaExceeded, 429);
        let e = self.requests.refusal();
        let mut r = rpc_error(StatusCode::TOO_MANY_REQUESTS, None, &e);
        r.headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from_static("1"));
        Box::new(r)
    }
}

impl Admission {
    /// The place held until the answer ends, and whether a POST is served only if it
    /// answers a pushed question.
    pub(super) fn into_parts(self) -> (Option<Place>, bool) {
        match self {
            Self::Uncounted => (None, false),
            Self::Counted(p) => (Some(p), false),
            Self::Relief(p) => (Some(p), true),
        }
    }
}

/// Whether the request can relieve a full share: a POST (its body decides whether it
/// answers a pushed question) or a DELETE naming a session, without the 2026-07-28 header.
fn may_relieve(parts: &Parts) -> bool {
    (parts.method == Method::POST || parts.method == Method::DELETE)
        && parts.headers.contains_key(&super::headers::SESSION_ID)
        && !modern_header(&parts.headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(session: bool, version: &str) -> Parts {
        let mut r = http::Request::post("/mcp").header("mcp-protocol-version", version);
        if session {
            r = r.header("mcp-session-id", "s");
        }
        r.body(()).unwrap().into_parts().0
    }

    fn counted(a: Admission) -> Place {
        match a {
            Admission::Counted(p) => p,
            _ => panic!("not counted"),
        }
    }

    #[test]
    fn a_client_is_counted_by_its_key_and_unknown_callers_not_at_all() {
        let places = InFlight::new(1);
        let any = post(false, "2026-07-28");
        let unknown = Principal::default();
        for _ in 0..2 {
            let a = places.admit(&unknown, &any).unwrap();
            assert!(
                matches!(a, Admission::Uncounted),
                "never counted nor refused"
            );
        }
        let peer = Principal::default().with_peer("198.51.100.1".parse().unwrap());
        let held = counted(places.admit(&peer, &any).unwrap());
        let refused = places.admit(&peer, &any).err().unwrap();
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(refused.headers()[RETRY_AFTER], "1");
        let alice = Principal::new("alice").with_peer("198.51.100.1".parse().unwrap());
        counted(places.admit(&alice, &any).expect("a principal's own share"));
        drop(held);
        counted(places.admit(&peer, &any).expect("given back"));
    }

    #[test]
    fn over_its_share_a_client_may_only_answer_or_end_a_session() {
        let places = InFlight::new(1);
        let peer = Principal::default().with_peer("198.51.100.1".parse().unwrap());
        let _held = counted(places.admit(&peer, &post(true, "2025-11-25")).unwrap());
        for no in [post(false, "2025-11-25"), post(true, "2026-07-28")] {
            assert!(
                places.admit(&peer, &no).is_err(),
                "no session of 2025: no answer"
            );
        }
        let get = http::Request::get("/mcp").header("mcp-session-id", "s");
        let get = get.body(()).unwrap().into_parts().0;
        assert!(places.admit(&peer, &get).is_err(), "a GET is no answer");
        let delete = http::Request::delete("/mcp").header("mcp-session-id", "s");
        let delete = delete.body(()).unwrap().into_parts().0;
        let ends = places.admit(&peer, &delete).expect("a session may end");
        assert!(matches!(ends, Admission::Relief(_)));
        drop(ends);
        let answers: Vec<_> = (0..RELIEF_PER_CLIENT)
            .map(|_| match places.admit(&peer, &post(true, "2025-11-25")) {
                Ok(Admission::Relief(p)) => p,
                _ => panic!("an answer's place"),
            })
            .collect();
        let over = places.admit(&peer, &post(true, "2025-11-25"));
        assert!(over.is_err(), "the places kept for answers are a share too");
        drop(answers);
    }
}
