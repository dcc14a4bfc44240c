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

/// How tasks are kept (see [`ServerBuilder::task_store`]).
#[derive(Clone)]
pub(super) struct TaskOptions {
    pub(super) store: Option<Arc<dyn TaskStore>>,
    pub(super) ttl: Duration,
    pub(super) poll: Duration,
}

impl Default for TaskOptions {
    fn default() -> Self {
        Self {
            store: None,
            ttl: Duration::from_secs(300),
            poll: Duration::from_millis(500),
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
