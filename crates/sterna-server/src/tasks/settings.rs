//! What the tasks extension adds to the builders — a tool's task support
//! ([`Tool::task`]), where task records live and their lifetimes — and its check of the
//! `taskIds` member of a `subscriptions/listen` filter.

use crate::server::request::params;
use crate::server::{ServerBuilder, Tool};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::sync::Arc;
use std::time::Duration;
use sterna_types::error::ErrorObject;
use sterna_types::meta::RequestMeta;

use super::TaskStore;

/// Whether a tool may run as a task (see [`Tool::task`]).
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

/// What another replica does with a task whose run was cut short — its replica died
/// (or lost the task store) mid-run, so its lease lapsed (see [`Tool::task_takeover`]).
///
/// A task that had not begun running is always run again, whatever this says: no
/// handler code ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskTakeover {
    /// The task fails (the default): the handler may have done part of its work (sent a
    /// mail, charged a card) without the record showing it, and running it again could
    /// do that twice. The task's error says so.
    #[default]
    Fail,
    /// The handler runs again from the task's stored answers, on the replica that took
    /// the task over. Declare it only for a handler that is idempotent: running it
    /// again after a run that stopped at any point has the effect of one run (it
    /// rebuilds, upserts, or checks what was done before doing it).
    Rerun,
}

/// How tasks are kept (see [`ServerBuilder::task_store`]).
#[derive(Clone)]
pub(super) struct TaskOptions {
    pub(super) store: Option<Arc<dyn TaskStore>>,
    pub(super) ttl: Duration,
    pub(super) poll: Duration,
    pub(super) lease: Duration,
}

impl Default for TaskOptions {
    fn default() -> Self {
        Self {
            store: None,
            ttl: Duration::from_secs(300),
            poll: Duration::from_millis(500),
            lease: Duration::from_secs(30),
        }
    }
}

impl Tool {
    /// Lets the tool run as a task (the `io.modelcontextprotocol/tasks` extension):
    /// the client gets a task handle at once and follows it with `tasks/get`.
    ///
    /// A handler that asks (with [`Context::ask`](crate::server::Context::ask) or an
    /// `InputRequiredResult`) parks the task `input_required`, and the `tasks/update` that
    /// answers it starts the next run. A declarative tool (`ask(..).run(..)`) asks its
    /// questions on the `tools/call` itself and creates the task once they are answered;
    /// its body runs in the task.
    pub fn task(mut self, support: TaskSupport) -> Self {
        self.settings.insert(support);
        self
    }

    /// What happens to a task of this tool when the replica running it dies mid-run
    /// (default [`TaskTakeover::Fail`]). Exactly one replica runs a task at any moment:
    /// the run holds a lease in the task store, renewed while it runs (see
    /// [`ServerBuilder::task_lease`]); once it lapses, the next `tasks/get` on any
    /// replica takes the task over.
    ///
    /// ```
    /// # use sterna_server::{Context, NoArgs, Tool};
    /// # use sterna_server::tasks::{TaskSupport, TaskTakeover};
    /// let reindex = Tool::new("reindex")
    ///     .task(TaskSupport::Required)
    ///     // Rebuilding an index twice leaves one index: safe to run again.
    ///     .task_takeover(TaskTakeover::Rerun)
    ///     .handler(|_: Context, _: NoArgs| async { "Reindexed" });
    /// # let _ = reindex;
    /// ```
    pub fn task_takeover(mut self, takeover: TaskTakeover) -> Self {
        self.settings.insert(takeover);
        self
    }
}

impl<K> ServerBuilder<K> {
    /// Where task records live (default: in memory, this process only). Give every
    /// replica the same shared store (Redis) so any of them serves any task.
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.settings
            .update::<TaskOptions>(|o| o.store = Some(store));
        self
    }

    /// How long a task lives from its creation (`ttlMs`; default 5 minutes). A task
    /// past it reads as unknown (`-32602`).
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        let ttl = ttl.max(Duration::from_millis(1));
        self.settings.update::<TaskOptions>(|o| o.ttl = ttl);
        self
    }

    /// How long a running task's lease lasts (default 30 s; renewed every third of it
    /// while the handler runs). A replica that cannot renew stops the handler before the
    /// lease ends (a sixth of it early, room for clocks that disagree); once it has
    /// ended, the next `tasks/get` takes the task over (see [`Tool::task_takeover`]). So
    /// a task whose replica died completes within the lease plus one poll, plus its own
    /// run time. Give every replica the same value.
    pub fn task_lease(mut self, lease: Duration) -> Self {
        let lease = lease.max(Duration::from_millis(30));
        self.settings.update::<TaskOptions>(|o| o.lease = lease);
        self
    }

    /// The `pollIntervalMs` suggested to clients (default 500 ms).
    pub fn task_poll_interval(mut self, every: Duration) -> Self {
        let every = every.max(Duration::from_millis(1));
        self.settings.update::<TaskOptions>(|o| o.poll = every);
        self
    }
}

/// The extension's member of the listen filter: `taskIds`. Task status is not pushed
/// (the extension makes it optional): the acknowledgement accepts none, and asking
/// without declaring the extension is `-32021`.
#[derive(Deserialize)]
struct TaskIds {
    notifications: TaskFilter,
}

#[derive(Deserialize)]
struct TaskFilter {
    #[serde(rename = "taskIds", default)]
    task_ids: Option<serde::de::IgnoredAny>,
}

/// `subscriptions/listen` asking for `taskIds` must declare the extension.
pub(super) fn check_listen(
    method: &str,
    meta: &RequestMeta,
    raw: Option<&RawValue>,
) -> Result<(), ErrorObject> {
    if method != "subscriptions/listen" {
        return Ok(());
    }
    let asked = params::<TaskIds>(raw).is_ok_and(|p| p.notifications.task_ids.is_some());
    if asked {
        super::gate(meta)?;
    }
    Ok(())
}
