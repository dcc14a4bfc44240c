//! How a message of a 2025-11-25 session failed to go through ([`WireError`]): the
//! session is gone (HTTP 404: start a new one), or the transport failed. Shared by both
//! wires (`wire.rs`) and the HTTP one's streams (`http/`).

use crate::error::TransportError;
use std::fmt;

/// How a message failed to go through.
#[derive(Debug)]
pub(crate) enum WireError {
    /// The server answered 404 to a request carrying the session: start a new session.
    #[cfg_attr(not(feature = "http"), allow(dead_code, reason = "an HTTP answer"))]
    SessionGone,
    /// Anything else.
    Transport(TransportError),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SessionGone => f.write_str("the session is gone (HTTP 404)"),
            Self::Transport(e) => write!(f, "{e}"),
        }
    }
}

impl From<TransportError> for WireError {
    fn from(e: TransportError) -> Self {
        Self::Transport(e)
    }
}
