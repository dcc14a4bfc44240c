//! The 2025-11-25 era's settings on the server builder.

use super::LegacyLimits;
use crate::server::ServerBuilder;

impl<K> ServerBuilder<K> {
    /// Bounds of serving 2025-11-25 clients, whose questions are pushed as requests and
    /// answered while the call waits: rounds, time per round of pushes, pause after a
    /// round that only carried state.
    pub fn legacy_limits(mut self, limits: LegacyLimits) -> Self {
        self.settings.insert(limits);
        self
    }
}
