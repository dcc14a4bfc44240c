//! The server itself: what every request is served from, built once and shared.

use super::changes::Changes;
use super::{completion, lists, prompt, resource, tool, uri_template};
use crate::mirror::ParamKind;
use crate::state::StateConfig;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use sterna_types::meta::Implementation;
use sterna_types::result::CacheScope;

/// A 2026-07-28 MCP server. Cheap to clone; every clone serves the same router.
///
/// Build one with [`Server::builder`], then serve it over a transport
/// ([`serve_stdio`](crate::transport::serve_stdio), a
/// [`duplex`](crate::transport::serve_stream) for tests, Streamable HTTP) or call
/// [`handle`](Server::handle) yourself.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.inner.info.name)
            .field("tools", &self.inner.tools.len())
            .field("prompts", &self.inner.prompts.len())
            .field("resources", &self.inner.resources.len())
            .field("templates", &self.inner.templates.len())
            .finish()
    }
}

pub(crate) struct ToolEntry {
    pub(crate) name: Arc<str>,
    pub(crate) handler: Arc<dyn tool::ErasedTool>,
    pub(crate) single_use: bool,
    pub(crate) unsolicited: bool,
    pub(crate) task: super::tasks::TaskSupport,
    pub(crate) headers: Vec<crate::mirror::HeaderParam>,
}

pub(crate) struct PromptEntry {
    pub(crate) name: Arc<str>,
    pub(crate) handler: Arc<dyn prompt::ErasedPrompt>,
    pub(crate) completions: std::collections::BTreeMap<String, Arc<dyn completion::Completer>>,
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
    pub(crate) completions: std::collections::BTreeMap<String, Arc<dyn completion::Completer>>,
}

pub(crate) struct Inner {
    pub(crate) info: Arc<Implementation>,
    pub(crate) state: StateConfig,
    pub(crate) tools: HashMap<String, ToolEntry>,
    pub(crate) prompts: HashMap<String, PromptEntry>,
    pub(crate) resources: HashMap<String, ResourceEntry>,
    pub(crate) templates: Vec<TemplateEntry>,
    pub(crate) lists: lists::Lists,
    pub(crate) cache: (Duration, CacheScope),
    pub(crate) completions: bool,
    pub(crate) changes: Changes,
    pub(crate) closing: tokio_util::sync::CancellationToken,
    pub(crate) legacy: super::legacy::LegacyLimits,
    /// Tasks, when a tool may run as one.
    pub(crate) tasks: Option<super::tasks::Tasks>,
}

impl Server {
    /// The server's self-description.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The handle that announces list and resource changes to `subscriptions/listen`
    /// streams.
    pub fn changes(&self) -> &Changes {
        &self.inner.changes
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
        let t = self.inner.tools.get(tool).filter(|t| !t.headers.is_empty());
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
}
