//! Tools: `tools/list` and `tools/call`.

pub(crate) mod definition;

pub use definition::{Tool, ToolAnnotations};

use crate::JsonObject;
use crate::content::ContentBlock;
use crate::jsonrpc::Method;
use crate::meta::{RequestMeta, ResultMeta};
use crate::mrtr::InputResponses;
use crate::mrtr::Outcome;
use crate::result::{CacheScope, ResultType};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The params of `tools/call` (first call or MRTR retry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// The tool.
    pub name: String,
    /// The arguments (absent for a tool without arguments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
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

/// The result of a tool call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: ResultType,
    /// Unstructured content.
    pub content: Vec<ContentBlock>,
    /// Structured content (matches `outputSchema` when the tool declares one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The tool failed; `content` says why (for the model to read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl CallToolResult {
    /// A successful result with content.
    pub fn success(content: Vec<ContentBlock>) -> Self {
        Self {
            content,
            ..Self::default()
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::success(vec![ContentBlock::text(text)])
    }

    /// A tool error (`isError: true`) with a message for the model.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::text(message)],
            is_error: Some(true),
            ..Self::default()
        }
    }

    /// The text of the text blocks, joined by newlines.
    pub fn text_content(&self) -> String {
        self.content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The params of a paginated list request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaginatedRequestParams {
    /// Where to continue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMeta,
}

/// The result of `tools/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: ResultType,
    /// The tools of this page.
    pub tools: Vec<Tool>,
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

/// `tools/call`.
#[derive(Debug)]
pub enum CallTool {}

impl Method for CallTool {
    const NAME: &'static str = "tools/call";
    type Params = CallToolRequestParams;
    type Result = Outcome<CallToolResult>;
}

/// `tools/list`.
#[derive(Debug)]
pub enum ListTools {}

impl Method for ListTools {
    const NAME: &'static str = "tools/list";
    type Params = PaginatedRequestParams;
    type Result = ListToolsResult;
}
