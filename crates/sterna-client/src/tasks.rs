//! Following a task (the `io.modelcontextprotocol/tasks` extension) to its end: poll
//! `tasks/get` with backoff, answer `input_required` through `tasks/update`, cancel
//! when dropped. [`Client::run`] does it for every call whose server chose a task.

use super::client::Client;
use super::error::{ClientError, GaveUp, ProtocolViolation};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::marker::PhantomData;
use std::time::Duration;
use sterna_types::mrtr::{InputRequests, InputResponses};
use sterna_types::tasks::{CreateTaskResult, DetailedTask, TaskStatus};

/// The slowest poll, whatever the server suggests.
pub(crate) const MAX_POLL: Duration = Duration::from_secs(5);

/// A call the server turned into a task: its handle. Serializable (the id is the whole
/// continuation): keep it and [`follow`](Client::follow) it later, from any process.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunningTask<T> {
    pub(crate) task_id: String,
    pub(crate) status: TaskStatus,
    pub(crate) poll_ms: u64,
    #[serde(skip)]
    pub(crate) _t: PhantomData<fn() -> T>,
}

impl<T> RunningTask<T> {
    pub(crate) fn new(created: CreateTaskResult) -> Self {
        Self {
            task_id: created.task.task_id,
            status: created.task.status,
            poll_ms: created.task.poll_interval_ms.unwrap_or(500),
            _t: PhantomData,
        }
    }

    /// The task's id (a bearer handle: keep it out of logs).
    pub fn id(&self) -> &str {
        &self.task_id
    }

    /// The status the task was created with.
    pub fn status(&self) -> TaskStatus {
        self.status
    }

    fn poll(&self) -> Duration {
        Duration::from_millis(self.poll_ms.clamp(10, 5000))
    }
}

/// Cancels the task when dropped before it ended (the call was dropped or ran out of
/// time).
pub(crate) struct CancelOnDrop<'c> {
    client: &'c Client,
    id: Option<String>,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let (Some(id), Ok(rt)) = (self.id.take(), tokio::runtime::Handle::try_current()) else {
            return;
        };
        let client = self.client.clone();
        rt.spawn(async move {
            if let Err(e) = client.cancel_task_id(&id).await {
                tracing::debug!(error = %e, "cancelling an abandoned task failed");
            }
        });
    }
}

pub(crate) fn malformed(method: &str, what: &str) -> ClientError {
    ProtocolViolation::Malformed {
        method: method.to_owned(),
        source: serde::de::Error::custom(what),
    }
    .into()
}

impl Client {
    pub(crate) async fn cancel_task_id(&self, id: &str) -> Result<(), ClientError> {
        self.request("tasks/cancel", &id_params(id), Some(id))
            .await
            .map(drop)
    }

    /// A terminal task as the call's result, or the error it ended with.
    pub(crate) fn ended<T: super::call::CallResult>(t: DetailedTask) -> Result<T, ClientError> {
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
    pub(crate) fn announce(&self, t: &DetailedTask) {
        let msg =
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/tasks", "params": t});
        self.inner.events.deliver(msg.to_string().as_bytes());
    }
}

pub(crate) fn id_params(id: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("taskId".into(), Value::String(id.to_owned()));
    m
}

/// Follows a task to its end, answering its questions with `answer` (see
/// [`Client::follow_with`]).
pub(crate) async fn follow_with<T, F, Fut, E>(
    client: &Client,
    task: RunningTask<T>,
    mut answer: F,
) -> Result<T, E>
where
    T: crate::call::CallResult,
    F: FnMut(InputRequests) -> Fut,
    Fut: std::future::Future<Output = Result<InputResponses, E>>,
    E: From<ClientError>,
{
    let mut guard = CancelOnDrop {
        client,
        id: Some(task.task_id.clone()),
    };
    let (mut delay, mut answered, mut last) = (task.poll(), HashSet::new(), None);
    loop {
        let t = client.task(&task.task_id).await?;
        let seen = (
            t.task.status,
            t.task.status_message.clone(),
            t.input_requests.clone(),
        );
        if last.as_ref() != Some(&seen) {
            client.announce(&t);
            last = Some(seen);
        }
        if t.task.status.is_terminal() {
            guard.id = None;
            return Client::ended(t).map_err(E::from);
        }
        let mut open = t.input_requests.unwrap_or_default();
        open.retain(|k, _| !answered.contains(k));
        if open.is_empty() {
            tokio::time::sleep(delay).await;
            delay = (delay * 3 / 2).min(MAX_POLL.max(task.poll()));
            continue;
        }
        let answers = answer(open).await?;
        answered.extend(answers.keys().cloned());
        client.update_task(&task.task_id, answers).await?;
        delay = task.poll();
    }
}
