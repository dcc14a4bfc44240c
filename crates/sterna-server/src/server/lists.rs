//! Pre-rendered results: list pages and `server/discover` never change after `build`;
//! only `resources/list`, when a wing lists resources of its own, is rendered per request
//! ([`Lists::resources_now`]).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use serde_json::value::{RawValue, to_raw_value};
use std::time::Duration;
use sterna_types::capabilities::{ListChangedCapability, ResourcesCapability, ServerCapabilities};
use sterna_types::discover::DiscoverResult;
use sterna_types::error::ErrorObject;
use sterna_types::meta::{ResultMeta, SharedImplementation};
use sterna_types::prompts::{ListPromptsResult, Prompt};
use sterna_types::resources::{
    ListResourceTemplatesResult, ListResourcesResult, Resource, ResourceTemplate,
};
use sterna_types::result::{CacheScope, ResultType};
use sterna_types::tools::{ListToolsResult, Tool};

/// The pages of one list, rendered. `None` when the capability is not offered.
pub(crate) type Pages = Option<Vec<Box<RawValue>>>;

pub(crate) struct Lists {
    pub(crate) tools: Pages,
    pub(crate) prompts: Pages,
    pub(crate) resources: Pages,
    pub(crate) templates: Pages,
    pub(crate) discover: Box<RawValue>,
    /// What `resources/list` is rendered from per request (wings' rows after these).
    dynamic: Dynamic,
}

/// The registered resources and how their pages look, for pages rendered per request.
struct Dynamic {
    info: SharedImplementation,
    hint: Hint,
    size: usize,
    rows: Vec<Resource>,
}

/// One page of `items` computed now: the page the cursor points at, rendered by `page`.
pub(crate) fn page_now<I: Clone, R: Serialize>(
    kind: &str,
    items: &[I],
    size: usize,
    at: Option<&str>,
    page: impl FnOnce(Vec<I>, Option<String>) -> R,
) -> Result<Box<RawValue>, ErrorObject> {
    let pages = items.len().div_ceil(size).max(1);
    let i = page_index(kind, at, pages)?;
    let chunk = items.iter().skip(i * size).take(size).cloned().collect();
    let next = (i + 1 < pages).then(|| cursor(kind, i + 1));
    Ok(render(&page(chunk, next)))
}

fn meta(info: &SharedImplementation) -> Option<ResultMeta> {
    Some(ResultMeta {
        server_info: Some(info.clone()),
        ..ResultMeta::default()
    })
}

fn render<T: Serialize>(v: &T) -> Box<RawValue> {
    to_raw_value(v).expect("results serialize")
}

pub(crate) fn paginate<I: Clone, R: Serialize>(
    kind: &str,
    items: &[I],
    page_size: usize,
    mut page: impl FnMut(Vec<I>, Option<String>) -> R,
) -> Vec<Box<RawValue>> {
    let chunks: Vec<&[I]> = if items.is_empty() {
        vec![&[]]
    } else {
        items.chunks(page_size).collect()
    };
    let n = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let next = (i + 1 < n).then(|| cursor(kind, i + 1));
            render(&page(chunk.to_vec(), next))
        })
        .collect()
}

fn cursor(kind: &str, page: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("{kind}/{page}"))
}

/// The page a cursor points at, or `-32602`.
pub(crate) fn page_index(
    kind: &str,
    cursor: Option<&str>,
    pages: usize,
) -> Result<usize, ErrorObject> {
    let Some(c) = cursor else { return Ok(0) };
    let bad = || ErrorObject::invalid_params("Invalid cursor");
    let decoded = URL_SAFE_NO_PAD.decode(c).map_err(|_| bad())?;
    let text = std::str::from_utf8(&decoded).map_err(|_| bad())?;
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let n: usize = n.parse().map_err(|_| bad())?;
    if k != kind || n == 0 || n >= pages {
        return Err(bad());
    }
    Ok(n)
}

/// What the server offers, as the lists describe it.
#[derive(Default)]
pub(crate) struct Catalog {
    pub(crate) tools: Vec<Tool>,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    pub(crate) completions: bool,
}

