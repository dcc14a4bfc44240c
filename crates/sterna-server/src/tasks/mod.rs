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
mod declared;
mod lease;
mod methods;
mod ops;
pub(crate) mod record;
mod runner;
mod settings;
mod store;
mod timed;
mod watch;

pub use settings::{TaskSupport, TaskTakeover};
pub use store::{MemoryTaskStore, StoredTask, TaskStore, TaskStoreError};

use crate::server::core::Server;
use crate::server::outcome::Outcome;
use crate::server::routes::{Routes, ToolEntry};
use crate::server::typemap::TypeMap;
use crate::server::wing::{Era, TakeCall, ToolPlan, Wing, WingRequest, Wings};
use crate::state::StateConfig;
use futures_util::future::BoxFuture;
use serde_json::value::RawValue;
use sterna_types::capabilities::ServerCapabilities;
use sterna_types::error::ErrorObject;
use sterna_types::meta::RequestMeta;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The server's tasks: where they are stored, their lifetimes, the runs in this process.
pub(crate) struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    /// Records are sealed at rest with the state keys, bound to the server and the id.
    pub(crate) keys: Arc<crate::state::StateKeys>,
    pub(crate) audience: String,
    pub(crate) ttl: Duration,
    pub(crate) poll: Duration,
    /// How long a run's lease lasts (renewed every third of it).
    pub(crate) lease: Duration,
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
            lease: Duration::from_secs(30),
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

/// The methods the extension adds (2026-07-28 only).
const METHODS: &[&str] = &["tasks/get", "tasks/update", "tasks/cancel"];

pub(crate) use declared::gate;

/// Adds the tasks wing when some tool may run as a task.
pub(crate) fn register(
    wings: &mut Wings<Server>,
    settings: &TypeMap,
    routes: &Routes,
    state: &StateConfig,
    info: &sterna_types::meta::SharedImplementation,
) {
    let wanted = routes.tools.values().any(|t| {
        t.settings
            .get::<TaskSupport>()
            .is_some_and(|s| *s != TaskSupport::Forbidden)
    });
    if !wanted {
        return;
    }
    let options = settings
        .get::<settings::TaskOptions>()
        .cloned()
        .unwrap_or_default();
    let store = options
        .store
        .unwrap_or_else(|| std::sync::Arc::new(MemoryTaskStore::default()));
    let store = timed::task(store);
    let mut tasks = Tasks::new(
        store,
        state.keys.clone(),
        info.name.clone(),
        options.ttl,
        options.poll,
    );
    tasks.lease = options.lease;
    wings.add(tasks);
}

impl Wing<Server> for Tasks {
    fn capabilities(&self, era: Era, caps: &mut ServerCapabilities) {
        // A 2026-07-28 extension: 2025-11-25 sessions never see it.
        if era == Era::Modern {
            let ext = sterna_types::tasks::EXTENSION.to_owned();
            caps.extensions
                .get_or_insert_with(Default::default)
                .insert(ext, Default::default());
        }
    }

    fn methods(&self, era: Era) -> &'static [&'static str] {
        match era {
            Era::Modern => METHODS,
            _ => &[],
        }
    }

    fn decode<'a>(
        &'a self,
        method: &'a str,
        meta: &RequestMeta,
        params: Option<&'a RawValue>,
    ) -> WingRequest<'a, Server> {
        methods::decode(method, meta, params)
    }

    fn check(
        &self,
        method: &str,
        meta: &RequestMeta,
        params: Option<&RawValue>,
    ) -> Result<(), ErrorObject> {
        settings::check_listen(method, meta, params)
    }

    fn plan_tool_call(
        &self,
        tool: &ToolEntry,
        meta: &RequestMeta,
    ) -> Result<ToolPlan, ErrorObject> {
        create::plan(tool, meta)
    }

    fn take_tool_call<'a>(
        &'a self,
        server: &'a Server,
        take: TakeCall<'a>,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(self.create(server, take))
    }
}
