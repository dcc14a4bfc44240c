//! The client: what it can do, in one place — every public method of [`Client`], and
//! the finishing methods of the [`ClientBuilder`] that make one. Each method hands the
//! work to the stage that does it, all below this file and taking the client's shared
//! state (`shared.rs`): `driver.rs` sends (and pages through lists), `rounds.rs` drives
//! MRTR rounds, `connect.rs` finds the era, `tasks.rs` follows tasks, `fulfil.rs`
//! answers questions.

use crate::builder::ClientBuilder;
use crate::call::{Call, CallResult, Pending, RunningTask, Step};
use crate::connect::connected;
use crate::era::Era;
use crate::error::ClientError;
use crate::events::ServerEvent;
use crate::link::Connected;
use crate::shared::Shared;
use crate::transport::{StdioTransport, Transport};
use crate::{driver, fulfil, rounds, tasks};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::future::Future;
use std::sync::Arc;
use sterna_types::capabilities::ClientCapabilities;
use sterna_types::discover::DiscoverResult;
use sterna_types::meta::Implementation;
use sterna_types::mrtr::{InputRequests, InputResponses};
use sterna_types::prompts::{GetPromptResult, ListPromptsResult, Prompt};
use sterna_types::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceTemplate,
};
use sterna_types::tasks::DetailedTask;
use sterna_types::tools::{CallToolResult, Tool};
use tokio::sync::broadcast;

/// An MCP client of 2026-07-28 servers and, through the same API and handlers, of
/// 2025-11-25 ones (see [`EraMode`](crate::EraMode)). Cheap to clone; calls may run
/// concurrently.
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("capabilities", &self.shared.caps)
            .field("limits", &self.shared.limits)
            .finish()
    }
}

impl ClientBuilder {
    /// A client over any transport. sterna's own transports ([`StdioTransport`],
    /// [`StreamTransport`](crate::transport::StreamTransport),
    /// [`HttpTransport`](crate::transport::HttpTransport)) reach servers of both eras; any
    /// other [`Transport`] speaks 2026-07-28 only.
    pub fn build(self, transport: impl Transport) -> Client {
        Client {
            shared: Arc::new(self.into_shared(transport)),
        }
    }

    /// A client of the Streamable HTTP endpoint at `url`.
    #[cfg(feature = "http")]
    pub fn connect_http(self, url: &str) -> Result<Client, ClientError> {
        Ok(self.build(crate::transport::HttpTransport::new(url)?))
    }

    /// A client of a server started as a child process, over its stdio.
    pub fn spawn_stdio(self, command: tokio::process::Command) -> std::io::Result<Client> {
        Ok(self.build(StdioTransport::spawn(command)?))
    }

    /// A client of an in-process server over an in-memory pipe (tests, embedding; with
    /// the `in-process` feature).
    #[cfg(feature = "in-process")]
    pub fn in_process(self, server: sterna_server::Server) -> Client {
        use crate::transport::StreamTransport;
        use sterna_server::transport::{StreamOptions, duplex};
        let stream = duplex(server, StreamOptions::default());
        let (r, w) = tokio::io::split(stream);
        self.build(StreamTransport::new(r, w))
    }
}

