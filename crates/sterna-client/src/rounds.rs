//! The round driver: [`Client::run`] drives every round of a call; [`Client::start`] and
//! [`Client::resume`] take one round at a time.

use super::call::{Call, CallResult, Pending, Step};
use super::driver::{Client, within};
use super::error::{ClientError, GaveUp, Misuse, ProtocolViolation};
use super::link::Connected;
use serde::Serialize;
use serde_json::Value;
use std::marker::PhantomData;
use std::time::{Duration, Instant};
use sterna_types::mrtr::InputResponses;
use sterna_types::prompts::GetPromptResult;
use sterna_types::resources::ReadResourceResult;
use sterna_types::result::Outcome;
use sterna_types::tools::CallToolResult;

impl Client {
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

    fn backoff(&self, consecutive: u32) -> Duration {
        let (first, max) = self.inner.limits.backoff;
        let factor = 1u32 << consecutive.saturating_sub(1).min(16);
        first.saturating_mul(factor).min(max)
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

    async fn round<T: CallResult>(
        &self,
        mut pending: Pending<T>,
        answers: Option<InputResponses>,
    ) -> Result<Step<T>, ClientError> {
        if pending.method != T::METHOD {
            return Err(ClientError::Misuse(Misuse::ResumedAs {
                pending: pending.method,
                resumed_as: T::METHOD,
            }));
        }
        if let Some(held) = pending.held.take() {
            return self
                .legacy_resume(pending, *held, answers.unwrap_or_default())
                .await;
        }
        if let Connected::Legacy(_) = self.connected().await? {
            return Err(ClientError::Misuse(Misuse::OtherEra));
        }
        let Pending {
            method,
            name,
            params,
            request_state,
            round,
            ..
        } = pending;
        // MRTR members live only in this request's params, never in the call's own.
        let mut this = params.clone();
        if let Some(answers) = answers.filter(|a| !a.is_empty()) {
            this.insert(
                "inputResponses".into(),
                serde_json::to_value(answers).expect("answers serialize"),
            );
        }
        if let Some(state) = &request_state {
            this.insert("requestState".into(), Value::String(state.clone()));
        }
        let value = self.request(&method, &this, Some(&name)).await?;
        if let Some(task) = self.task_result(&method, &value)? {
            return Ok(Step::Task(task));
        }
        match serde_json::from_str::<Outcome<T>>(value.get()) {
            Ok(Outcome::Complete(t)) => Ok(Step::Complete(t)),
            Ok(Outcome::InputRequired(r)) => {
                let requests = r.input_requests.unwrap_or_default();
                if requests.is_empty() && r.request_state.is_none() {
                    return Err(ProtocolViolation::EmptyInputRequired.into());
                }
                Ok(Step::InputRequired(Pending {
                    method,
                    name,
                    params,
                    input_requests: requests,
                    request_state: r.request_state,
                    round: round + 1,
                    held: None,
                    _t: PhantomData,
                }))
            }
            Err(source) => Err(ProtocolViolation::Malformed { method, source }.into()),
        }
    }

    /// A `resultType: "task"` answer as a task handle; `None` for any other answer. A task
    /// is only valid on `tools/call` from a client that declared the extension.
    fn task_result<T>(
        &self,
        method: &str,
        value: &serde_json::value::RawValue,
    ) -> Result<Option<super::tasks::RunningTask<T>>, ClientError> {
        #[derive(serde::Deserialize)]
        struct Probe<'a> {
            #[serde(rename = "resultType", default, borrow)]
            result_type: Option<&'a str>,
        }
        let probe: Option<Probe<'_>> = serde_json::from_str(value.get()).ok();
        if probe.and_then(|p| p.result_type) != Some("task") {
            return Ok(None);
        }
        let declared = self.inner.caps.extension(sterna_types::tasks::EXTENSION);
        let malformed = |source| ProtocolViolation::Malformed {
            method: method.to_owned(),
            source,
        };
        if method != "tools/call" || !declared {
            let e = serde::de::Error::custom("a task answer to a request that cannot have one");
            return Err(malformed(e).into());
        }
        let created = serde_json::from_str(value.get()).map_err(malformed)?;
        Ok(Some(super::tasks::RunningTask::new(created)))
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
}
