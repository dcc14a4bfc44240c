//! Errors handlers return, and errors of building a server.

use std::fmt;
use sterna_types::error::{ErrorCode, ErrorObject};

/// The error type of handlers.
///
/// * From any `std::error::Error` (so `?` works): for a tool, an `isError` result whose
///   text is the error's message (the model reads it); for a prompt or resource, `-32603`
///   (the message is logged, not sent).
/// * [`HandlerError::tool`]: a tool failure with a message for the model.
/// * [`HandlerError::invalid_params`], [`HandlerError::resource_not_found`],
///   [`HandlerError::rpc`]: a JSON-RPC error.
/// * From [`NeedsInput`](crate::mrtr::NeedsInput): not an error — the round ends with `input_required`.
pub struct HandlerError(pub(crate) Repr);

pub(crate) enum Repr {
    NeedsInput,
    Tool(String),
    Rpc(ErrorObject),
    Internal(Box<dyn std::error::Error + Send + Sync>),
}

impl HandlerError {
    /// A tool failure: the call completes with `isError: true` and this message.
    /// (For prompts and resources it becomes `-32603`.)
    pub fn tool(message: impl Into<String>) -> Self {
        Self(Repr::Tool(message.into()))
    }

    /// `-32602` with a message.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self(Repr::Rpc(ErrorObject::invalid_params(message)))
    }

    /// `-32602` "Resource not found" with `data.uri`, as 2026-07-28 requires.
    pub fn resource_not_found(uri: &str) -> Self {
        Self(Repr::Rpc(
            ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                format!("Resource not found: {uri}"),
            )
            .with_data(serde_json::json!({ "uri": uri })),
        ))
    }

    /// Any JSON-RPC error.
    pub fn rpc(error: ErrorObject) -> Self {
        Self(Repr::Rpc(error))
    }

    /// True when this is the "answers still missing" marker.
    pub fn is_needs_input(&self) -> bool {
        matches!(self.0, Repr::NeedsInput)
    }
}

impl fmt::Debug for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::NeedsInput => f.write_str("HandlerError::NeedsInput"),
            Repr::Tool(m) => write!(f, "HandlerError::Tool({m:?})"),
            Repr::Rpc(e) => write!(f, "HandlerError::Rpc({e:?})"),
            Repr::Internal(e) => write!(f, "HandlerError::Internal({e:?})"),
        }
    }
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::NeedsInput => f.write_str("input required"),
            Repr::Tool(m) => f.write_str(m),
            Repr::Rpc(e) => write!(f, "{e}"),
            Repr::Internal(e) => write!(f, "{e}"),
        }
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for HandlerError {
    fn from(e: E) -> Self {
        Self(Repr::Internal(Box::new(e)))
    }
}

/// Why a server could not be built.
///
/// Its `Debug` (`{:?}`) is the `Display` sentence — what is wrong and what to do — since that
/// is what `fn main() -> Result<(), Box<dyn Error>>` prints; `{:#?}` shows the structure.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools, prompts or resources share a name or URI.
    Duplicate {
        /// `tool`, `prompt`, `resource` or `resource template`.
        kind: &'static str,
        /// The name or URI.
        name: String,
    },
    /// A tool name breaks `[A-Za-z0-9_.-]{1,128}`.
    InvalidName(String),
    /// A tool, prompt or resource is unusable (argument or form types that cannot be
    /// described, a bad URI template …).
    Invalid {
        /// Which one.
        name: String,
        /// What is wrong.
        reason: crate::DefinitionError,
    },
    /// Two options of one definition that cannot go together.
    Conflicting {
        /// Which definition.
        name: String,
        /// The options, e.g. `single_use + accept_unsolicited_answers`.
        options: &'static str,
    },
}

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !f.alternate() {
            return fmt::Display::fmt(self, f);
        }
        match self {
            Self::Duplicate { kind, name } => f
                .debug_struct("Duplicate")
                .field("kind", kind)
                .field("name", name)
                .finish(),
            Self::InvalidName(n) => f.debug_tuple("InvalidName").field(n).finish(),
            Self::Invalid { name, reason } => f
                .debug_struct("Invalid")
                .field("name", name)
                .field("reason", reason)
                .finish(),
            Self::Conflicting { name, options } => f
                .debug_struct("Conflicting")
                .field("name", name)
                .field("options", options)
                .finish(),
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Duplicate { kind, name } => write!(f, "{kind} {name:?} is registered twice"),
            Self::InvalidName(n) => {
                write!(f, "tool name {n:?} must match [A-Za-z0-9_.-]{{1,128}}")
            }
            Self::Invalid { name, reason } => write!(f, "`{name}`: {reason}"),
            Self::Conflicting { name, options } => {
                write!(f, "{name}: {options} cannot go together")
            }
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Invalid { reason, .. } => Some(reason),
            _ => None,
        }
    }
}
