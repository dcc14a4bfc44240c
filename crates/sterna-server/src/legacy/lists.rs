//! What a legacy session is answered from, rendered once at build time from the typed
//! catalog: the list pages without 2026 decorations, and the capabilities and
//! instructions `initialize` returns.

use crate::server::lists::{Catalog, Pages, page_now, paginate};
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::value::RawValue;
use sterna_types::capabilities::ServerCapabilities;
use sterna_types::error::ErrorObject;
use sterna_types::resources::Resource;

/// The lists and `initialize` answer of 2025 sessions.
pub(crate) struct LegacyLists {
    /// The registered resources and the page size, for pages rendered per request.
    rows: Vec<Resource>,
    size: usize,
    pub(crate) tools: Pages,
    pub(crate) prompts: Pages,
    pub(crate) resources: Pages,
    pub(crate) templates: Pages,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) instructions: Option<String>,
}

/// One page as 2025 sends it: the items under their key, and the next cursor.
struct Page<T> {
    key: &'static str,
    items: Vec<T>,
    next: Option<String>,
}

impl<T: Serialize> Serialize for Page<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry(self.key, &self.items)?;
        if let Some(next) = &self.next {
            m.serialize_entry("nextCursor", next)?;
        }
        m.end()
    }
}

fn pages<T: Clone + Serialize>(
    offered: bool,
    kind: &str,
    key: &'static str,
    items: &[T],
    size: usize,
) -> Pages {
    offered.then(|| paginate(kind, items, size, |items, next| Page { key, items, next }))
}

impl LegacyLists {
    /// The pages of every list the capabilities offer, and the `initialize` capabilities
    /// (logging added: 2025 sessions have `logging/setLevel`).
    pub(crate) fn build(
        catalog: &Catalog,
        caps: &ServerCapabilities,
        instructions: Option<&str>,
        size: usize,
    ) -> Self {
        let resources = caps.resources.is_some();
        Self {
            rows: catalog.resources.clone(),
            size,
            tools: pages(caps.tools.is_some(), "tools", "tools", &catalog.tools, size),
            prompts: pages(
                caps.prompts.is_some(),
                "prompts",
                "prompts",
                &catalog.prompts,
                size,
            ),
            resources: pages(
                resources,
                "resources",
                "resources",
                &catalog.resources,
                size,
            ),
            templates: pages(
                resources,
                "templates",
                "resourceTemplates",
                &catalog.templates,
                size,
            ),
            capabilities: ServerCapabilities {
                logging: Some(Default::default()),
                ..caps.clone()
            },
            instructions: instructions.map(str::to_owned),
        }
    }
}

impl LegacyLists {
    /// A page of `resources/list` rendered now: the registered resources, then `extra`.
    pub(crate) fn resources_now(
        &self,
        extra: Vec<Resource>,
        at: Option<&str>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let mut rows = self.rows.clone();
        rows.extend(extra);
        page_now("resources", &rows, self.size, at, |items, next| Page {
            key: "resources",
            items,
            next,
        })
    }
}
