//! Following a task (the `io.modelcontextprotocol/tasks` extension) to its end: poll
//! `tasks/get` with backoff, answer `input_required` through `tasks/update`, cancel
//! when dropped. The round driver (`rounds.rs`) does it for every call whose server chose
//! a task; the task's handle is [`RunningTask`] (`call.rs`).

use super::call::{CallResult, RunningTask};
use super::driver::request;
use super::error::{ClientError, GaveUp, ProtocolViolation};
use super::shared::Shared;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use sterna_types::mrtr::{InputRequests, InputResponses};
use sterna_types::tasks::{DetailedTask, GetTaskResult, TaskStatus};

/// The slowest poll, whatever the server suggests.
const MAX_POLL: Duration = Duration::from_secs(5);

/// Cancels the task when dropped before it ended (the call was dropped or ran out of
/// time).
struct CancelOnDrop<'c> {
    shared: &'c Arc<Shared>,
    id: Option<String>,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let (Some(id), Ok(rt)) = (self.id.take(), tokio::runtime::Handle::try_current()) else {
            return;
        };
        let shared = self.shared.clone();
        rt.spawn(async move {
            if let Err(e) = cancel(&shared, &id).await {
                tracing::debug!(error = %e, "cancelling an abandoned task failed");
            }
        });
    }
}

fn malformed(method: &str, what: &str) -> ClientError {
    ProtocolViolation::Malformed {
        method: method.to_owned(),
        source: serde::de::Error::custom(what),
    }
    .into()
}

fn id_params(id: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("taskId".into(), Value::String(id.to_owned()));
    m
}

/// The task's current state (`tasks/get`).
pub(crate) async fn get(shared: &Shared, id: &str) -> Result<DetailedTask, ClientError> {
    let v = request(shared, "tasks/get", &id_params(id), Some(id)).await?;
    let r: GetTaskResult = serde_json::from_str(v.get()).map_err(|source| {
        ClientError::from(ProtocolViolation::Malformed {
            method: "tasks/get".into(),
            source,
        })
    })?;
    if r.task.task.task_id != id {
        return Err(malformed("tasks/get", "the task has another taskId"));
    }
    Ok(r.task)
}

/// Answers a task's questions (`tasks/update`).
pub(crate) async fn update(
    shared: &Shared,
    id: &str,
    answers: InputResponses,
) -> Result<(), ClientError> {
    let mut params = id_params(id);
    params.insert(
        "inputResponses".into(),
        serde_json::to_value(answers).expect("answers serialize"),
    );
    request(shared, "tasks/update", &params, Some(id))
        .await
        .map(drop)
}

/// Asks the server to cancel a task (`tasks/cancel`).
pub(crate) async fn cancel(shared: &Shared, id: &str) -> Result<(), ClientError> {
    request(shared, "tasks/cancel", &id_params(id), Some(id))
        .await
        .map(drop)
}

/// A terminal task as the call's result, or the error it ended with.
fn ended<T: CallResult>(t: DetailedTask) -> Result<T, ClientError> {
    match t.task.status {
        TaskStatus::Completed => {
            let result = t
                .result
                .ok_or_else(|| malformed("tasks/get", "a completed task without result"))?;
            serde_json::from_value(result).map_err(|source| {
                ProtocolViolation::Malformed {
                    method: T::METHOD.into(),
                    source,
                }
                .into()
            })
        }
        TaskStatus::Failed => {
            Err(ClientError::Server(t.error.ok_or_else(|| {
                malformed("tasks/get", "a failed task without error")
            })?))
        }
        _ => Err(ClientError::GaveUp(GaveUp::TaskCancelled)),
    }
}

/// Hands a status change to the event callback, shaped as `notifications/tasks`.
fn announce(shared: &Shared, t: &DetailedTask) {
    let msg = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/tasks", "params": t});
    shared.events.deliver(msg.to_string().as_bytes());
}

/// Follows a task to its end, answering its questions with `answer` (see
/// [`Client::follow_with`](crate::Client::follow_with)).
pub(crate) async fn follow_with<T, F, Fut, E>(
    shared: &Arc<Shared>,
    task: RunningTask<T>,
    mut answer: F,
) -> Result<T, E>
where
    T: CallResult,
    F: FnMut(InputRequests) -> Fut,
    Fut: std::future::Future<Output = Result<InputResponses, E>>,
    E: From<ClientError>,
{
    let mut guard = CancelOnDrop {
        shared,
        id: Some(task.task_id.clone()),
    };
    let (mut delay, mut answered, mut last) = (task.poll(), HashSet::new(), None);
    loop {
        let t = get(shared, &task.task_id).await?;
        let seen = (
            t.task.status,
            t.task.status_message.clone(),
            t.input_requests.clone(),
        );
        if last.as_ref() != Some(&seen) {
            announce(shared, &t);
            last = Some(seen);
        }
        if t.task.status.is_terminal() {
            guard.id = None;
            return ended(t).map_err(E::from);
        }
        let mut open = t.input_requests.unwrap_or_default();
        open.retain(|k, _| !answered.contains(k));
        if let Err(v) = shared.limits.questions(open.len()) {
            return Err(E::from(ClientError::from(v)));
        }
        if open.is_empty() {
            tokio::time::sleep(delay).await;
            delay = (delay * 3 / 2).min(MAX_POLL.max(task.poll()));
            continue;
        }
        let answers = answer(open).await?;
        answered.extend(answers.keys().cloned());
        update(shared, &task.task_id, answers).await?;
        delay = task.poll();
    }
}
