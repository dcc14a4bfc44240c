//! The server itself: what every request is served from, built once and shared. Its state
//! is private to this file; the stages read it through the accessors below. Everything a
//! user can do with a [`Server`] is in `public.rs`, above the stages.

use super::changes::Changes;
use super::lists::Lists;
use super::routes::{PromptEntry, ResourceEntry, Routes, ToolEntry};
use super::wing::Wings;
use crate::state::StateConfig;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use sterna_types::meta::SharedImplementation;
use sterna_types::result::CacheScope;
use tokio_util::sync::CancellationToken;

/// A 2026-07-28 MCP server. Cheap to clone; every clone serves the same router.
///
/// Build one with [`Server::builder`], then serve it over a transport
/// ([`serve_stdio`](crate::transport::serve_stdio), a
/// [`duplex`](crate::transport::serve_stream) for tests, Streamable HTTP) or call
/// [`handle`](Server::handle) yourself.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = &self.inner.parts.routes;
        f.debug_struct("Server")
            .field("name", &self.inner.info.name)
            .field("tools", &r.tools.len())
            .field("prompts", &r.prompts.len())
            .field("resources", &r.resources.len())
            .field("templates", &r.templates.len())
            .finish()
    }
}

/// Everything a server is built from (the builder's output).
pub(crate) struct Parts {
    pub(crate) info: SharedImplementation,
    pub(crate) state: StateConfig,
    pub(crate) routes: Routes,
    pub(crate) lists: Lists,
    pub(crate) cache: (Duration, CacheScope),
    pub(crate) changes: Changes,
    /// Each client's share of open `subscriptions/listen` streams.
    pub(crate) listeners: Arc<super::places::Places>,
    pub(crate) wings: Wings<Server>,
    /// The per-request metric handles (registered when the server was built).
    pub(crate) metrics: crate::metrics::RequestMetrics,
}

struct Inner {
    parts: Parts,
    info: SharedImplementation,
    closing: CancellationToken,
}

/// What the stages read (crate-private).
impl Server {
    pub(crate) fn from_parts(parts: Parts) -> Self {
        let info = parts.info.clone();
        Self {
            inner: Arc::new(Inner {
                parts,
                info,
                closing: CancellationToken::new(),
            }),
        }
    }

    /// The self-description, shared (stamped on 2026-07-28 results).
    pub(crate) fn shared_info(&self) -> &SharedImplementation {
        &self.inner.info
    }

    /// What the server routes to.
    pub(crate) fn routes(&self) -> &Routes {
        &self.inner.parts.routes
    }

    /// A tool by name.
    pub(crate) fn tool(&self, name: &str) -> Option<&ToolEntry> {
        self.inner.parts.routes.tool(name)
    }

    /// A prompt by name.
    pub(crate) fn prompt(&self, name: &str) -> Option<&PromptEntry> {
        self.inner.parts.routes.prompt(name)
    }

    /// A static resource, or the first template that matches (with its variables).
    pub(crate) fn resource(&self, uri: &str) -> Option<(&ResourceEntry, BTreeMap<String, String>)> {
        self.inner.parts.routes.resource(uri)
    }

    /// How `requestState` is sealed and checked.
    pub(crate) fn state(&self) -> &StateConfig {
        &self.inner.parts.state
    }

    /// The pre-rendered 2026-07-28 lists and discover result.
    pub(crate) fn lists(&self) -> &Lists {
        &self.inner.parts.lists
    }

    /// The caching hint of cacheable results.
    pub(crate) fn cache(&self) -> (Duration, CacheScope) {
        self.inner.parts.cache
    }

    /// The wings around the core.
    pub(crate) fn wings(&self) -> &Wings<Server> {
        &self.inner.parts.wings
    }

    /// The per-request metric handles.
    pub(crate) fn metrics(&self) -> &crate::metrics::RequestMetrics {
        &self.inner.parts.metrics
    }

    /// The change announcer (public as [`Server::changes`]).
    pub(crate) fn change_handle(&self) -> &Changes {
        &self.inner.parts.changes
    }

    /// Each client's share of open `subscriptions/listen` streams.
    pub(crate) fn listeners(&self) -> &Arc<super::places::Places> {
        &self.inner.parts.listeners
    }

    /// Cancelled when subscriptions close (graceful shutdown).
    pub(crate) fn closing(&self) -> &CancellationToken {
        &self.inner.closing
    }
}
