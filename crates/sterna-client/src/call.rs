//! Calls that may take several rounds, and their steps: the next round's [`Pending`]
//! call, or the handle of a task ([`RunningTask`]).

use super::legacy::Held;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::marker::PhantomData;
use std::time::Duration;
use sterna_types::mrtr::InputRequests;
use sterna_types::prompts::GetPromptResult;
use sterna_types::resources::ReadResourceResult;
use sterna_types::tasks::{CreateTaskResult, TaskStatus};
use sterna_types::tools::CallToolResult;

mod sealed {
    pub trait Sealed {}
    impl Sealed for sterna_types::tools::CallToolResult {}
    impl Sealed for sterna_types::prompts::GetPromptResult {}
    impl Sealed for sterna_types::resources::ReadResourceResult {}
}

/// The result of one of the three methods that may ask for input: [`CallToolResult`],
/// [`GetPromptResult`], [`ReadResourceResult`].
pub trait CallResult: sealed::Sealed + DeserializeOwned + Send + 'static {
    /// The method.
    const METHOD: &'static str;
}

impl CallResult for CallToolResult {
    const METHOD: &'static str = "tools/call";
}

impl CallResult for GetPromptResult {
    const METHOD: &'static str = "prompts/get";
}

impl CallResult for ReadResourceResult {
    const METHOD: &'static str = "resources/read";
}

/// A `tools/call`, `prompts/get` or `resources/read` to run (its first round).
#[derive(Debug, Clone)]
pub struct Call<T> {
    pub(crate) params: Map<String, Value>,
    pub(crate) name: String,
    _t: PhantomData<fn() -> T>,
}

impl Call<CallToolResult> {
    /// Calls tool `name` with `arguments` (anything that serializes to a JSON object; `()`
    /// or `serde_json::Value::Null` for none).
    pub fn tool(name: impl Into<String>, arguments: impl Serialize) -> Self {
        let name = name.into();
        let mut params = Map::new();
        params.insert("name".into(), Value::String(name.clone()));
        match serde_json::to_value(arguments) {
            Ok(Value::Null) => {}
            Ok(v) => {
                params.insert("arguments".into(), v);
            }
            Err(e) => tracing::error!(error = %e, "tool arguments do not serialize"),
        }
        Self {
            params,
            name,
            _t: PhantomData,
        }
    }
}

impl Call<GetPromptResult> {
    /// Gets prompt `name` with string `arguments` (`()` for none).
    pub fn prompt(name: impl Into<String>, arguments: impl Serialize) -> Self {
        let Call { params, name, .. } = Call::<CallToolResult>::tool(name, arguments);
        Self {
            params,
            name,
            _t: PhantomData,
        }
    }
}

impl Call<ReadResourceResult> {
    /// Reads the resource at `uri`.
    pub fn resource(uri: impl Into<String>) -> Self {
        let uri = uri.into();
        let mut params = Map::new();
        params.insert("uri".into(), Value::String(uri.clone()));
        Self {
            params,
            name: uri,
            _t: PhantomData,
        }
    }
}

impl<T> Call<T> {
    /// Adds an entry to this call's `_meta`, sent on every round: `progressToken` (the
    /// server then reports progress as notifications), `io.modelcontextprotocol/logLevel`
    /// (log messages), trace context. The protocol version, capabilities and client info
    /// are the client's own and are not overridden.
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        let meta = self
            .params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = meta {
            m.insert(key.into(), value.into());
        }
        self
    }
}

/// Where a call stands after a round.
#[derive(Debug)]
pub enum Step<T> {
    /// Done.
    Complete(T),
    /// The server asked questions: answer them and [`resume`](crate::Client::resume).
    InputRequired(Pending<T>),
    /// The server made the call a task (only when the client declared the tasks
    /// extension): [`follow`](crate::Client::follow) it to its end.
    Task(RunningTask<T>),
}

/// A call waiting for answers. Serializable: keep it, show its questions in your own UI,
/// and resume it later — in this process or another, against any replica of the server.
///
/// [`resume`](crate::Client::resume) consumes it, so a `requestState` can never
/// be sent twice by accident.
///
/// **On a 2025-11-25 server** the questions are requests the server pushed while it holds
/// the call open, and the answers go back as their responses. Such a pending call lives
/// in this process only ([`is_portable`](Self::is_portable) is false): serializing it is
/// an error, and it cannot be resumed elsewhere, or after the server stopped waiting.
/// Dropping it answers its questions with `cancel` (elicitation) or a refusal and cancels
/// the call.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending<T> {
    pub(crate) method: String,
    pub(crate) name: String,
    pub(crate) params: Map<String, Value>,
    pub(crate) input_requests: InputRequests,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) request_state: Option<String>,
    pub(crate) round: u32,
    /// The 2025-11-25 call behind the questions (never serialized).
    #[serde(
        default,
        skip_deserializing,
        skip_serializing_if = "Option::is_none",
        serialize_with = "refuse_held"
    )]
    pub(crate) held: Option<Box<Held>>,
    #[serde(skip)]
    pub(crate) _t: PhantomData<fn() -> T>,
}

fn refuse_held<S: serde::Serializer>(_: &Option<Box<Held>>, _: S) -> Result<S::Ok, S::Error> {
    Err(serde::ser::Error::custom(
        "a pending call on a 2025-11-25 server lives in this process only (the server holds the request open) and cannot be serialized",
    ))
}

impl<T> Pending<T> {
    /// The questions of this round (empty when the server only handed back state).
    pub fn requests(&self) -> &InputRequests {
        &self.input_requests
    }

    /// How many rounds were made so far.
    pub fn round(&self) -> u32 {
        self.round
    }

    /// Whether the server sent a `requestState` (echoed on the retry, never shown).
    pub fn has_state(&self) -> bool {
        self.request_state.is_some()
    }

    /// The method of the call.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The tool or prompt name, or the resource URI.
    pub fn target(&self) -> &str {
        &self.name
    }

    /// Whether this pending call may be serialized and resumed in another process or
    /// against another replica: true for 2026-07-28 servers, false for 2025-11-25 ones
    /// (their questions are requests held open by the server).
    pub fn is_portable(&self) -> bool {
        self.held.is_none()
    }
}

/// A call the server turned into a task: its handle. Serializable (the id is the whole
/// continuation): keep it and [`follow`](crate::Client::follow) it later, from any process.
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

    /// The pause between polls the server asked for, within 10 ms and 5 s.
    pub(crate) fn poll(&self) -> Duration {
        Duration::from_millis(self.poll_ms.clamp(10, 5000))
    }
}