impl Client {
    /// Starts building a client called `name` at `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(Implementation::new(name, version))
    }

    /// The capabilities this client declares on every request.
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.shared.caps
    }

    /// The protocol version in use (after any negotiation).
    pub fn protocol_version(&self) -> String {
        self.shared.version()
    }

    /// Ends a 2025-11-25 session (DELETE over HTTP), then closes the transport (ends a
    /// child server process gracefully).
    pub async fn close(&self) {
        let conn = self.shared.conn.lock().await.clone();
        if let Some(Connected::Legacy(link)) = conn {
            link.session.close().await;
        }
        self.shared.transport.close().await;
    }

    /// A raw request (for methods without a typed helper); `_meta` is added (entries of
    /// a `_meta` in `params` are kept; the version, capabilities and client info are the
    /// client's own).
    pub async fn raw_request(
        &self,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<Value, ClientError> {
        driver::typed(&self.shared, method, params).await
    }

    /// The era the server speaks (and the revision in use), probing it first if no request
    /// did yet. In [`EraMode::Auto`](crate::EraMode::Auto) a 2025-11-25 session is opened here when the server is
    /// legacy.
    pub async fn era(&self) -> Result<Era, ClientError> {
        Ok(match connected(&self.shared).await? {
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
        self.shared.events.subscribe()
    }

    /// Answers a round's questions with the registered handlers, all at once. A refused
    /// sampling or roots request abandons the call; a question this client never declared
    /// it could answer is a protocol violation. An accepted form is completed with the
    /// schema's `default`s for the fields the handler left out.
    pub async fn fulfil(&self, requests: &InputRequests) -> Result<InputResponses, ClientError> {
        fulfil::fulfil(&self.shared.handlers, requests).await
    }

    /// `server/discover`. A 2025-11-25 server has no such method: its answer to
    /// `initialize` is returned in the same shape (its version, capabilities,
    /// instructions, and `serverInfo` in `_meta`).
    pub async fn discover(&self) -> Result<DiscoverResult, ClientError> {
        if let Connected::Legacy(link) = connected(&self.shared).await? {
            return Ok(link.session.discover());
        }
        driver::typed(&self.shared, "server/discover", Map::new()).await
    }

    /// Every tool (all pages). Tools whose `x-mcp-header` annotations are invalid are left
    /// out (with a warning), as 2026-07-28 requires; the valid annotations are kept to
    /// mirror arguments into `Mcp-Param-*` headers.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        driver::list_tools(&self.shared).await
    }

    /// Every prompt (all pages).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        driver::pages(&self.shared, "prompts/list", |r: ListPromptsResult| {
            (r.prompts, r.next_cursor)
        })
        .await
    }

    /// Every resource (all pages).
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        driver::pages(&self.shared, "resources/list", |r: ListResourcesResult| {
            (r.resources, r.next_cursor)
        })
        .await
    }

    /// Every resource template (all pages).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        driver::pages(
            &self.shared,
            "resources/templates/list",
            |r: ListResourceTemplatesResult| (r.resource_templates, r.next_cursor),
        )
        .await
    }

    /// `resources/subscribe` (2025-11-25): the server then sends
    /// [`ServerEvent::ResourceUpdated`] when the resource changes. 2026-07-28 replaced it
    /// with `subscriptions/listen`.
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.subscription("resources/subscribe", uri).await
    }

    /// `resources/unsubscribe` (2025-11-25).
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.subscription("resources/unsubscribe", uri).await
    }

    /// Runs a call to completion, driving every round: on `input_required` the registered
    /// handlers answer all questions concurrently and the call is retried with a new id,
    /// the answers, and the `requestState` echoed exactly.
    ///
    /// On a 2025-11-25 server the same handlers answer the requests the server pushes
    /// while it holds the call open (the server drives those rounds, so the round cap does
    /// not apply; the time budget does), and a `-32042` is resolved with the URL handler.
    pub async fn run<T: CallResult>(&self, call: Call<T>) -> Result<T, ClientError> {
        rounds::run(&self.shared, call).await
    }

    /// Runs the first round of a call.
    pub async fn start<T: CallResult>(&self, call: Call<T>) -> Result<Step<T>, ClientError> {
        rounds::start(&self.shared, call).await
    }

    /// Answers a pending call and runs its next round. `answers` are this round's only
    /// (earlier ones travel in the state); the state is echoed as received.
    pub async fn resume<T: CallResult>(
        &self,
        pending: Pending<T>,
        answers: InputResponses,
    ) -> Result<Step<T>, ClientError> {
        rounds::round(&self.shared, pending, Some(answers)).await
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
    pub async fn follow<T: CallResult>(&self, task: RunningTask<T>) -> Result<T, ClientError> {
        self.follow_with(task, |requests| async move { self.fulfil(&requests).await })
            .await
    }

    /// Follows a task to its end, answering its questions with `answer` (a UI of your
    /// own). Each status change is delivered to the client's event callback as a
    /// [`ServerEvent::Task`]. Dropping the future cancels the task.
    pub async fn follow_with<T, F, Fut, E>(&self, task: RunningTask<T>, answer: F) -> Result<T, E>
    where
        T: CallResult,
        F: FnMut(InputRequests) -> Fut,
        Fut: Future<Output = Result<InputResponses, E>>,
        E: From<ClientError>,
    {
        tasks::follow_with(&self.shared, task, answer).await
    }

    /// The task's current state (`tasks/get`).
    pub async fn task(&self, id: &str) -> Result<DetailedTask, ClientError> {
        tasks::get(&self.shared, id).await
    }

    /// Answers a task's questions (`tasks/update`).
    pub async fn update_task(&self, id: &str, answers: InputResponses) -> Result<(), ClientError> {
        tasks::update(&self.shared, id, answers).await
    }

    /// Asks the server to cancel a task (`tasks/cancel`; cooperative: the task may still
    /// complete).
    pub async fn cancel_task<T>(&self, task: &RunningTask<T>) -> Result<(), ClientError> {
        tasks::cancel(&self.shared, &task.task_id).await
    }

    /// Typed helper for extensions (`skills`): one request, its `result` decoded as `T`.
    #[cfg_attr(not(feature = "skills"), allow(dead_code))]
    pub(crate) async fn typed<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<T, ClientError> {
        driver::typed(&self.shared, method, params).await
    }

    async fn subscription(&self, method: &str, uri: &str) -> Result<(), ClientError> {
        let mut params = Map::new();
        params.insert("uri".into(), Value::String(uri.to_owned()));
        driver::request(&self.shared, method, &params, None)
            .await
            .map(drop)
    }
}
