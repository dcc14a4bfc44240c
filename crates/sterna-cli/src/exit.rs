//! What can go wrong, by category, and the exit code of each.

use std::fmt;
use std::process::ExitCode;
use sterna::client::ClientError;

/// Why a command failed.
#[derive(Debug)]
pub(crate) enum CliError {
    /// Bad flags or values (exit 2).
    Usage(String),
    /// A question nobody could answer: not on a terminal, and nothing given for it (exit 3).
    Unanswered(Unanswered),
    /// The client failed: transport, protocol, server error, round limits (exit 4).
    Client(ClientError),
    /// A local failure: the terminal, a file, a child process (exit 4).
    Local(String),
    /// The user or the sampling command refused a request (exit 5).
    Refused(String),
    /// Ctrl-C stopped the call (exit 130); says how the server was told.
    Interrupted(String),
}

/// The question that could not be answered.
#[derive(Debug)]
pub(crate) struct Unanswered {
    /// Its key in `inputRequests`.
    pub(crate) key: String,
    /// What the server asked.
    pub(crate) message: String,
    /// The form field left without an answer, if the question is a form.
    pub(crate) field: Option<String>,
    /// How to answer it.
    pub(crate) hint: String,
}

impl CliError {
    /// The process exit code.
    pub(crate) fn exit_code(&self) -> ExitCode {
        ExitCode::from(match self {
            Self::Usage(_) => 2,
            Self::Unanswered(_) => 3,
            Self::Client(ClientError::Refused(_)) | Self::Refused(_) => 5,
            Self::Client(_) | Self::Local(_) => 4,
            Self::Interrupted(_) => 130,
        })
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Usage(m) => write!(f, "usage: {m}"),
            Self::Unanswered(u) => {
                write!(f, "unanswered question `{}` ({:?})", u.key, u.message)?;
                if let Some(field) = &u.field {
                    write!(f, ": no answer for field `{field}`")?;
                }
                write!(f, "; not a terminal, so nothing can be asked. {}", u.hint)
            }
            Self::Client(e) => f.write_str(&crate::explain::client(e)),
            Self::Local(m) => f.write_str(m),
            Self::Refused(m) => write!(f, "refused: {m}"),
            Self::Interrupted(how) => write!(f, "interrupted: {how}"),
        }
    }
}

impl From<ClientError> for CliError {
    fn from(e: ClientError) -> Self {
        Self::Client(e)
    }
}
