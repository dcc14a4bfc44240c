//! The server itself: what every request is served from, built once and shared. Its state
//! is private to this file; the stages read it through the accessors below, and
//! everything a user can do with a [`Server`] is in the one `impl` block that follows.

use super::builder::{NeedsKeys, ServerBuilder};
use super::changes::Changes;
use super::context::RequestEnv;
use super::inbound::{Body, Inbound, classify};
use super::lists::Lists;
use super::prepare::Prepared;
use super::response::Response;
use super::typemap::TypeMap;
use super::wing::Wings;
use super::{completion, prompt, resource, tool, uri_template};
use crate::state::StateConfig;
use serde_json::value::RawValue;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::Implementation;
use sterna_types::mirror::ParamKind;
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

pub(crate) struct ToolEntry {
    pub(crate) name: Arc<str>,
    pub(crate) handler: Arc<dyn tool::ErasedTool>,
    pub(crate) single_use: bool,
    pub(crate) unsolicited: bool,
    /// The tool asks declared questions (`ask(..).run(..)`): its body runs only once
    /// every answer is there.
    #[cfg_attr(not(feature = "tasks"), allow(dead_code, reason = "read by wings"))]
    pub(crate) declared: bool,
    /// Settings wings keep on the tool.
    #[cfg_attr(not(feature = "tasks"), allow(dead_code, reason = "read by wings"))]
    pub(crate) settings: TypeMap,
    pub(crate) headers: Vec<sterna_types::mirror::HeaderParam>,
}

pub(crate) struct PromptEntry {
    pub(crate) name: Arc<str>,
    pub(crate) handler: Arc<dyn prompt::ErasedPrompt>,
    pub(crate) completions: BTreeMap<String, Arc<dyn completion::Completer>>,
}

pub(crate) struct ResourceEntry {
    pub(crate) handler: Arc<dyn resource::ErasedResource>,
    pub(crate) mime: Option<String>,
    pub(crate) cache: Option<(Duration, CacheScope)>,
}

pub(crate) struct TemplateEntry {
    pub(crate) template: String,
    pub(crate) parsed: uri_template::UriTemplate,
    pub(crate) entry: ResourceEntry,
    pub(crate) completions: BTreeMap<String, Arc<dyn completion::Completer>>,
}

/// What requests are routed to.
#[derive(Default)]
pub(crate) struct Routes {
    pub(crate) tools: HashMap<String, ToolEntry>,
    pub(crate) prompts: HashMap<String, PromptEntry>,
    pub(crate) resources: HashMap<String, ResourceEntry>,
    pub(crate) templates: Vec<TemplateEntry>,
    pub(crate) completions: bool,
}

/// Everything a server is built from (the builder's output).
pub(crate) struct Parts {
    pub(crate) info: Arc<Implementation>,
    pub(crate) state: StateConfig,
    pub(crate) routes: Routes,
    pub(crate) lists: Lists,
    pub(crate) cache: (Duration, CacheScope),
    pub(crate) changes: Changes,
    pub(crate) wings: Wings,
    /// The per-request metric handles (registered when the server was built).
    pub(crate) metrics: crate::metrics::RequestMetrics,
}

struct Inner {
    parts: Parts,
    info: Arc<Implementation>,
    closing: CancellationToken,
}

impl Server {
    /// Starts building a server called `name` (also the audience its states are bound
    /// to) at `version`.
    pub fn builder(
        name: impl Into<String>,
        version: impl Into<String>,
    ) -> ServerBuilder<NeedsKeys> {
        ServerBuilder::new(Implementation::new(name, version))
    }

    /// The server's self-description.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The handle that announces list and resource changes to `subscriptions/listen`
    /// streams.
    pub fn changes(&self) -> &Changes {
        &self.inner.parts.changes
    }

    /// Ends every open `subscriptions/listen` stream gracefully (each gets its closing
    /// result). Called by the HTTP server's graceful shutdown.
    pub fn close_subscriptions(&self) {
        self.inner.closing.cancel();
    }

