//! The `io.modelcontextprotocol/tasks` extension: a `tools/call` that declared it may be
//! answered with a task handle, then followed with `tasks/get`, `tasks/update` and
//! `tasks/cancel`.
//!
//! A task is the re-run model with its continuation stored instead of sealed: the
//! record (in a [`TaskStore`]) holds the arguments, the answers pinned so far and the
//! open questions. A run of the handler ends `completed`, `failed`, or parked
//! `input_required`; the `tasks/update` that answers the last open question starts the
//! next run on the replica that received it. No future waits across requests, so any
//! replica can serve any task.

mod create;
mod methods;
mod ops;
pub(crate) mod record;
mod runner;
mod store;
mod watch;

pub(crate) use create::{Mode, gate, mode};
pub use store::{MemoryTaskStore, StoredTask, TaskStore, TaskStoreError};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Whether a tool may run as a task (see [`Tool::task`](crate::server::Tool::task)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never a task (the default).
    #[default]
    Forbidden,
    /// A task when the request declared the extension; otherwise it runs synchronously.
    Optional,
    /// Always a task: a request that did not declare the extension gets `-32021`.
    Required,
}

/// The server's tasks: where they are stored, their lifetimes, the runs in this process.
pub(crate) struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    /// Records are sealed at rest with the state keys, bound to the server and the id.
    pub(crate) keys: Arc<crate::state::StateKeys>,
    pub(crate) audience: String,
    pub(crate) ttl: Duration,
    pub(crate) poll: Duration,
    /// The largest encoded record accepted (answers that would grow it beyond are refused).
    pub(crate) max_record: usize,
    /// How soon a running handler first checks a store that cannot announce changes for
    /// a cancel from another replica (then at doubling intervals up to `watch_max`).
    pub(crate) watch: Duration,
    pub(crate) watch_max: Duration,
    /// Runs in this process, by task id: cancelled by `tasks/cancel`.
    pub(crate) running: Mutex<HashMap<String, (u64, CancellationToken)>>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("store", &self.store)
            .field("ttl", &self.ttl)
            .finish()
    }
}

impl Tasks {
    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        keys: Arc<crate::state::StateKeys>,
        audience: String,
        ttl: Duration,
        poll: Duration,
    ) -> Self {
        Self {
            store,
            keys,
            audience,
            ttl,
            poll,
            max_record: 256 * 1024,
            watch: Duration::from_millis(500),
            watch_max: Duration::from_secs(5),
            running: Mutex::new(HashMap::new()),
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, CancellationToken)>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The log-safe form of a task id (its first characters: the id is a bearer handle).
pub(crate) fn short(id: &str) -> &str {
    id.get(..6).unwrap_or("?")
}
