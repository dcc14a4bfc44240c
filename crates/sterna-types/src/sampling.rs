//! Sampling: asking the client's LLM for a completion (a deprecated feature that still
//! travels through MRTR).

use crate::JsonObject;
use crate::content::{ContentBlock, MediaContent, Role, TextContent};
use crate::tools::definition::Tool;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The params of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Maximum tokens to generate.
    pub max_tokens: u64,
    /// Model selection preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// System prompt (the client may ignore it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// `none`, or the deprecated `thisServer` / `allServers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may call (needs the client's `sampling.tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model must use the tools (needs the client's `sampling.tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
}

impl CreateMessageRequestParams {
    /// A request with one user text message.
    pub fn user_text(text: impl Into<String>, max_tokens: u64) -> Self {
        Self {
            messages: vec![SamplingMessage {
                role: Role::User,
                content: SamplingContent::One(SamplingContentBlock::Text(TextContent {
                    text: text.into(),
                    annotations: None,
                    meta: None,
                })),
                meta: None,
            }],
            max_tokens,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
        }
    }

    /// Uses tools (`tools` or `toolChoice` set).
    pub fn uses_tools(&self) -> bool {
        self.tools.is_some() || self.tool_choice.is_some()
    }
}

/// `includeContext` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// No context.
    None,
    /// This server's context (deprecated).
    ThisServer,
    /// All servers' context (deprecated).
    AllServers,
}

/// Tool choice for sampling with tools.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolChoice {
    /// `auto`, `required` or `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

/// Model preferences.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Name hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// 0..1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// 0..1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// 0..1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// A model name hint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelHint {
    /// A (sub)string of a model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A message of a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// One block or several.
    pub content: SamplingContent,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// One content block or a list of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SamplingContent {
    /// A single block.
    One(SamplingContentBlock),
    /// Several blocks.
    Many(Vec<SamplingContentBlock>),
}

impl SamplingContent {
    /// The blocks, as a slice.
    pub fn blocks(&self) -> &[SamplingContentBlock] {
        match self {
            Self::One(b) => std::slice::from_ref(b),
            Self::Many(v) => v,
        }
    }

    /// The concatenated text of the text blocks.
    pub fn text(&self) -> String {
        self.blocks()
            .iter()
            .filter_map(|b| match b {
                SamplingContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// A content block of a sampling message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SamplingContentBlock {
    /// Text.
    Text(TextContent),
    /// An image.
    Image(MediaContent),
    /// Audio.
    Audio(MediaContent),
    /// The model calls a tool.
    ToolUse(ToolUseContent),
    /// The result of a tool call.
    ToolResult(ToolResultContent),
}

/// A tool call made by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUseContent {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments.
    pub input: JsonObject,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The result of a tool call, fed back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The call id answered.
    pub tool_use_id: String,
    /// Content.
    pub content: Vec<ContentBlock>,
    /// Structured content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The answer to `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Always `assistant` in practice.
    pub role: Role,
    /// The generated content.
    pub content: SamplingContent,
    /// The model that answered.
    pub model: String,
    /// Why generation stopped (`endTurn`, `stopSequence`, `maxTokens`, `toolUse`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl CreateMessageResult {
    /// An assistant text answer.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: SamplingContent::One(SamplingContentBlock::Text(TextContent {
                text: text.into(),
                annotations: None,
                meta: None,
            })),
            model: model.into(),
            stop_reason: Some("endTurn".into()),
            meta: None,
        }
    }
}
