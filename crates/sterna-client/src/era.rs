//! Eras: a server speaks 2026-07-28 (modern: per-request `_meta`, MRTR) or 2025-11-25 and
//! earlier (legacy: the `initialize` handshake, sessions, pushed requests). How the client
//! decides, and what it remembers.
//!
//! In [`EraMode::Auto`] (sterna's default) the client probes once before its first
//! request, with a modern `server/discover`:
//!
//! * a schema-valid `DiscoverResult` sharing a version, or a recognised modern error
//!   (`-32022` whose `supported` list has a modern version, `-32020`, `-32021`) means
//!   **modern** — no fallback; a `-32022` switches to the version both sides speak;
//! * any other error, a result that is not a `DiscoverResult` (such as `{}`), a `-32022`
//!   listing only legacy versions, and on stdio silence or a server that died on the
//!   probe, mean **legacy**: `initialize` follows (a dead stdio server is started again,
//!   and the log says so). The fallback is never keyed to one error code;
//! * over HTTP, a 400 (or another 4xx) is read for a JSON-RPC error and judged as above;
//!   an empty or unreadable body means legacy. 401 and 403 are authorization errors, a
//!   5xx, a network error or a timeout are errors — never "legacy".
//!
//! The verdict is kept for the life of the child process (stdio) or, over HTTP, for the
//! endpoint URL, process-wide — finer than the origin the specification names, because
//! two endpoints of one origin may be different servers. A remembered verdict that fails
//! (`initialize` refused, or a modern request answered with a bare 400/404/405) is
//! forgotten and the server probed again.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// How the client decides which era a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum EraMode {
    /// Probe with `server/discover` and fall back to 2025-11-25 when the server is not
    /// modern (the default: most deployed servers are 2025-11-25, and the probe costs one
    /// request per process or endpoint).
    #[default]
    Auto,
    /// 2026-07-28 only: no probe, no fallback (a legacy server fails with the error it
    /// answers).
    Modern,
    /// 2025-11-25 only: `initialize` at once, no probe.
    Legacy,
}

/// The era a server speaks, with the revision in use.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Era {
    /// Per-request `_meta`, MRTR (2026-07-28).
    Modern {
        /// The revision requests declare.
        version: String,
    },
    /// A session opened by `initialize` (2025-11-25, 2025-06-18 or 2025-03-26).
    Legacy {
        /// The revision `initialize` negotiated.
        version: String,
    },
}

impl Era {
    /// The revision in use.
    pub fn version(&self) -> &str {
        match self {
            Self::Modern { version } | Self::Legacy { version } => version,
        }
    }

    /// Whether the server speaks 2025-11-25 or earlier.
    pub fn is_legacy(&self) -> bool {
        matches!(self, Self::Legacy { .. })
    }
}

/// What a probe concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Modern, at this version.
    Modern(String),
    /// Legacy (why, for the log).
    Legacy(&'static str),
}

fn cache() -> &'static Mutex<HashMap<String, Verdict>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Verdict>>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// The remembered verdict for an HTTP endpoint.
pub(crate) fn remembered(endpoint: &str) -> Option<Verdict> {
    let map = cache().lock().unwrap_or_else(|p| p.into_inner());
    map.get(endpoint).cloned()
}

/// Remembers a verdict for an HTTP endpoint.
pub(crate) fn remember(endpoint: &str, verdict: &Verdict) {
    let mut map = cache().lock().unwrap_or_else(|p| p.into_inner());
    map.insert(endpoint.to_owned(), verdict.clone());
}

/// Forgets the verdict for an HTTP endpoint (it failed).
pub(crate) fn forget(endpoint: &str) {
    let mut map = cache().lock().unwrap_or_else(|p| p.into_inner());
    map.remove(endpoint);
}
