//! What requests are routed to: the registered tools, prompts, resources and templates,
//! and the lookups of a name or URI.

use super::typemap::TypeMap;
use super::{completion, prompt, resource, tool, uri_template};
use crate::fast_map::FastMap;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use sterna_types::result::CacheScope;

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
    pub(crate) tools: FastMap<String, ToolEntry>,
    pub(crate) prompts: FastMap<String, PromptEntry>,
    pub(crate) resources: FastMap<String, ResourceEntry>,
    pub(crate) templates: Vec<TemplateEntry>,
    pub(crate) completions: bool,
    /// Whether any tool mirrors arguments into `Mcp-Param-*` headers (when none does, a
    /// call's headers are checked without looking its tool up).
    pub(crate) mirrored: bool,
}

impl Routes {
    /// A tool by name.
    pub(crate) fn tool(&self, name: &str) -> Option<&ToolEntry> {
        self.tools.get(name)
    }

    /// A prompt by name.
    pub(crate) fn prompt(&self, name: &str) -> Option<&PromptEntry> {
        self.prompts.get(name)
    }

    /// A static resource, or the first template that matches (with its variables).
    pub(crate) fn resource(&self, uri: &str) -> Option<(&ResourceEntry, BTreeMap<String, String>)> {
        if let Some(e) = self.resources.get(uri) {
            return Some((e, BTreeMap::new()));
        }
        self.templates
            .iter()
            .find_map(|t| t.parsed.matches(uri).map(|v| (&t.entry, v)))
    }
}
