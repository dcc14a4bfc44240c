//! Change notifications for `subscriptions/listen`.
//!
//! A [`Changes`] handle is shared by the server and every handler. Announcing a change
//! reaches every open `subscriptions/listen` stream of **this process** whose filter
//! asked for it. (Replicas behind a load balancer each hold their own listeners: fan a
//! change out to every replica, e.g. through a message bus, and announce it on each.)

use tokio::sync::broadcast;

/// A change a listener may subscribe to.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// Announces changes to `subscriptions/listen` streams. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Changes {
    tx: broadcast::Sender<Change>,
}

impl Default for Changes {
    fn default() -> Self {
        let (tx, _) = broadcast::channel(256);
        Self { tx }
    }
}

impl Changes {
    /// Announces a change (a no-op when nobody listens).
    pub fn announce(&self, change: Change) {
        let _ = self.tx.send(change);
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
