//! The client: what it can do, in one place. Each method hands the work to the stage
//! that does it (`driver.rs` sends, `rounds.rs` drives MRTR rounds, `connect.rs` finds
//! the era, `lists.rs`, `tasks.rs`, `fulfil.rs`).

use crate::builder::ClientBuilder;
use crate::call::{Call, CallResult, Pending, Step};
use crate::driver::{Limits, within};
use crate::era::{Era, EraMode};
use crate::error::{ClientError, GaveUp, ProtocolViolation};
use crate::events::{EventHub, ServerEvent};
use crate::handlers::Handlers;
use crate::link::{Connected, Dual};
use crate::tasks::{RunningTask, id_params, malformed};
use crate::transport::{NotificationSink, Transport};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use sterna_types::capabilities::ClientCapabilities;
use sterna_types::discover::DiscoverResult;
use sterna_types::meta::Implementation;
use sterna_types::mirror::HeaderParam;
use sterna_types::mrtr::{InputRequests, InputResponses};
use sterna_types::prompts::{GetPromptResult, ListPromptsResult, Prompt};
use sterna_types::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceTemplate,
};
use sterna_types::tasks::{DetailedTask, GetTaskResult};
use sterna_types::tools::{CallToolResult, Tool};
use tokio::sync::broadcast;

/// An MCP client of 2026-07-28 servers and, through the same API and handlers, of
/// 2025-11-25 ones (see [`EraMode`]). Cheap to clone; calls may run concurrently.
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) transport: Arc<dyn Transport>,
    /// The same transport, when it can also carry a 2025-11-25 session.
    pub(crate) dual: Option<Dual>,
    /// `clientInfo` for `_meta` (none when left out).
    pub(crate) info: Option<Implementation>,
    /// `clientInfo` for `initialize` (always sent there).
    pub(crate) identity: Implementation,
    pub(crate) caps: ClientCapabilities,
    pub(crate) handlers: Handlers,
    pub(crate) limits: Limits,
    pub(crate) sink: NotificationSink,
    pub(crate) events: Arc<EventHub>,
    pub(crate) era_mode: EraMode,
    pub(crate) probe_wait: Duration,
    pub(crate) conn: tokio::sync::Mutex<Option<Connected>>,
    pub(crate) version: Mutex<String>,
    pub(crate) next_id: Arc<AtomicI64>,
    /// `x-mcp-header` annotations by tool, learned from `tools/list`.
    pub(crate) mirrors: RwLock<Option<HashMap<String, Vec<HeaderParam>>>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("capabilities", &self.inner.caps)
            .field("limits", &self.inner.limits)
            .finish()
    }
}

