//! Creating a task from a `tools/call`: the gate, the record, run 1, the handle.

use super::TaskSupport;
use super::record::{TaskRecord, now_ms};
use crate::server::QuotaKey;
use crate::server::context::RequestEnv;
use crate::server::core::{Server, ToolEntry};
use crate::state::FlowState;
use serde_json::value::{RawValue, to_raw_value};
use std::collections::{BTreeMap, BTreeSet};
use sterna_types::error::ErrorObject;
use sterna_types::meta::{RequestMeta, ResultMeta};
use sterna_types::result::ResultType;
use sterna_types::tasks::{CreateTaskResult, EXTENSION, TaskStatus};

/// How a `tools/call` is served, given the tool and what this request declared.
pub(crate) enum Mode {
    /// As usual (not a task tool, or an optional one without the extension).
    Call,
    /// A task, created at once.
    Task,
    /// MRTR for the declared questions, then a task.
    QuestionsThenTask,
}

/// `-32021` naming the extension.
fn undeclared(what: &str) -> ErrorObject {
    ErrorObject::missing_capability(
        format!("{what} needs the {EXTENSION} extension, which this request did not declare"),
        serde_json::json!({ "extensions": { EXTENSION: {} } }),
    )
}

/// The extension's gate of `tasks/*`: the request itself must declare it.
pub(crate) fn gate(meta: &RequestMeta) -> Result<(), ErrorObject> {
    if meta.client_capabilities.extension(EXTENSION) {
        Ok(())
    } else {
        Err(undeclared("This method"))
    }
}

/// Decides how a `tools/call` of `tool` is served (`-32021` for a task-only tool called
/// without the extension, before its handler runs).
pub(crate) fn mode(tool: &ToolEntry, meta: &RequestMeta) -> Result<Mode, ErrorObject> {
    let declared = meta.client_capabilities.extension(EXTENSION);
    match (tool.task, declared) {
        (TaskSupport::Required, false) => Err(undeclared(&format!("The tool {}", tool.name))),
        (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Ok(Mode::Call),
        (_, true) if tool.handler.declares_questions() => Ok(Mode::QuestionsThenTask),
        (_, true) => Ok(Mode::Task),
    }
}

impl Server {
    /// Stores a new task for `tool` (with the answers of its MRTR phase in `flow`),
    /// starts its first run, and renders the handle. The record is in the store before
    /// the handle is returned, so a `tasks/get` right after it succeeds.
    pub(crate) async fn create_task(
        &self,
        env: &RequestEnv,
        meta: &RequestMeta,
        tool: &str,
        args: Option<&RawValue>,
        flow: FlowState,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let Some(tasks) = &self.inner.tasks else {
            return Err(ErrorObject::internal("Internal error"));
        };
        let now = now_ms();
        let rec = TaskRecord {
            audience: self.inner.info.name.clone(),
            principal: env.principal.id().unwrap_or("").to_owned(),
            tool: tool.to_owned(),
            args: args.map(|a| a.get().to_owned()),
            meta: meta.clone(),
            status: TaskStatus::Working,
            message: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms: tasks.ttl.as_millis() as u64,
            poll_ms: tasks.poll.as_millis() as u64,
            flow,
            outstanding: BTreeMap::new(),
            fresh: serde_json::Map::new(),
            issued: BTreeSet::new(),
            result: None,
            error: None,
            run: 1,
        };
        let id = tasks.insert(&rec, &QuotaKey::of(&env.principal)).await?;
        tracing::debug!(task = super::short(&id), tool, "task created");
        self.start_run(id.clone(), 1, env.principal.clone());
        let result = CreateTaskResult {
            result_type: ResultType::Task,
            task: rec.task(&id),
            meta: Some(ResultMeta {
                server_info: Some(self.inner.info.clone()),
                ..ResultMeta::default()
            }),
        };
        Ok(to_raw_value(&result).expect("results serialize"))
    }
}
