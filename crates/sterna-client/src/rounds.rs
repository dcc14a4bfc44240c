//! The round driver: [`run`] drives every round of a call (answering questions with the
//! registered handlers, following a task, within the round cap and time budget);
//! [`start`] and [`round`] take one round at a time ([`Client::run`](crate::Client::run),
//! [`start`](crate::Client::start), [`resume`](crate::Client::resume)).

use super::call::{Call, CallResult, Pending, RunningTask, Step};
use super::connect::connected;
use super::driver::{request, within};
use super::error::{ClientError, GaveUp, Misuse, ProtocolViolation};
use super::fulfil::fulfil;
use super::legacy;
use super::link::Connected;
use super::shared::{Limits, Shared};
use super::tasks;
use serde_json::Value;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};
use sterna_types::mrtr::InputResponses;
use sterna_types::mrtr::Outcome;

/// The pause before the `consecutive`-th state-only retry.
fn backoff(limits: &Limits, consecutive: u32) -> Duration {
    let (first, max) = limits.backoff;
    let factor = 1u32 << consecutive.saturating_sub(1).min(16);
    first.saturating_mul(factor).min(max)
}

/// Runs a call to completion (see [`Client::run`](crate::Client::run)).
pub(crate) async fn run<T: CallResult>(
    shared: &Arc<Shared>,
    call: Call<T>,
) -> Result<T, ClientError> {
    let started = Instant::now();
    let budget = shared.limits.budget;
    if let Connected::Legacy(link) = within(started, budget, connected(shared)).await? {
        let legacy = legacy::rounds::run(shared, &link, call, started);
        return within(started, budget, legacy).await;
    }
    let mut step = within(started, budget, start(shared, call)).await?;
    let mut state_only = 0u32;
    loop {
        let pending = match step {
            Step::Complete(t) => return Ok(t),
            Step::Task(task) => {
                let follow = tasks::follow_with(shared, task, |requests| async move {
                    fulfil(&shared.handlers, &requests).await
                });
                return within(started, budget, follow).await;
            }
            Step::InputRequired(p) => p,
        };
        if pending.round >= shared.limits.max_rounds {
            return Err(ClientError::GaveUp(GaveUp::Rounds(pending.round)));
        }
        let next = async {
            let answers = if pending.input_requests.is_empty() {
                state_only += 1;
                tokio::time::sleep(backoff(&shared.limits, state_only)).await;
                InputResponses::new()
            } else {
                state_only = 0;
                fulfil(&shared.handlers, &pending.input_requests).await?
            };
            round(shared, pending, Some(answers)).await
        };
        step = within(started, budget, next).await?;
    }
}

/// Runs the first round of a call.
pub(crate) async fn start<T: CallResult>(
    shared: &Shared,
    call: Call<T>,
) -> Result<Step<T>, ClientError> {
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
    if let Connected::Legacy(link) = connected(shared).await? {
        return legacy::rounds::start(shared, &link, pending).await;
    }
    round(shared, pending, None).await
}

/// Runs the next round of `pending`, with this round's `answers` (none on the first).
pub(crate) async fn round<T: CallResult>(
    shared: &Shared,
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
        return legacy::rounds::resume(shared, pending, *held, answers.unwrap_or_default()).await;
    }
    if let Connected::Legacy(_) = connected(shared).await? {
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
    let value = request(shared, &method, &this, Some(&name)).await?;
    if let Some(task) = task_result(shared, &method, &value)? {
        return Ok(Step::Task(task));
    }
    match serde_json::from_str::<Outcome<T>>(value.get()) {
        Ok(Outcome::Complete(t)) => Ok(Step::Complete(t)),
        Ok(Outcome::InputRequired(r)) => {
            let requests = r.input_requests.unwrap_or_default();
            if requests.is_empty() && r.request_state.is_none() {
                return Err(ProtocolViolation::EmptyInputRequired.into());
            }
            shared.limits.questions(requests.len())?;
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
    shared: &Shared,
    method: &str,
    value: &serde_json::value::RawValue,
) -> Result<Option<RunningTask<T>>, ClientError> {
    #[derive(serde::Deserialize)]
    struct Probe<'a> {
        #[serde(rename = "resultType", default, borrow)]
        result_type: Option<&'a str>,
    }
    let probe: Option<Probe<'_>> = serde_json::from_str(value.get()).ok();
    if probe.and_then(|p| p.result_type) != Some("task") {
        return Ok(None);
    }
    let declared = shared.caps.extension(sterna_types::tasks::EXTENSION);
    let malformed = |source| ProtocolViolation::Malformed {
        method: method.to_owned(),
        source,
    };
    if method != "tools/call" || !declared {
        let e = serde::de::Error::custom("a task answer to a request that cannot have one");
        return Err(malformed(e).into());
    }
    let created = serde_json::from_str(value.get()).map_err(malformed)?;
    Ok(Some(RunningTask::new(created)))
}
