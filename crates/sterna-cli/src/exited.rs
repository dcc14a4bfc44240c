//! How the last stdio server process ended, remembered for the explanation of a failure
//! (the logs layer records it; the explanations read it).

use std::sync::Mutex;

/// How the last stdio server process ended, as the user should read it
/// (`exit status: 1`, `signal: 9 (SIGKILL)`), once it has.
static LAST_EXIT: Mutex<Option<String>> = Mutex::new(None);

/// How the last stdio server process exited, if one did.
pub(crate) fn last_exit() -> Option<String> {
    LAST_EXIT.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Records how the stdio server process ended.
pub(crate) fn record(status: String) {
    *LAST_EXIT.lock().unwrap_or_else(|p| p.into_inner()) = Some(status);
}