    /// The `Mcp-Param-*` headers a tool's arguments are mirrored into
    /// (`x-mcp-header` annotations): `(header name, argument path, type)`; `None` for an
    /// unknown tool or one without annotations.
    pub fn tool_header_params(
        &self,
        tool: &str,
    ) -> Option<impl Iterator<Item = (&str, &[String], ParamKind)>> {
        let t = self.tool(tool).filter(|t| !t.headers.is_empty());
        t.map(|t| {
            t.headers
                .iter()
                .map(|h| (h.name.as_str(), h.path.as_slice(), h.kind))
        })
    }

    /// The protocol revisions served per request (2026-07-28 and later). The legacy
    /// revisions of [`sterna_types::legacy::LEGACY_VERSIONS`] are served through
    /// `initialize`.
    pub fn supported_versions(&self) -> &'static [&'static str] {
        sterna_types::version::MODERN_VERSIONS
    }

    /// Whether this server's single-use tools are protected: `Ok` when it has no replay
    /// store, or its store can keep every consumed state until it expires (see
    /// [`ReplayStore::check`](crate::state::ReplayStore::check)). Otherwise every
    /// single-use call is refused with `-32603` until the store is fixed; this logs an
    /// error saying why. `HttpServer` calls it when it starts serving.
    pub async fn check_single_use(&self) -> Result<(), crate::state::ReplayError> {
        let Some(store) = &self.state().replay else {
            return Ok(());
        };
        let checked = store.check().await;
        if let Err(e) = &checked {
            tracing::error!(error = %e, "single-use tools will be refused until this is fixed");
        }
        checked
    }

    /// Handles one message given as bytes (a line of stdio, a POST body). Returns the
    /// response to send, if any: notifications and cancelled requests get none.
    pub async fn handle_message(&self, bytes: &[u8], env: RequestEnv) -> Option<Response> {
        match classify(bytes) {
            Inbound::Malformed(m) => Some(Response::error(m.id, m.error)),
            Inbound::Request { id, method, params } => {
                match Prepared::read(self, id, &method, params) {
                    Ok(prepared) => prepared.run(self, env).await,
                    Err(refused) => Some(refused),
                }
            }
            Inbound::Notification { method, .. } => {
                tracing::debug!(%method, "notification ignored");
                None
            }
            Inbound::Response { id, .. } => {
                tracing::warn!(
                    ?id,
                    "a response arrived but this server never sends requests"
                );
                None
            }
        }
    }

    /// Handles one request. `None` when it was cancelled (nothing may be sent then).
    pub async fn handle(
        &self,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        env: RequestEnv,
    ) -> Option<Response> {
        match Prepared::read(self, id, method, Body::Raw(params)) {
            Ok(prepared) => prepared.run(self, env).await,
            Err(refused) => Some(refused),
        }
    }
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
    pub(crate) fn info_arc(&self) -> &Arc<Implementation> {
        &self.inner.info
    }

    /// What the server routes to.
    pub(crate) fn routes(&self) -> &Routes {
        &self.inner.parts.routes
    }

    /// A tool by name.
    pub(crate) fn tool(&self, name: &str) -> Option<&ToolEntry> {
        self.inner.parts.routes.tools.get(name)
    }

    /// A prompt by name.
    pub(crate) fn prompt(&self, name: &str) -> Option<&PromptEntry> {
        self.inner.parts.routes.prompts.get(name)
    }

    /// A static resource, or the first template that matches (with its variables).
    pub(crate) fn resource(&self, uri: &str) -> Option<(&ResourceEntry, BTreeMap<String, String>)> {
        let r = &self.inner.parts.routes;
        if let Some(e) = r.resources.get(uri) {
            return Some((e, BTreeMap::new()));
        }
        r.templates
            .iter()
            .find_map(|t| t.parsed.matches(uri).map(|v| (&t.entry, v)))
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
    pub(crate) fn wings(&self) -> &Wings {
        &self.inner.parts.wings
    }

    /// The per-request metric handles.
    pub(crate) fn metrics(&self) -> &crate::metrics::RequestMetrics {
        &self.inner.parts.metrics
    }

    /// Cancelled when subscriptions close (graceful shutdown).
    pub(crate) fn closing(&self) -> &CancellationToken {
        &self.inner.closing
    }
}