impl Client {
    /// Starts building a client called `name` at `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(Implementation::new(name, version))
    }

    /// The capabilities this client declares on every request.
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.inner.caps
    }

    /// The protocol version in use (after any negotiation).
    pub fn protocol_version(&self) -> String {
        self.inner
            .version
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Ends a 2025-11-25 session (DELETE over HTTP), then closes the transport (ends a
    /// child server process gracefully).
    pub async fn close(&self) {
        let conn = self.inner.conn.lock().await.clone();
        if let Some(Connected::Legacy(link)) = conn {
            link.session.close().await;
        }
        self.inner.transport.close().await;
    }

    /// A raw request (for methods without a typed helper); `_meta` is added (entries of
    /// a `_meta` in `params` are kept; the version, capabilities and client info are the
    /// client's own).
    pub async fn raw_request(
        &self,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<Value, ClientError> {
        self.typed(method, params).await
    }

    /// The era the server speaks (and the revision in use), probing it first if no request
    /// did yet. In [`EraMode::Auto`] a 2025-11-25 session is opened here when the server is
    /// legacy.
    pub async fn era(&self) -> Result<Era, ClientError> {
        Ok(match self.connected().await? {
            Connected::Modern { .. } => Era::Modern {
                version: self.protocol_version(),
            },
            Connected::Legacy(link) => link.session.era(),
        })
    }

    /// A receiver of every [`ServerEvent`] from now on (list changes, resource updates,
    /// completed URL elicitations, progress, log messages), from either era. Slow
    /// receivers miss events (the channel keeps the last 64).
    pub fn events(&self) -> broadcast::Receiver<ServerEvent> {
        self.inner.events.subscribe()
    }

    /// Answers a round's questions with the registered handlers, all at once. A refused
    /// sampling or roots request abandons the call; a question this client never declared
    /// it could answer is a protocol violation. An accepted form is completed with the
    /// schema's `default`s for the fields the handler left out.
    pub async fn fulfil(
        &self,
        requests: &sterna_types::mrtr::InputRequests,
    ) -> Result<InputResponses, ClientError> {
        crate::fulfil::fulfil(self, requests).await
    }

    /// `server/discover`. A 2025-11-25 server has no such method: its answer to
    /// `initialize` is returned in the same shape (its version, capabilities,
    /// instructions, and `serverInfo` in `_meta`).
    pub async fn discover(&self) -> Result<DiscoverResult, ClientError> {
        if let Connected::Legacy(link) = self.connected().await? {
            return Ok(link.session.discover());
        }
        self.typed("server/discover", Map::new()).await
    }

    /// Every tool (all pages). Tools whose `x-mcp-header` annotations are invalid are left
    /// out (with a warning), as 2026-07-28 requires; the valid annotations are kept to
    /// mirror arguments into `Mcp-Param-*` headers.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        crate::lists::tools(self).await
    }

    /// Every prompt (all pages).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.pages("prompts/list", |r: ListPromptsResult| {
            (r.prompts, r.next_cursor)
        })
        .await
    }

    /// Every resource (all pages).
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.pages("resources/list", |r: ListResourcesResult| {
            (r.resources, r.next_cursor)
        })
        .await
    }

    /// Every resource template (all pages).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.pages(
            "resources/templates/list",
            |r: ListResourceTemplatesResult| (r.resource_templates, r.next_cursor),
        )
        .await
    }

    /// `resources/subscribe` (2025-11-25): the server then sends
    /// [`ServerEvent::ResourceUpdated`](super::ServerEvent::ResourceUpdated) when the
    /// resource changes. 2026-07-28 replaced it with `subscriptions/listen`.
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.resource_subscription("resources/subscribe", uri).await
    }

    /// `resources/unsubscribe` (2025-11-25).
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.resource_subscription("resources/unsubscribe", uri)
            .await
    }

    /// Runs a call to completion, driving every round: on `input_required` the registered
    /// handlers answer all questions concurrently and the call is retried with a new id,
    /// the answers, and the `requestState` echoed exactly.
    ///
    /// On a 2025-11-25 server the same handlers answer the requests the server pushes
    /// while it holds the call open (the server drives those rounds, so the round cap does
    /// not apply; the time budget does), and a `-32042` is resolved with the URL handler.
    pub async fn run<T: CallResult>(&self, call: Call<T>) -> Result<T, ClientError> {
        let started = Instant::now();
        let budget = self.inner.limits.budget;
        if let Connected::Legacy(link) = within(started, budget, self.connected()).await? {
            return within(started, budget, self.legacy_run(&link, call, started)).await;
        }
        let mut step = within(started, budget, self.start(call)).await?;
        let mut state_only = 0u32;
        loop {
            let pending = match step {
                Step::Complete(t) => return Ok(t),
                Step::Task(task) => return within(started, budget, self.follow(task)).await,
                Step::InputRequired(p) => p,
            };
            if pending.round >= self.inner.limits.max_rounds {
                return Err(ClientError::GaveUp(GaveUp::Rounds(pending.round)));
            }
            let next = async {
                let answers = if pending.input_requests.is_empty() {
                    state_only += 1;
                    tokio::time::sleep(self.backoff(state_only)).await;
                    InputResponses::new()
                } else {
                    state_only = 0;
                    self.fulfil(&pending.input_requests).await?
                };
                self.resume(pending, answers).await
            };
            step = within(started, budget, next).await?;
        }
    }

    /// Runs the first round of a call.
    pub async fn start<T: CallResult>(&self, call: Call<T>) -> Result<Step<T>, ClientError> {
        let pending = Pending {
            method: T::METHOD.to_owned(),
            name: call.name,
            params: call.params,
            input_requests: Default::default(),
            request_state: None,
            round: 0,
            held: None,
            _t: PhantomData,
        };
        if let Connected::Legacy(link) = self.connected().await? {
            return self.legacy_start(&link, pending).await;
        }
        self.round(pending, None).await
    }

    /// Answers a pending call and runs its next round. `answers` are this round's only
    /// (earlier ones travel in the state); the state is echoed as received.
    pub async fn resume<T: CallResult>(
        &self,
        pending: Pending<T>,
        answers: InputResponses,
    ) -> Result<Step<T>, ClientError> {
        self.round(pending, Some(answers)).await
    }

    /// Calls a tool, driving every round ([`run`](Self::run) with [`Call::tool`]).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, ClientError> {
        self.run(Call::tool(name, arguments)).await
    }

    /// Gets a prompt, driving every round ([`run`](Self::run) with [`Call::prompt`]).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<GetPromptResult, ClientError> {
        self.run(Call::prompt(name, arguments)).await
    }

    /// Reads a resource, driving every round ([`run`](Self::run) with [`Call::resource`]).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.run(Call::resource(uri)).await
    }

    /// Follows a task to its end, answering its questions with the registered handlers
    /// (as [`run`](Self::run) does). Dropping the future cancels the task.
    pub async fn follow<T: super::call::CallResult>(
        &self,
        task: RunningTask<T>,
    ) -> Result<T, ClientError> {
        self.follow_with(task, |requests| async move { self.fulfil(&requests).await })
            .await
    }

    /// Follows a task to its end, answering its questions with `answer` (a UI of your
    /// own). Each status change is delivered to the client's event callback as a
    /// [`ServerEvent::Task`](super::ServerEvent::Task). Dropping the future cancels the
    /// task.
    pub async fn follow_with<T, F, Fut, E>(&self, task: RunningTask<T>, answer: F) -> Result<T, E>
    where
        T: super::call::CallResult,
        F: FnMut(InputRequests) -> Fut,
        Fut: Future<Output = Result<InputResponses, E>>,
        E: From<ClientError>,
    {
        crate::tasks::follow_with(self, task, answer).await
    }

    /// The task's current state (`tasks/get`).
    pub async fn task(&self, id: &str) -> Result<DetailedTask, ClientError> {
        let v = self.request("tasks/get", &id_params(id), Some(id)).await?;
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
    pub async fn update_task(&self, id: &str, answers: InputResponses) -> Result<(), ClientError> {
        let mut params = id_params(id);
        params.insert(
            "inputResponses".into(),
            serde_json::to_value(answers).expect("answers serialize"),
        );
        self.request("tasks/update", &params, Some(id))
            .await
            .map(drop)
    }

    /// Asks the server to cancel a task (`tasks/cancel`; cooperative: the task may still
    /// complete).
    pub async fn cancel_task<T>(&self, task: &RunningTask<T>) -> Result<(), ClientError> {
        self.cancel_task_id(&task.task_id).await
    }
}
