//! Client errors, by category.

use std::fmt;
use std::time::Duration;
use sterna_types::error::ErrorObject;

/// Why a call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The transport failed: I/O, an HTTP status without a JSON-RPC answer, a closed
    /// connection or process.
    Transport(TransportError),
    /// The server broke the protocol (malformed messages, an unknown `resultType`, a
    /// question this client never declared it could answer …).
    Protocol(ProtocolViolation),
    /// The server answered with a JSON-RPC error.
    Server(ErrorObject),
    /// The MRTR driver stopped: too many rounds or out of time.
    GaveUp(GaveUp),
    /// A local handler refused a sampling or roots request: the call is abandoned (the
    /// server is not waiting for anything).
    Refused(Refusal),
    /// The server speaks none of this client's protocol versions.
    Incompatible {
        /// What the server supports.
        supported: Vec<String>,
    },
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Transport(e) => write!(f, "transport: {e}"),
            Self::Protocol(e) => write!(f, "protocol violation by the server: {e}"),
            Self::Server(e) => write!(f, "server error: {e}"),
            Self::GaveUp(g) => write!(f, "gave up: {g}"),
            Self::Refused(r) => write!(f, "refused: {r}"),
            Self::Incompatible { supported } => {
                write!(
                    f,
                    "no common protocol version (the server supports {supported:?})"
                )
            }
        }
    }
}

impl std::error::Error for ClientError {}

impl From<TransportError> for ClientError {
    fn from(e: TransportError) -> Self {
        Self::Transport(e)
    }
}

impl From<ProtocolViolation> for ClientError {
    fn from(e: ProtocolViolation) -> Self {
        Self::Protocol(e)
    }
}

/// A transport failure.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportError {
    /// An I/O error.
    Io(String),
    /// An HTTP status that carried no JSON-RPC answer.
    Http {
        /// The status code.
        status: u16,
        /// The body, as text (cut to 1 KiB).
        body: String,
    },
    /// The response stream broke before the response arrived (the request is lost; the
    /// client re-issues it with a new id).
    StreamBroken,
    /// The connection or process is closed.
    Closed,
    /// The server's answer was larger than the client accepts.
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => write!(f, "I/O: {e}"),
            Self::Http { status, body } => write!(f, "HTTP {status}: {body}"),
            Self::StreamBroken => f.write_str("the response stream broke before the response"),
            Self::Closed => f.write_str("the connection is closed"),
            Self::TooLarge { limit } => write!(f, "the answer is larger than {limit} bytes"),
        }
    }
}

impl std::error::Error for TransportError {}

/// A breach of the protocol by the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolViolation(pub String);

impl fmt::Display for ProtocolViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ProtocolViolation {}

/// Why the MRTR driver stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GaveUp {
    /// More rounds than allowed.
    Rounds(u32),
    /// Out of time.
    TimeBudget(Duration),
}

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rounds(n) => write!(f, "still input_required after {n} rounds"),
            Self::TimeBudget(d) => write!(f, "not complete within {d:?}"),
        }
    }
}

/// A local handler declined to fulfil a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl Refusal {
    /// A refusal with a reason.
    pub fn new(reason: impl Into<String>) -> Self {
        Self(reason.into())
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}
