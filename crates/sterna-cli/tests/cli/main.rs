//! The `sterna` binary, end to end: interactive runs in a pseudo-terminal (forms,
//! arrow keys, validation, decline, cancel, progress bars, the session), scripted runs
//! (`--json`, typed answers, exit codes), and the demo server over stdio; failures
//! explained, the wire, one-shot commands, the config file, Ctrl-C.

mod control;
mod failures;
mod interactive;
mod oauth;
mod oneshot;
mod peers;
mod screen;
mod scripted;
mod session;
mod skills;
mod stdio;
mod wire;

/// The path of the binary under test: `STERNA_TEST_BIN` when set (to run these tests
/// against another build, e.g. an older one), else the one cargo built.
pub(crate) fn sterna() -> &'static str {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        std::env::var("STERNA_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_sterna").into())
    })
}

/// Runs `sterna ARGS` without a terminal (stdin closed, no config file from the
/// environment) and returns what it printed.
pub(crate) fn run(args: &[&str]) -> std::process::Output {
    std::process::Command::new(sterna())
        .args(args)
        .env("STERNA_LOG", "error")
        .env_remove("STERNA_CONFIG")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("sterna runs")
}
