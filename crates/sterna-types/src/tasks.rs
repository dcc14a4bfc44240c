//! The `io.modelcontextprotocol/tasks` extension (SEP-2663) as 2026-07-28 defines it.
//!
//! A client declares the extension in the capabilities of **each request**
//! (`extensions["io.modelcontextprotocol/tasks"]: {}`). A server may then answer a
//! `tools/call` with a [`CreateTaskResult`] (`resultType: "task"`): a handle the client
//! polls with `tasks/get` ([`GetTaskResult`]), answers with `tasks/update` when the task
//! is `input_required`, and may cancel with `tasks/cancel`. No task message carries a
//! `requestState`: a task's continuation lives on the server, keyed by its id.

use crate::error::ErrorObject;
use crate::meta::ResultMeta;
use crate::mrtr::InputRequests;
use crate::result::ResultType;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// The extension's identifier, the key under `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Where a task is in its life. `completed`, `failed` and `cancelled` are terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for the answers in `inputRequests` (sent with `tasks/update`).
    InputRequired,
    /// Done; `result` holds what the synchronous call would have returned.
    Completed,
    /// Ended with a JSON-RPC error (`error`).
    Failed,
    /// Cancelled.
    Cancelled,
}

impl TaskStatus {
    /// `completed`, `failed` or `cancelled`: nothing changes any more.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task as every task message shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The handle (an opaque string).
    pub task_id: String,
    /// Where the task is.
    pub status: TaskStatus,
    /// A human-readable note on the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When the task was created (ISO 8601).
    pub created_at: String,
    /// When the status last changed (ISO 8601).
    pub last_updated_at: String,
    /// How long the task lives, in ms from `createdAt`; `null` for unlimited. Always sent.
    #[serde(default)]
    pub ttl_ms: Option<u64>,
    /// How often to poll `tasks/get`, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
}

/// A task with what its status adds: `inputRequests` (`input_required`), `result`
/// (`completed`) or `error` (`failed`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// Every outstanding question (`input_required` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// The tool's result (`completed` only; a tool error has `isError: true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The JSON-RPC error the task ended with (`failed` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

/// The answer to a `tools/call` that became a task: `resultType: "task"` and the task,
/// flat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaskResult {
    /// Always [`ResultType::Task`].
    pub result_type: ResultType,
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// The answer to `tasks/get`: `resultType: "complete"` and the detailed task, flat.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskResult {
    /// Always [`ResultType::Complete`].
    #[serde(default)]
    pub result_type: ResultType,
    /// The task and its status-specific members.
    #[serde(flatten)]
    pub task: DetailedTask,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// Every member of a detailed task, read without `flatten` (which cannot buffer the raw
/// values questions are decoded from).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Flat {
    #[serde(default)]
    result_type: ResultType,
    task_id: String,
    status: TaskStatus,
    #[serde(default)]
    status_message: Option<String>,
    created_at: String,
    last_updated_at: String,
    #[serde(default)]
    ttl_ms: Option<u64>,
    #[serde(default)]
    poll_interval_ms: Option<u64>,
    #[serde(default)]
    input_requests: Option<InputRequests>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<ErrorObject>,
    #[serde(rename = "_meta", default)]
    meta: Option<ResultMeta>,
}

impl Flat {
    fn split(self) -> (ResultType, DetailedTask, Option<ResultMeta>) {
        let task = Task {
            task_id: self.task_id,
            status: self.status,
            status_message: self.status_message,
            created_at: self.created_at,
            last_updated_at: self.last_updated_at,
            ttl_ms: self.ttl_ms,
            poll_interval_ms: self.poll_interval_ms,
        };
        let detailed = DetailedTask {
            task,
            input_requests: self.input_requests,
            result: self.result,
            error: self.error,
        };
        (self.result_type, detailed, self.meta)
    }
}

impl<'de> Deserialize<'de> for DetailedTask {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Flat::deserialize(d).map(|f| f.split().1)
    }
}

impl<'de> Deserialize<'de> for GetTaskResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (result_type, task, meta) = Flat::deserialize(d)?.split();
        Ok(Self {
            result_type,
            task,
            meta,
        })
    }
}

/// The params of `tasks/get` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::meta::RequestMeta>,
}

/// The params of `tasks/update`: answers to the task's outstanding questions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskParams {
    /// The task.
    pub task_id: String,
    /// Answers by question key (keys that are not outstanding are ignored).
    #[serde(default)]
    pub input_responses: Map<String, Value>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::meta::RequestMeta>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_result_is_flat_and_keeps_null_ttl() {
        let r = CreateTaskResult {
            result_type: ResultType::Task,
            task: Task {
                task_id: "t".into(),
                status: TaskStatus::Working,
                status_message: None,
                created_at: "2026-01-01T00:00:00Z".into(),
                last_updated_at: "2026-01-01T00:00:00Z".into(),
                ttl_ms: None,
                poll_interval_ms: Some(500),
            },
            meta: None,
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["resultType"], "task");
        assert_eq!(v["taskId"], "t");
        assert!(v["ttlMs"].is_null() && v.get("ttlMs").is_some());
        assert!(v.get("task").is_none() && v.get("requestState").is_none());
        let back: CreateTaskResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn get_result_with_questions_reads_back() {
        let text = r#"{"resultType":"complete","taskId":"t","status":"input_required",
            "createdAt":"a","lastUpdatedAt":"b","ttlMs":null,
            "inputRequests":{"k":{"method":"elicitation/create","params":{"mode":"form",
            "message":"m","requestedSchema":{"type":"object","properties":{}}}}}}"#;
        let r: GetTaskResult = serde_json::from_str(text).unwrap();
        assert_eq!(r.task.task.status, TaskStatus::InputRequired);
        assert!(r.task.input_requests.unwrap().contains_key("k"));
    }
}
