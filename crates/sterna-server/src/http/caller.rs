//! Who sent a request and what they may run: the principal the authentication layer
//! attached, and its per-target scope check. Both eras authorize here, on the request
//! they decoded to run.

use super::auth::ScopeCheck;
use super::body::McpBody;
use crate::server::Principal;
use crate::server::target::Target;
use http::{Extensions, Response};
use std::net::SocketAddr;

/// The caller of one HTTP request.
#[derive(Clone, Default)]
pub(crate) struct Caller {
    pub(crate) principal: Principal,
    /// Boxed: present only behind an auth layer, and large.
    scopes: Option<Box<ScopeCheck>>,
}

impl Caller {
    /// The caller the layers in front of the endpoint left in `extensions`
    /// (anonymous, with no per-target rule, when there are none), from the request's
    /// [`PeerAddr`](super::PeerAddr), else from the connection's `peer`.
    pub(crate) fn take(extensions: &mut Extensions, peer: Option<SocketAddr>) -> Self {
        let principal = extensions.remove::<Principal>().unwrap_or_default();
        Self {
            // The peer counts for an anonymous caller's shares (whoever authenticated it).
            principal: super::peer::stamp(principal, extensions, peer),
            scopes: extensions.remove::<ScopeCheck>().map(Box::new),
        }
    }

    /// Whether the caller may run `target`; `Err` is the HTTP answer refusing it.
    pub(crate) fn authorize(&self, target: Target<'_>) -> Result<(), Box<Response<McpBody>>> {
        match &self.scopes {
            Some(check) => check.authorize(&self.principal, target),
            None => Ok(()),
        }
    }
}
