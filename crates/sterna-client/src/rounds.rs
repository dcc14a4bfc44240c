//! The round driver: [`Client::run`] drives every round of a call; [`Client::start`] and
//! [`Client::resume`] take one round at a time.

use super::call::{CallResult, Pending, Step};
use super::client::Client;
use super::error::{ClientError, Misuse, ProtocolViolation};
use super::link::Connected;
use serde_json::Value;
use std::marker::PhantomData;
use std::time::Duration;
use sterna_types::mrtr::InputResponses;
use sterna_types::mrtr::Outcome;

impl Client {
    pub(crate) fn backoff(&self, consecutive: u32) -> Duration {
        let (first, max) = self.inner.limits.backoff;
        let factor = 1u32 << consecutive.saturating_sub(1).min(16);
        first.saturating_mul(factor).min(max)
    }

    pub(crate) async fn round<T: CallResult>(
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
    pub(crate) fn task_result<T>(
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
}
