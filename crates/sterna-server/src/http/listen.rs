//! The accept loop's guards: how many connections are served at once, what happens
//! when `accept` fails (out of file descriptors: back off, and log once per interval
//! instead of on every attempt), and the signals that stop it.

use std::io;
use std::time::Duration;
use tokio::time::Instant;

/// How often a repeated condition (accept failing, the connection limit reached) is
/// logged at most.
const LOG_EVERY: Duration = Duration::from_secs(10);
/// The first pause after a failed `accept`; doubled on each failure in a row.
const FIRST_PAUSE: Duration = Duration::from_millis(10);
/// The longest pause between two `accept` attempts.
const MAX_PAUSE: Duration = Duration::from_secs(1);

/// The connection limit in force: the configured one, or the default
/// ([`DEFAULT_MAX_CONNECTIONS`](super::config::DEFAULT_MAX_CONNECTIONS), at most three
/// quarters of the open-file limit).
pub(crate) fn connection_limit(configured: Option<usize>) -> usize {
    if let Some(n) = configured {
        return n.max(1);
    }
    let default = super::config::DEFAULT_MAX_CONNECTIONS;
    match open_file_limit() {
        Some(files) => default.min(files / 4 * 3).max(1),
        None => default,
    }
}

/// The soft limit on open files (`ulimit -n`), where the platform says.
#[cfg(unix)]
fn open_file_limit() -> Option<usize> {
    use nix::sys::resource::{Resource, getrlimit};
    let (soft, _) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    Some(usize::try_from(soft).unwrap_or(usize::MAX))
}

#[cfg(not(unix))]
fn open_file_limit() -> Option<usize> {
    None
}

/// Logs a condition at most once per [`LOG_EVERY`], with how often it happened since.
#[derive(Debug, Default)]
pub(crate) struct Throttle {
    last: Option<Instant>,
    /// Occurrences not logged since the last message.
    quiet: u64,
}

impl Throttle {
    /// Notes one occurrence; `Some(n)` when it should be logged now, with the `n`
    /// occurrences that were not logged before it.
    pub(crate) fn note(&mut self, now: Instant) -> Option<u64> {
        match self.last {
            Some(at) if now.duration_since(at) < LOG_EVERY => {
                self.quiet += 1;
                None
            }
            _ => {
                self.last = Some(now);
                Some(std::mem::take(&mut self.quiet))
            }
        }
    }
}

/// Failed `accept`s in a row: the pause before the next attempt grows, the log stays
/// quiet.
#[derive(Debug, Default)]
pub(crate) struct AcceptErrors {
    pause: Option<Duration>,
    log: Throttle,
}

impl AcceptErrors {
    /// Notes a failure (logged at most once per interval); returns how long to pause.
    pub(crate) fn failed(&mut self, e: &io::Error) -> Duration {
        let pause = self.pause.map_or(FIRST_PAUSE, |p| (p * 2).min(MAX_PAUSE));
        self.pause = Some(pause);
        if let Some(quiet) = self.log.note(Instant::now()) {
            tracing::error!(
                error = %e,
                repeated = quiet,
                "accept failed (out of file descriptors? see HttpConfig::max_connections); \
                 backing off"
            );
        }
        pause
    }

    /// An `accept` succeeded: the next failure starts with a short pause again.
    pub(crate) fn succeeded(&mut self) {
        self.pause = None;
    }
}

/// Completes on Ctrl-C or SIGTERM.
pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_back_off_and_log_once_per_interval() {
        let mut errors = AcceptErrors::default();
        let e = io::Error::from_raw_os_error(24);
        let pauses: Vec<_> = (0..10).map(|_| errors.failed(&e)).collect();
        assert_eq!(pauses[0], FIRST_PAUSE);
        assert_eq!(pauses[1], FIRST_PAUSE * 2);
        assert_eq!(pauses[9], MAX_PAUSE);
        errors.succeeded();
        assert_eq!(errors.failed(&e), FIRST_PAUSE);

        let mut t = Throttle::default();
        let t0 = Instant::now();
        assert_eq!(t.note(t0), Some(0));
        for i in 1..=20 {
            assert_eq!(t.note(t0 + Duration::from_millis(50 * i)), None);
        }
        assert_eq!(t.note(t0 + LOG_EVERY), Some(20));
    }

    #[test]
    fn a_configured_limit_is_used_as_it_is() {
        assert_eq!(connection_limit(Some(5)), 5);
        assert_eq!(connection_limit(Some(0)), 1);
        let default = connection_limit(None);
        assert!((1..=super::super::config::DEFAULT_MAX_CONNECTIONS).contains(&default));
    }
}
