//! What the 2025-11-25 era adds to the HTTP endpoint's public face: its settings on
//! [`HttpConfig`](super::super::HttpConfig), and the fleet's and the monitor's entry
//! points on [`McpService`](super::super::McpService).

use super::{LegacyHttp, SessionConfig, SessionEvent};

impl crate::http::HttpConfig {
    /// How 2025-11-25 clients' sessions are kept (store, idle expiry, resume window).
    pub fn sessions(mut self, sessions: SessionConfig) -> Self {
        self.sessions = sessions;
        self
    }
}

impl crate::http::McpService {
    /// Hands this replica an event another replica published about a 2025-11-25
    /// session (see [`SessionBus`](super::SessionBus)).
    pub fn deliver(&self, event: SessionEvent) {
        if let Some(legacy) = self.era::<LegacyHttp>() {
            legacy.deliver(event);
        }
    }

    /// How many 2025-11-25 sessions this process holds live state for (requests,
    /// streams, pushes): a gauge for monitoring, and for tests that check abandoned
    /// sessions are released.
    pub fn live_sessions(&self) -> usize {
        self.era::<LegacyHttp>()
            .map_or(0, LegacyHttp::live_sessions)
    }
}
