//! Client errors, by category.

mod transport;

pub use transport::{ConfigError, TransportError};
#[cfg(feature = "oauth")]
pub use transport::{HttpFailure, OAuthError};

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
    /// The API was used in a way that cannot work.
    Misuse(Misuse),
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
            Self::Misuse(m) => write!(f, "misuse: {m}"),
            Self::Incompatible { supported } => {
                write!(
                    f,
                    "no common protocol version (the server supports {supported:?})"
                )
            }
        }
    }
}

impl ClientError {
    /// Whether the server said the resource does not exist: `-32002` (2025-11-25) or, in
    /// 2026-07-28, `-32602` with the URI in `data.uri`.
    pub fn is_resource_not_found(&self) -> bool {
        use sterna_types::error::ErrorCode;
        match self {
            Self::Server(e) if e.code == ErrorCode::LEGACY_RESOURCE_NOT_FOUND => true,
            Self::Server(e) => {
                e.code == ErrorCode::INVALID_PARAMS
                    && e.data.as_ref().is_some_and(|d| d.get("uri").is_some())
            }
            _ => false,
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Transport(e) => Some(e),
            Self::Protocol(e) => Some(e),
            Self::Refused(e) => Some(e),
            _ => None,
        }
    }
}

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

/// A breach of the protocol by the server.
#[derive(Debug)]
#[non_exhaustive]
pub enum ProtocolViolation {
    /// An answer that is not a JSON-RPC response, or a result that does not decode as
    /// the method's result.
    Malformed {
        /// The method answered.
        method: String,
        /// What did not decode.
        source: serde_json::Error,
    },
    /// A message that cannot be read as JSON-RPC at all.
    Unreadable(sterna_types::error::ErrorObject),
    /// The answer is not the response to this request.
    WrongResponse,
    /// `input_required` with neither `inputRequests` nor `requestState`.
    EmptyInputRequired,
    /// A question this client never declared it could answer.
    Undeclared {
        /// The question's key.
        key: String,
        /// What kind of question (`form elicitation`, `sampling` …).
        kind: &'static str,
    },
    /// A question of a kind this client does not know.
    UnknownQuestion {
        /// The question's key.
        key: String,
        /// Its method.
        method: String,
    },
    /// A paginated list that never ends.
    EndlessList {
        /// The list method.
        method: String,
    },
    /// `input_required` inside a 2025-11-25 session (that era pushes requests instead).
    InputRequiredInSession,
    /// A round asking more questions than the client takes at once
    /// ([`ClientBuilder::max_input_requests`](crate::ClientBuilder::max_input_requests)).
    TooManyQuestions {
        /// How many the round asked.
        asked: usize,
        /// The most the client takes.
        max: usize,
    },
}

impl fmt::Display for ProtocolViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed { method, source } => write!(f, "malformed {method} answer: {source}"),
            Self::Unreadable(e) => write!(f, "unreadable message: {}", e.message),
            Self::WrongResponse => f.write_str("the answer is not the response to this request"),
            Self::EmptyInputRequired => {
                f.write_str("input_required without inputRequests or requestState")
            }
            Self::Undeclared { key, kind } => {
                write!(
                    f,
                    "{key}: a {kind} request, which this client did not declare"
                )
            }
            Self::UnknownQuestion { key, method } => {
                write!(f, "{key}: unknown input request {method}")
            }
            Self::EndlessList { method } => write!(f, "{method} did not end after 1000 pages"),
            Self::InputRequiredInSession => {
                f.write_str("input_required in a 2025-11-25 session, which has no such result")
            }
            Self::TooManyQuestions { asked, max } => write!(
                f,
                "a round asked {asked} questions, more than this client takes at once ({max}, max_input_requests)"
            ),
        }
    }
}

impl std::error::Error for ProtocolViolation {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Malformed { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A use of the client API that cannot work.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Misuse {
    /// A pending call resumed as another kind of call.
    ResumedAs {
        /// The method of the pending call.
        pending: String,
        /// The method it was resumed as.
        resumed_as: &'static str,
    },
    /// [`EraMode::Legacy`](super::EraMode::Legacy) with a transport that cannot carry a
    /// 2025-11-25 session (only stdio, byte streams and Streamable HTTP can).
    NoLegacyTransport,
    /// A pending call of a 2026-07-28 server resumed on a 2025-11-25 one.
    OtherEra,
}

impl fmt::Display for Misuse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ResumedAs {
                pending,
                resumed_as,
            } => write!(f, "a pending {pending} cannot resume as {resumed_as}"),
            Self::NoLegacyTransport => {
                f.write_str("this transport cannot carry a 2025-11-25 session")
            }
            Self::OtherEra => f.write_str(
                "a pending call of a 2026-07-28 server cannot resume on a 2025-11-25 server",
            ),
        }
    }
}

/// Why the MRTR driver stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GaveUp {
    /// More rounds than allowed.
    Rounds(u32),
    /// Out of time.
    TimeBudget(Duration),
    /// The task the server made of the call was cancelled (by this client before, by
    /// another, or by the server).
    TaskCancelled,
}

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rounds(n) => write!(f, "still input_required after {n} rounds"),
            Self::TimeBudget(d) => write!(f, "not complete within {d:?}"),
            Self::TaskCancelled => f.write_str("the task was cancelled"),
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

/// Used in `fulfil` to surface a refusal with its reason.
impl From<Refusal> for ClientError {
    fn from(r: Refusal) -> Self {
        Self::Refused(r)
    }
}
