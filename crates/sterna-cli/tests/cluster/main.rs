//! The deployment, end to end: redis-server, 3 replicas of `sterna serve --redis` and nginx
//! (deploy/nginx.conf.template: round robin, no stickiness), all started here on
//! 127.0.0.1. Fails, never skips, when redis-server or nginx is missing.
//!
//! Every scenario prints its counts (operations, failures, which replica served which
//! legs); run with `--nocapture` to see them.

mod fleet;
mod load;
mod raw;
mod scenarios;
mod shares;
mod streams;
mod takeover;
mod transport;

/// The path of the binary under test.
pub(crate) fn sterna() -> &'static str {
    env!("CARGO_BIN_EXE_sterna")
}

/// One fleet at a time: the machine is small, and the scenarios are about correctness.
pub(crate) static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