impl Catalog {
    /// The capabilities this catalog amounts to.
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        let changes = Some(ListChangedCapability {
            list_changed: Some(true),
        });
        let has_resources = !self.resources.is_empty() || !self.templates.is_empty();
        ServerCapabilities {
            tools: changes.clone().filter(|_| !self.tools.is_empty()),
            prompts: changes.filter(|_| !self.prompts.is_empty()),
            resources: has_resources.then_some(ResourcesCapability {
                subscribe: Some(true),
                list_changed: Some(true),
            }),
            completions: self.completions.then(Default::default),
            ..ServerCapabilities::default()
        }
    }
}

/// The caching hint stamped on every list page.
#[derive(Clone, Copy)]
struct Hint {
    ttl: Option<u64>,
    scope: Option<CacheScope>,
}

impl Lists {
    pub(crate) fn build(
        info: &SharedImplementation,
        instructions: Option<&str>,
        cache: (Duration, CacheScope),
        page_size: usize,
        catalog: &Catalog,
        capabilities: ServerCapabilities,
        versions: Vec<String>,
    ) -> Self {
        let hint = Hint {
            ttl: Some(cache.0.as_millis() as u64),
            scope: Some(cache.1),
        };
        let discover = render(&DiscoverResult {
            result_type: ResultType::Complete,
            supported_versions: versions,
            capabilities: capabilities.clone(),
            instructions: instructions.map(str::to_owned),
            ttl_ms: cache.0.as_millis() as u64,
            cache_scope: cache.1,
            meta: meta(info),
        });
        let has_resources = capabilities.resources.is_some();
        Self {
            tools: capabilities
                .tools
                .is_some()
                .then(|| tool_pages(info, hint, page_size, &catalog.tools)),
            prompts: capabilities
                .prompts
                .is_some()
                .then(|| prompt_pages(info, hint, page_size, &catalog.prompts)),
            resources: has_resources
                .then(|| resource_pages(info, hint, page_size, &catalog.resources)),
            templates: has_resources
                .then(|| template_pages(info, hint, page_size, &catalog.templates)),
            discover,
            dynamic: Dynamic {
                info: info.clone(),
                hint,
                size: page_size,
                rows: catalog.resources.clone(),
            },
        }
    }

    /// A page of `resources/list` rendered now: the registered resources, then `extra`
    /// (what the wings list at this moment).
    pub(crate) fn resources_now(
        &self,
        extra: Vec<Resource>,
        at: Option<&str>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let d = &self.dynamic;
        let mut rows = d.rows.clone();
        rows.extend(extra);
        page_now("resources", &rows, d.size, at, |resources, next_cursor| {
            ListResourcesResult {
                result_type: ResultType::Complete,
                resources,
                next_cursor,
                ttl_ms: d.hint.ttl,
                cache_scope: d.hint.scope,
                meta: meta(&d.info),
            }
        })
    }
}

fn tool_pages(
    info: &SharedImplementation,
    h: Hint,
    size: usize,
    items: &[Tool],
) -> Vec<Box<RawValue>> {
    paginate("tools", items, size, |tools, next_cursor| ListToolsResult {
        result_type: ResultType::Complete,
        tools,
        next_cursor,
        ttl_ms: h.ttl,
        cache_scope: h.scope,
        meta: meta(info),
    })
}

fn prompt_pages(
    info: &SharedImplementation,
    h: Hint,
    size: usize,
    items: &[Prompt],
) -> Vec<Box<RawValue>> {
    paginate("prompts", items, size, |prompts, next_cursor| {
        ListPromptsResult {
            result_type: ResultType::Complete,
            prompts,
            next_cursor,
            ttl_ms: h.ttl,
            cache_scope: h.scope,
            meta: meta(info),
        }
    })
}

fn resource_pages(
    info: &SharedImplementation,
    h: Hint,
    size: usize,
    items: &[Resource],
) -> Vec<Box<RawValue>> {
    paginate("resources", items, size, |resources, next_cursor| {
        ListResourcesResult {
            result_type: ResultType::Complete,
            resources,
            next_cursor,
            ttl_ms: h.ttl,
            cache_scope: h.scope,
            meta: meta(info),
        }
    })
}

fn template_pages(
    info: &SharedImplementation,
    h: Hint,
    size: usize,
    items: &[ResourceTemplate],
) -> Vec<Box<RawValue>> {
    paginate(
        "templates",
        items,
        size,
        |resource_templates, next_cursor| ListResourceTemplatesResult {
            result_type: ResultType::Complete,
            resource_templates,
            next_cursor,
            ttl_ms: h.ttl,
            cache_scope: h.scope,
            meta: meta(info),
        },
    )
}
