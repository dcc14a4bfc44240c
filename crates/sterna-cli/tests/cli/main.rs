//! The `sterna` binary, end to end: interactive runs in a pseudo-terminal (forms,
//! arrow keys, validation, decline, cancel, progress bars, the session), scripted runs
//! (`--json`, typed answers, exit codes), and the demo server over stdio.

mod interactive;
mod oauth;
mod screen;
mod scripted;
mod session;
mod stdio;

/// The path of the binary under test.
pub(crate) fn sterna() -> &'static str {
    env!("CARGO_BIN_EXE_sterna")
}
