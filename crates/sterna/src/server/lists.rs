//! Pre-rendered results: list pages and `server/discover` never change after `build`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use serde_json::value::{RawValue, to_raw_value};
use std::sync::Arc;
use std::time::Duration;
use sterna_types::capabilities::{ListChangedCapability, ResourcesCapability, ServerCapabilities};
use sterna_types::discover::DiscoverResult;
use sterna_types::error::ErrorObject;
use sterna_types::meta::{Implementation, ResultMeta};
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
}

fn meta(info: &Arc<Implementation>) -> Option<ResultMeta> {
    Some(ResultMeta {
        server_info: Some(info.clone()),
        ..ResultMeta::default()
    })
}

fn render<T: Serialize>(v: &T) -> Box<RawValue> {
    to_raw_value(v).expect("results serialize")
}

fn paginate<I: Clone, R: Serialize>(
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

impl Lists {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build(
        info: &Arc<Implementation>,
        instructions: Option<&str>,
        cache: (Duration, CacheScope),
        page_size: usize,
        tools: Vec<Tool>,
        prompts: Vec<Prompt>,
        resources: Vec<Resource>,
        templates: Vec<ResourceTemplate>,
        completions: bool,
    ) -> Self {
        let ttl = Some(cache.0.as_millis() as u64);
        let scope = Some(cache.1);
        let has_tools = !tools.is_empty();
        let has_prompts = !prompts.is_empty();
        let has_resources = !resources.is_empty() || !templates.is_empty();
        let tools = has_tools.then(|| {
            paginate("tools", &tools, page_size, |tools, next_cursor| {
                ListToolsResult {
                    result_type: ResultType::Complete,
                    tools,
                    next_cursor,
                    ttl_ms: ttl,
                    cache_scope: scope,
                    meta: meta(info),
                }
            })
        });
        let prompts = has_prompts.then(|| {
            paginate("prompts", &prompts, page_size, |prompts, next_cursor| {
                ListPromptsResult {
                    result_type: ResultType::Complete,
                    prompts,
                    next_cursor,
                    ttl_ms: ttl,
                    cache_scope: scope,
                    meta: meta(info),
                }
            })
        });
        let resource_pages = has_resources.then(|| {
            paginate(
                "resources",
                &resources,
                page_size,
                |resources, next_cursor| ListResourcesResult {
                    result_type: ResultType::Complete,
                    resources,
                    next_cursor,
                    ttl_ms: ttl,
                    cache_scope: scope,
                    meta: meta(info),
                },
            )
        });
        let template_pages = has_resources.then(|| {
            paginate(
                "templates",
                &templates,
                page_size,
                |resource_templates, next_cursor| ListResourceTemplatesResult {
                    result_type: ResultType::Complete,
                    resource_templates,
                    next_cursor,
                    ttl_ms: ttl,
                    cache_scope: scope,
                    meta: meta(info),
                },
            )
        });
        let capabilities = ServerCapabilities {
            tools: has_tools.then_some(ListChangedCapability {
                list_changed: Some(true),
            }),
            prompts: has_prompts.then_some(ListChangedCapability {
                list_changed: Some(true),
            }),
            resources: has_resources.then_some(ResourcesCapability {
                subscribe: Some(true),
                list_changed: Some(true),
            }),
            completions: completions.then(Default::default),
            ..ServerCapabilities::default()
        };
        let discover = render(&DiscoverResult {
            result_type: ResultType::Complete,
            supported_versions: sterna_types::version::MODERN_VERSIONS
                .iter()
                .map(|v| (*v).to_owned())
                .collect(),
            capabilities,
            instructions: instructions.map(str::to_owned),
            ttl_ms: cache.0.as_millis() as u64,
            cache_scope: cache.1,
            meta: meta(info),
        });
        Self {
            tools,
            prompts,
            resources: resource_pages,
            templates: template_pages,
            discover,
        }
    }
}
