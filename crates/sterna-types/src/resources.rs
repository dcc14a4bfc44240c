//! Resources: `resources/list`, `resources/templates/list` and `resources/read`.

use crate::JsonObject;
use crate::content::{Annotations, Icon, ResourceContents};
use crate::jsonrpc::Method;
use crate::meta::{RequestMeta, ResultMeta};
use crate::mrtr::InputResponses;
use crate::mrtr::Outcome;
use crate::result::{CacheScope, ResultType};
use crate::tools::PaginatedRequestParams;
use serde::{Deserialize, Serialize};

/// A resource the server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// A family of resources described by an RFC 6570 URI template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template, e.g. `file:///logs/{date}`.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of the resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The params of `resources/read` (first call or MRTR retry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceRequestParams {
    /// The URI.
    pub uri: String,
    /// Answers to the previous round's questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The previous round's state, echoed exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMeta,
}

/// The result of `resources/read`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: ResultType,
    /// The contents (several for a directory-like resource).
    pub contents: Vec<ResourceContents>,
    /// Cache lifetime in milliseconds (required from 2026-07-28 servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope (required from 2026-07-28 servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl ReadResourceResult {
    /// A result with these contents.
    pub fn new(contents: Vec<ResourceContents>) -> Self {
        Self {
            contents,
            ..Self::default()
        }
    }
}

/// The result of `resources/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: ResultType,
    /// The resources of this page.
    pub resources: Vec<Resource>,
    /// Cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Cache lifetime in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// The result of `resources/templates/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: ResultType,
    /// The templates of this page.
    pub resource_templates: Vec<ResourceTemplate>,
    /// Cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Cache lifetime in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// `resources/read`.
#[derive(Debug)]
pub enum ReadResource {}

impl Method for ReadResource {
    const NAME: &'static str = "resources/read";
    type Params = ReadResourceRequestParams;
    type Result = Outcome<ReadResourceResult>;
}

/// `resources/list`.
#[derive(Debug)]
pub enum ListResources {}

impl Method for ListResources {
    const NAME: &'static str = "resources/list";
    type Params = PaginatedRequestParams;
    type Result = ListResourcesResult;
}

/// `resources/templates/list`.
#[derive(Debug)]
pub enum ListResourceTemplates {}

impl Method for ListResourceTemplates {
    const NAME: &'static str = "resources/templates/list";
    type Params = PaginatedRequestParams;
    type Result = ListResourceTemplatesResult;
}
