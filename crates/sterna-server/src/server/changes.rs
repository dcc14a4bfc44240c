//! Change notifications for `subscriptions/listen`.
//!
//! A [`Changes`] handle is shared by the server and every handler. Announcing a change
//! reaches every open `subscriptions/listen` stream of **this process** whose filter
//! asked for it. Replicas behind a load balancer each hold their own listeners: give the
//! handle a [forwarder](Changes::forward_with) that publishes each change to the others
//! (`sterna-redis` does it through Redis pub/sub), and announce what they publish with
//! [`announce_local`](Changes::announce_local).

use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};
use tokio::sync::broadcast;

/// A change a listener may subscribe to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", content = "uri", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Change {
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated` for this URI.
    ResourceUpdated(String),
}

type Forward = Box<dyn Fn(&Change) + Send + Sync>;

/// Announces changes to `subscriptions/listen` streams. Cheap to clone.
#[derive(Clone)]
pub struct Changes {
    tx: broadcast::Sender<Change>,
    forward: Arc<OnceLock<Forward>>,
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes")
            .field("forwarded", &self.forward.get().is_some())
            .finish()
    }
}

impl Default for Changes {
    fn default() -> Self {
        let (tx, _) = broadcast::channel(256);
        Self {
            tx,
            forward: Arc::default(),
        }
    }
}

impl Changes {
    /// Announces a change to this process's listeners, and to the other replicas through
    /// the forwarder, if one is set.
    pub fn announce(&self, change: Change) {
        if let Some(forward) = self.forward.get() {
            forward(&change);
        }
        self.announce_local(change);
    }

    /// Announces a change to this process's listeners only (one another replica
    /// announced).
    pub fn announce_local(&self, change: Change) {
        let _ = self.tx.send(change);
    }

    /// Sets what publishes every change announced here to the other replicas. Only the
    /// first forwarder is kept; `false` when one was already set.
    pub fn forward_with(&self, forward: impl Fn(&Change) + Send + Sync + 'static) -> bool {
        self.forward.set(Box::new(forward)).is_ok()
    }

    /// The tool list changed.
    pub fn tools_list_changed(&self) {
        self.announce(Change::ToolsListChanged);
    }

    /// The prompt list changed.
    pub fn prompts_list_changed(&self) {
        self.announce(Change::PromptsListChanged);
    }

    /// The resource list changed.
    pub fn resources_list_changed(&self) {
        self.announce(Change::ResourcesListChanged);
    }

    /// The resource at `uri` changed.
    pub fn resource_updated(&self, uri: impl Into<String>) {
        self.announce(Change::ResourceUpdated(uri.into()));
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.tx.subscribe()
    }
}
