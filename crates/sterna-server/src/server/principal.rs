//! Who is calling: the principal every `requestState` is bound to, and what its access
//! token granted.

use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::SystemTime;

/// Who is calling: the authenticated principal a transport attached to the request.
///
/// `requestState` is bound to its [`id`](Self::id), so a state issued to one principal is
/// refused for any other. A principal authenticated by an access token (a JWT, or a token
/// the authorization server introspected) also carries the token's [`AccessGrant`]:
/// its issuer, subject, scopes and claims (never the token itself).
///
/// Two principals are equal when their ids are equal, whatever their grants and peers.
#[derive(Clone, Default)]
pub struct Principal {
    id: Option<Arc<str>>,
    grant: Option<Arc<AccessGrant>>,
    /// The network peer, when the transport knows it: the share of an anonymous caller.
    peer: Option<IpAddr>,
}

impl Principal {
    /// An unauthenticated caller.
    pub fn anonymous() -> Self {
        Self::default()
    }

    /// An authenticated caller (a client id, an API key's owner …).
    pub fn new(id: impl Into<Arc<str>>) -> Self {
        Self {
            id: Some(id.into()),
            grant: None,
            peer: None,
        }
    }

    /// The caller an access token names. Its id is `<issuer>#<subject>`, so the same
    /// `sub` from two issuers is two principals (an issuer identifier has no fragment,
    /// so the first `#` separates the two).
    pub fn from_grant(grant: AccessGrant) -> Self {
        let id = format!("{}#{}", grant.issuer, grant.subject);
        Self {
            id: Some(id.into()),
            grant: Some(Arc::new(grant)),
            peer: None,
        }
    }

    /// The id, if authenticated.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// What the caller's access token granted, when it authenticated with one.
    pub fn grant(&self) -> Option<&AccessGrant> {
        self.grant.as_deref()
    }

    /// The DPoP key its token is bound to ([`AccessGrant::dpop_jkt`]).
    pub fn dpop_jkt(&self) -> Option<&str> {
        self.grant()?.dpop_jkt()
    }

    /// The same principal, calling from `peer` (sterna's [`HttpServer`](crate::http::HttpServer)
    /// sets it from the connection; see [`PeerAddr`](crate::http::PeerAddr)). Anonymous
    /// callers get their shares of the bounded stores by peer (see
    /// [`QuotaKey`](crate::server::QuotaKey)); it changes nothing else.
    pub fn with_peer(mut self, peer: IpAddr) -> Self {
        self.peer = Some(peer);
        self
    }

    /// The network peer the transport saw, if it told.
    pub fn peer(&self) -> Option<IpAddr> {
        self.peer
    }
}

impl PartialEq for Principal {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for Principal {}

impl Hash for Principal {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Principal")
            .field("id", &self.id)
            .field("grant", &self.grant)
            .field("peer", &self.peer)
            .finish()
    }
}

/// What a validated access token granted: issuer, subject, client, scopes, expiry and
/// every claim. Handlers read it through
/// [`Context::principal`](crate::server::Context::principal)`().grant()`.
///
/// It never holds the token. Its `Debug` output leaves the claims out (they may carry
/// personal data).
#[derive(Clone, PartialEq)]
pub struct AccessGrant {
    issuer: String,
    subject: String,
    client_id: Option<String>,
    scopes: BTreeSet<String>,
    expires_at: Option<SystemTime>,
    claims: Map<String, Value>,
}

impl AccessGrant {
    /// A grant by `issuer` to `subject`, with no scope, client, expiry or other claim.
    pub fn new(issuer: impl Into<String>, subject: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            subject: subject.into(),
            client_id: None,
            scopes: BTreeSet::new(),
            expires_at: None,
            claims: Map::new(),
        }
    }

    /// Sets the scopes granted.
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the OAuth client the token was issued to.
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Sets when the token expires.
    pub fn with_expiry(mut self, at: SystemTime) -> Self {
        self.expires_at = Some(at);
        self
    }

    /// Sets the token's claims (all of them, as the issuer wrote them).
    pub fn with_claims(mut self, claims: Map<String, Value>) -> Self {
        self.claims = claims;
        self
    }

    /// The issuer (`iss`), exactly as configured at the resource server.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The subject (`sub`): the user, or the client acting for itself.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The OAuth client the token was issued to (`client_id`), if the token says.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The scopes granted, in lexical order.
    pub fn scopes(&self) -> impl Iterator<Item = &str> {
        self.scopes.iter().map(String::as_str)
    }

    /// Whether `scope` was granted (exactly this scope; hierarchies are the
    /// [`ScopePolicy`](crate::http::auth::ScopePolicy)'s business).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }

    /// When the token expires (`exp`), if it says.
    pub fn expires_at(&self) -> Option<SystemTime> {
        self.expires_at
    }

    /// Every claim of the token (a JWT's payload, an introspection answer).
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }

    /// One claim.
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.claims.get(name)
    }

    /// The thumbprint (RFC 7638, SHA-256) of the DPoP key the token is bound to
    /// (`cnf.jkt`, RFC 9449 §6), if it is bound. [`AuthLayer`](crate::http::AuthLayer)
    /// accepts a bound token only with a proof signed by that key, and a 2025-11-25
    /// session opened with it stays bound to that key.
    pub fn dpop_jkt(&self) -> Option<&str> {
        self.claims.get("cnf")?.get("jkt")?.as_str()
    }
}

impl fmt::Debug for AccessGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessGrant")
            .field("issuer", &self.issuer)
            .field("subject", &self.subject)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_subject_of_two_issuers_is_two_principals() {
        let a = Principal::from_grant(AccessGrant::new("https://a.example", "alice"));
        let b = Principal::from_grant(AccessGrant::new("https://b.example", "alice"));
        assert_ne!(a, b);
        assert_eq!(a.id(), Some("https://a.example#alice"));
        let again = Principal::from_grant(
            AccessGrant::new("https://a.example", "alice").with_scopes(["x"]),
        );
        assert_eq!(a, again, "equality is by id, whatever the grant");
    }
}
