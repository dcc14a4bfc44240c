//! Prompts: `prompts/list` and `prompts/get`.

use crate::JsonObject;
use crate::content::{ContentBlock, Icon, Role};
use crate::jsonrpc::Method;
use crate::meta::{RequestMeta, ResultMeta};
use crate::mrtr::InputResponses;
use crate::mrtr::Outcome;
use crate::result::{CacheScope, ResultType};
use crate::tools::PaginatedRequestParams;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A prompt template the server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// Unique name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// An argument of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// Name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// The params of `prompts/get` (first call or MRTR retry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptRequestParams {
    /// The prompt.
    pub name: String,
    /// String arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
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

/// A message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// The content.
    pub content: ContentBlock,
}

impl PromptMessage {
    /// A user text message.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: ContentBlock::text(text),
        }
    }

    /// An assistant text message.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: ContentBlock::text(text),
        }
    }
}

/// The result of `prompts/get`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: ResultType,
    /// Description of the rendered prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

impl GetPromptResult {
    /// A result with these messages.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        Self {
            messages,
            ..Self::default()
        }
    }
}

/// The result of `prompts/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: ResultType,
    /// The prompts of this page.
    pub prompts: Vec<Prompt>,
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

/// `prompts/get`.
#[derive(Debug)]
pub enum GetPrompt {}

impl Method for GetPrompt {
    const NAME: &'static str = "prompts/get";
    type Params = GetPromptRequestParams;
    type Result = Outcome<GetPromptResult>;
}

/// `prompts/list`.
#[derive(Debug)]
pub enum ListPrompts {}

impl Method for ListPrompts {
    const NAME: &'static str = "prompts/list";
    type Params = PaginatedRequestParams;
    type Result = ListPromptsResult;
}
