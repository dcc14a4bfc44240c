//! Running a task: one run of the tool's handler, with the answers so far, ending
//! `completed`, `failed` or parked `input_required`. A run is started by the request
//! that made it possible (the creating `tools/call`, the `tasks/update` that answered
//! the last question) on the replica that received it.

use super::record::{Ending, TaskRecord, now_ms};
use super::{Tasks, short};
use crate::mrtr::Resolver;
use crate::server::context::{Context, Inner as CtxInner, RequestEnv};
use crate::server::core::Server;
use crate::server::finalize::Finalize;
use crate::server::guard::{guarded, started};
use crate::server::handler::Produced;
use crate::server::outcome::Payload;
use crate::server::principal::Principal;
use serde_json::value::RawValue;
use std::sync::Arc;
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::RequestId;
use sterna_types::mrtr::InputRequiredResult;
use sterna_types::tools::CallToolResult;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Starts run `run` of task `id` in the background.
pub(crate) fn start_run(server: &Server, id: String, run: u64, principal: Principal) {
    let server = server.clone();
    tokio::spawn(async move {
        Runner { server: &server }
            .run_task(id, run, principal)
            .await
    });
}

/// Sets the gauge of task runs in this process.
fn running_gauge(n: usize) {
    metrics::gauge!(crate::metrics::TASKS_RUNNING).set(n as f64);
}

/// Runs of tasks, for one server.
struct Runner<'s> {
    server: &'s Server,
}

impl Runner<'_> {
    async fn run_task(self, id: String, run: u64, principal: Principal) {
        let Some(tasks) = self.server.wings().get::<Tasks>() else {
            return;
        };
        // Registered before the record is read, so a cancel never falls in between.
        let token = CancellationToken::new();
        {
            let mut running = tasks.running();
            running.insert(id.clone(), (run, token.clone()));
            running_gauge(running.len());
        }
        // The run begins only if the record waits for it (its lease then held here).
        let ending = match tasks.begin(&id, run).await {
            Some(held) => {
                let rec = held.0.clone();
                self.run_handler(tasks, &id, held, principal, &token)
                    .await
                    .map(|e| (rec, e))
            }
            None => None,
        };
        {
            let mut running = tasks.running();
            if running.get(&id).is_some_and(|(r, _)| *r == run) {
                running.remove(&id);
            }
            running_gauge(running.len());
        }
        let Some((rec, ending)) = ending else { return };
        let now = now_ms();
        let settled = tasks
            .modify(&id, &rec.audience, &rec.principal, |r| {
                r.settle(run, ending.clone(), now).then_some(())
            })
            .await;
        match settled {
            Ok((r, Some(()))) => {
                tracing::debug!(task = short(&id), status = %r.status, "task run ended")
            }
            Ok((_, None)) => {
                tracing::debug!(task = short(&id), "a stale run ended (cancelled meanwhile)")
            }
            Err(e) => {
                tracing::warn!(task = short(&id), error = %e.message, "a task run's outcome was not stored")
            }
        }
    }

    /// Runs the handler once (`rec` at store version `version`, its lease taken at
    /// `since`), holding the lease meanwhile. `None` when the run was stopped (cancelled
    /// here or on another replica, taken over, or its lease lost).
    async fn run_handler(
        &self,
        tasks: &Tasks,
        id: &str,
        (rec, version, since): (TaskRecord, u64, Instant),
        principal: Principal,
        token: &CancellationToken,
    ) -> Option<Ending> {
        let Some(tool) = self.server.tool(&rec.tool) else {
            return Some(Ending::Failed(ErrorObject::internal(
                "The tool is not served any more",
            )));
        };
        let meta = Arc::new(rec.meta.clone());
        let env = Arc::new(RequestEnv::cancelled_by(token.clone()).principal(principal));
        let rid = RequestId::String(format!("task-{}-{}", short(id), rec.run));
        let mut inner = CtxInner::request(
            self.server.changes(),
            rid,
            "tools/call",
            tool.name.clone(),
            meta.clone(),
            &env,
        );
        inner.round = u32::try_from(rec.run).unwrap_or(u32::MAX);
        inner.prev_app = rec.flow.app.clone();
        let fresh = rec
            .fresh
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), serde_json::value::to_raw_value(v).ok()?)))
            .collect();
        let resolver = Resolver::new(meta, fresh, Some(&rec.flow), false);
        *inner.resolver.get_mut().unwrap_or_else(|p| p.into_inner()) = Some(resolver);
        let ctx = Context::from_inner(inner);
        let args = match rec
            .args
            .as_deref()
            .map(|a| RawValue::from_string(a.to_owned()))
            .transpose()
        {
            Ok(a) => a,
            Err(_) => return Some(Ending::Failed(ErrorObject::internal("Internal error"))),
        };
        let handler = tool.handler.clone();
        let start = || {
            handler
                .call(ctx.clone(), args.as_deref())
                .map_err(|e| ErrorObject::invalid_params(format!("Invalid arguments: {e}")))
        };
        let fut = match started(start) {
            Ok(f) => f,
            Err(e) => return Some(Ending::Failed(e)),
        };
        let (run, flow_id) = (rec.run, rec.flow.flow_id);
        let produced = tokio::select! {
            r = guarded(fut, token) => r?,
            () = tasks.hold(id, run, rec, version, since) => {
                token.cancel();
                return None;
            }
        };
        match produced {
            Ok(p) => Some(self.ending(&ctx, p, flow_id)),
            Err(()) => Some(Ending::Failed(ErrorObject::internal("Internal error"))),
        }
    }

    fn ending(
        &self,
        ctx: &Context,
        produced: Produced<CallToolResult>,
        flow_id: [u8; 16],
    ) -> Ending {
        let complete = |t: CallToolResult| {
            let mut payload = Payload::Tool(t);
            payload.stamp_modern(self.server.shared_info(), None);
            let Payload::Tool(t) = payload else {
                unreachable!("stamping keeps the kind")
            };
            Ending::Completed(serde_json::to_value(&t).expect("results serialize"))
        };
        match produced {
            Produced::Complete(t) => complete(t),
            Produced::Failed(e) if e.is_needs_input() => park(ctx, None, flow_id),
            Produced::Failed(e) => match CallToolResult::from_failure(e) {
                Ok(t) => complete(t),
                Err(e) => Ending::Failed(e),
            },
            Produced::InputRequired(raw) => park(ctx, Some(raw), flow_id),
        }
    }
}

/// The run asked: its questions (gated on the creator's capabilities) and the flow (whose
/// id stays the task's first one).
fn park(ctx: &Context, raw: Option<InputRequiredResult>, flow_id: [u8; 16]) -> Ending {
    match crate::server::round::questions(ctx, raw, flow_id) {
        Err(e) => Ending::Failed(e),
        Ok((requests, _)) if requests.is_empty() => {
            tracing::error!("a task's handler returned NeedsInput without asking anything");
            Ending::Failed(ErrorObject::internal("Internal error"))
        }
        Ok((requests, flow)) => Ending::Parked {
            // A task keeps its questions for `tasks/get`: each its own value.
            requests: requests.into_iter().map(|(k, q)| (k, q.build())).collect(),
            flow,
        },
    }
}
