//! The skills a server serves, plugged in on the builder.

use super::Skills;
use crate::server::ServerBuilder;

impl<K> ServerBuilder<K> {
    /// Serves these skills (the `io.modelcontextprotocol/skills` extension, off unless
    /// called): `skills/list`, `skills/get`, `resources/directory/read` and the files by
    /// `resources/read`; declared in `server/discover` and in 2025-11-25 `initialize`
    /// results. A [reload](Skills::reload) that changes the catalog notifies listeners.
    pub fn skills(mut self, skills: Skills) -> Self {
        let _ = skills.inner.changes.set(self.changes());
        self.settings.insert(skills);
        self
    }
}
