//! Terminal widgets (inquire): elicitation forms, URL consent, sampling, tool arguments.
//! They block: call them through [`Ui::exclusive`](crate::ui::Ui::exclusive).

pub(crate) mod args;
pub(crate) mod field;
pub(crate) mod form;
pub(crate) mod sampling;
pub(crate) mod url;

use inquire::InquireError;

/// Why a widget stopped without an answer.
#[derive(Debug)]
pub(crate) enum Stop {
    /// Esc: the user said no.
    Decline,
    /// Ctrl-C: the user dismissed the question.
    Cancel,
    /// The terminal failed.
    Io(String),
}

impl From<InquireError> for Stop {
    fn from(e: InquireError) -> Self {
        match e {
            InquireError::OperationCanceled => Self::Decline,
            InquireError::OperationInterrupted => Self::Cancel,
            other => Self::Io(other.to_string()),
        }
    }
}

/// The keys, shown under every form question.
pub(crate) const KEYS: &str = "Esc declines · Ctrl-C cancels";

/// `text` in bold, when stderr is a terminal.
pub(crate) fn bold(text: &str) -> String {
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        format!("\x1b[1m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}
