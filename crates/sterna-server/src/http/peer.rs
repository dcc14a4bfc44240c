//! The network peer of a request, for the fair shares of anonymous callers.

use crate::server::Principal;
use std::net::SocketAddr;

/// The address a request came from, in the request's extensions.
///
/// An anonymous caller's shares of the bounded stores (2025 sessions, tasks, stored
/// states) are counted by this address (see [`QuotaKey`](crate::server::QuotaKey));
/// without it, every anonymous caller shares one set of shares.
///
/// [`HttpServer`](super::HttpServer) needs none: it counts each request by its
/// connection's address, or, behind a load balancer named in
/// [`HttpServer::trusted_proxies`](super::HttpServer::trusted_proxies), by the client the
/// balancer names. When you mount [`McpService`](super::McpService) in your own stack,
/// insert it yourself, e.g. from axum's `ConnectInfo<SocketAddr>`, or
/// the address [`TrustedProxies::client`](super::TrustedProxies::client) reads (never
/// `X-Forwarded-For` or `Forwarded` as it comes: a client can write those headers itself):
///
/// ```
/// use sterna_server::http::PeerAddr;
/// let mut request = http::Request::new(());
/// let addr: std::net::SocketAddr = "203.0.113.7:51234".parse().unwrap();
/// request.extensions_mut().insert(PeerAddr(addr));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PeerAddr(pub SocketAddr);

/// `principal` (an anonymous one when nothing authenticated the request) with the
/// request's [`PeerAddr`] if it has one, else the connection's `peer` (if known), where
/// every store's share is decided.
pub(crate) fn stamp(
    principal: Principal,
    extensions: &http::Extensions,
    peer: Option<SocketAddr>,
) -> Principal {
    let own = extensions.get::<PeerAddr>().map(|p| p.0);
    match own.or(peer) {
        Some(addr) => principal.with_peer(addr.ip()),
        None => principal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::QuotaKey;

    #[test]
    fn the_peer_lands_on_the_principal() {
        let mut ext = http::Extensions::new();
        let p = stamp(Principal::default(), &ext, None);
        assert_eq!(p.peer(), None, "nothing to stamp");
        let conn: SocketAddr = "192.0.2.9:2000".parse().unwrap();
        let p = stamp(Principal::default(), &ext, Some(conn));
        assert_eq!(p.peer(), Some(conn.ip()), "the connection's peer");
        ext.insert(PeerAddr("198.51.100.4:1000".parse().unwrap()));
        let p = stamp(Principal::default(), &ext, None);
        assert_eq!(p.peer(), Some("198.51.100.4".parse().unwrap()));
        assert_eq!(p.id(), None);
        let p = stamp(Principal::default(), &ext, Some(conn));
        let own = "198.51.100.4".parse().unwrap();
        assert_eq!(p.peer(), Some(own), "the request's own peer wins");
        let p = stamp(Principal::new("alice"), &ext, Some(conn));
        assert_eq!(p.id(), Some("alice"), "the authenticated principal stays");
        assert_eq!(QuotaKey::of(&p), QuotaKey::of(&Principal::new("alice")));
    }
}
