//! Creating a task from a `tools/call`: the plan, the record, run 1, the handle.

use super::declared::undeclared;
use super::record::Lease;
use super::record::{TaskRecord, now_ms};
use super::{TaskSupport, Tasks};
use crate::server::QuotaKey;
use crate::server::core::Server;
use crate::server::outcome::{Completed, ExtReply, Outcome, Payload};
use crate::server::routes::ToolEntry;
use crate::server::wing::{TakeCall, ToolPlan};
use std::collections::{BTreeMap, BTreeSet};
use sterna_types::error::ErrorObject;
use sterna_types::meta::RequestMeta;
use sterna_types::result::ResultType;
use sterna_types::tasks::{EXTENSION, TaskStatus};

/// How a `tools/call` of `tool` is served, given what this request declared (`-32021`
/// for a task-only tool called without the extension, before its handler runs). A
/// 2025-11-25 session never gets a task: the extension is a 2026-07-28 one.
pub(crate) fn plan(tool: &ToolEntry, meta: &RequestMeta) -> Result<ToolPlan, ErrorObject> {
    let support = tool
        .settings
        .get::<TaskSupport>()
        .copied()
        .unwrap_or_default();
    let modern = sterna_types::version::is_modern(&meta.protocol_version);
    let declared = modern && meta.client_capabilities.extension(EXTENSION);
    match (support, declared) {
        (TaskSupport::Required, false) => Err(undeclared(&format!("The tool {}", tool.name))),
        (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Ok(ToolPlan::Run),
        (_, true) if tool.declared => Ok(ToolPlan::AskThenTake),
        (_, true) => Ok(ToolPlan::Take),
    }
}

impl Tasks {
    /// Stores a new task for the tool of `take` (with the answers of its MRTR phase),
    /// starts its first run, and answers the handle. The record is in the store before
    /// the handle is returned, so a `tasks/get` right after it succeeds.
    pub(crate) async fn create(&self, server: &Server, take: TakeCall<'_>) -> Outcome {
        let now = now_ms();
        let principal = &take.env.principal;
        let rec = TaskRecord {
            audience: self.audience.clone(),
            principal: principal.id().unwrap_or("").to_owned(),
            tool: take.tool.name.to_string(),
            args: take.args.map(|a| a.get().to_owned()),
            meta: take.meta.clone(),
            status: TaskStatus::Working,
            message: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms: self.ttl.as_millis() as u64,
            poll_ms: self.poll.as_millis() as u64,
            flow: take.answers,
            outstanding: BTreeMap::new(),
            fresh: serde_json::Map::new(),
            issued: BTreeSet::new(),
            result: None,
            error: None,
            run: 1,
            lease: Some(Lease::Pending { since_ms: now }),
        };
        let id = match self.insert(&rec, &QuotaKey::of(principal)).await {
            Ok(id) => id,
            Err(e) => return Outcome::Failed(e.into()),
        };
        tracing::debug!(task = super::short(&id), tool = %take.tool.name, "task created");
        super::runner::start_run(server, id.clone(), 1, principal.clone());
        // The task's members sit flat in the result.
        let serde_json::Value::Object(members) =
            serde_json::to_value(rec.task(&id)).expect("tasks serialize")
        else {
            unreachable!("a task serializes as an object")
        };
        let reply = ExtReply {
            result_type: ResultType::Task,
            members,
        };
        Outcome::Complete(Completed::new(Payload::Ext(reply)))
    }
}
