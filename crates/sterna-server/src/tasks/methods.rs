//! `tasks/get`, `tasks/update`, `tasks/cancel`, decoded once by the wing: the
//! extension's gate first, then the params; the decoded `taskId` is both what `Mcp-Name`
//! must equal and what is looked up (every id that cannot be served gets the same
//! `-32602`).

use super::Tasks;
use super::ops::not_found;
use super::record::now_ms;
use crate::server::context::RequestEnv;
use crate::server::core::Server;
use crate::server::flow::Answers;
use crate::server::outcome::{Completed, ExtReply, Outcome, Payload};
use crate::server::request::RawField;
use crate::server::wing::{WingCall, WingRequest};
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::RequestMeta;

/// The params of `tasks/get`, `tasks/update` and `tasks/cancel` (`taskId` is checked
/// once the extension's gate has passed, so a malformed one still gets `-32021` first).
#[derive(Deserialize)]
struct TaskParams<'a> {
    #[serde(rename = "taskId", default, borrow)]
    task_id: Option<&'a RawValue>,
    #[serde(default, borrow, rename = "inputResponses")]
    input_responses: RawField<'a>,
}

/// Which method.
#[derive(Debug, Clone, Copy)]
enum Method {
    Get,
    Update,
    Cancel,
}

/// A decoded `tasks/*` request.
struct TaskCall {
    method: Method,
    task: Option<String>,
    answers: Result<Map<String, Value>, ErrorObject>,
}

/// Decodes a `tasks/*` request (after `_meta`).
pub(super) fn decode<'a>(
    method: &'a str,
    meta: &RequestMeta,
    params: Option<&'a RawValue>,
) -> WingRequest<'a, Server> {
    let p = params.and_then(|raw| serde_json::from_str::<TaskParams<'a>>(raw.get()).ok());
    let task: Option<Cow<'a, str>> = p
        .as_ref()
        .and_then(|p| p.task_id)
        .and_then(|raw| serde_json::from_str::<Cow<'a, str>>(raw.get()).ok());
    // The extension's gate comes before the params and any id lookup.
    if let Err(e) = super::gate(meta) {
        return WingRequest::named(task, Err(e));
    }
    let Some(p) = p else {
        return WingRequest::named(task, Err(ErrorObject::invalid_params("Invalid params")));
    };
    if task.is_none() {
        let why = match p.task_id {
            None => "Invalid params: taskId is required",
            Some(_) => "Invalid params: taskId must be a string",
        };
        return WingRequest::named(None, Err(ErrorObject::invalid_params(why)));
    }
    let method = match method {
        "tasks/get" => Method::Get,
        "tasks/update" => Method::Update,
        _ => Method::Cancel,
    };
    let call = TaskCall {
        method,
        task: task.as_deref().map(str::to_owned),
        answers: crate::server::flow::input_responses(&p.input_responses).and_then(values),
    };
    WingRequest::named(task, Ok(Box::new(call)))
}

/// `tasks/update`'s answers as a task record keeps them: JSON values, each read now (one that
/// cannot be read refuses the update, as any malformed `inputResponses` does).
fn values(answers: Answers) -> Result<Map<String, Value>, ErrorObject> {
    answers
        .into_iter()
        .map(|(key, raw)| match serde_json::from_str(raw.get()) {
            Ok(v) => Ok((key, v)),
            Err(e) => Err(ErrorObject::invalid_params(format!(
                "Invalid inputResponses[{key:?}]: {e}"
            ))),
        })
        .collect()
}

impl WingCall<Server> for TaskCall {
    fn run<'s>(
        self: Box<Self>,
        server: &'s Server,
        _id: RequestId,
        env: RequestEnv,
    ) -> BoxFuture<'s, Option<Outcome>> {
        Box::pin(async move {
            let Some(tasks) = server.wings().get::<Tasks>() else {
                return Some(Outcome::Failed(not_found().into()));
            };
            let reply = match self.task.as_deref() {
                None => Err(ErrorObject::invalid_params("taskId must be a string")),
                Some(task) => match self.method {
                    Method::Get => tasks.get(server, task, &env).await,
                    Method::Update => tasks.update(server, task, self.answers, &env).await,
                    Method::Cancel => tasks.cancel(task, &env).await,
                },
            };
            Some(match reply {
                Ok(reply) => Outcome::Complete(Completed::new(Payload::Ext(reply))),
                Err(e) => Outcome::Failed(e.into()),
            })
        })
    }
}

fn principal_of(env: &RequestEnv) -> &str {
    env.principal.id().unwrap_or("")
}

impl Tasks {
    /// `tasks/get`; a `working` task whose lease lapsed is taken over first (its next
    /// run starts here, or it fails: see `lease.rs`).
    async fn get(
        &self,
        server: &Server,
        task: &str,
        env: &RequestEnv,
    ) -> Result<ExtReply, ErrorObject> {
        let (rec, _) = self.find(task, &self.audience, principal_of(env)).await?;
        let rec = if rec.lapsed(now_ms(), self.lease_ms()).is_some() {
            self.take_over_lapsed(server, task, rec, &env.principal)
                .await?
        } else {
            rec
        };
        let Value::Object(members) =
            serde_json::to_value(rec.detailed(task)).expect("tasks serialize")
        else {
            unreachable!("a task serializes as an object")
        };
        Ok(ExtReply::complete(members))
    }

    async fn update(
        &self,
        server: &Server,
        task: &str,
        answers: Result<Map<String, Value>, ErrorObject>,
        env: &RequestEnv,
    ) -> Result<ExtReply, ErrorObject> {
        let responses = answers?;
        let now = now_ms();
        let (rec, ready) = self
            .modify(task, &self.audience, principal_of(env), |r| {
                r.answer(&responses, now)
            })
            .await?;
        if ready == Some(true) {
            super::runner::start_run(server, task.to_owned(), rec.run, env.principal.clone());
        }
        Ok(ExtReply::complete(Map::new()))
    }

    async fn cancel(&self, task: &str, env: &RequestEnv) -> Result<ExtReply, ErrorObject> {
        let now = now_ms();
        let (_, cancelled) = self
            .modify(task, &self.audience, principal_of(env), |r| {
                r.cancel(now).then_some(())
            })
            .await?;
        if cancelled.is_some() {
            tracing::debug!(task = super::short(task), "task cancelled");
            if let Some((_, token)) = self.running().get(task) {
                token.cancel();
            }
        }
        Ok(ExtReply::complete(Map::new()))
    }
}
