//! [`Client::run`], [`start`](Client::start) and [`resume`](Client::resume) on a
//! 2025-11-25 server: the same meaning as with MRTR, over pushed requests.
//!
//! * `run` sends the request once; the registered handlers answer what the server pushes
//!   while it holds the request open; a `-32042` is resolved with the URL handler, then the
//!   request is sent again.
//! * `start` surfaces the pushed questions as [`Step::InputRequired`]; `resume` sends the
//!   answers back as the responses to those pushes and waits for the next turn. A `-32042`
//!   surfaces its URL elicitations the same way (keyed by `elicitationId`); once they are
//!   all accepted, `resume` waits for their completion and sends the request again.

use super::super::call::{Call, CallResult, Pending, Step};
use super::super::client::Client;
use super::super::error::{ClientError, ProtocolViolation};
use super::super::link::LegacyLink;
use super::{Held, Live, MAX_URL_RETRIES, Required, Turn, completion, consent, required};
use serde_json::value::RawValue;
use std::time::Instant;
use sterna_types::elicitation::{ElicitAction, ElicitRequestParams};
use sterna_types::error::ErrorObject;
use sterna_types::mrtr::Outcome;
use sterna_types::mrtr::{InputRequest, InputResponse, InputResponses};

/// A result of a 2025-11-25 server (no `resultType`, or `complete`).
fn decode<T: CallResult>(method: &str, v: &RawValue) -> Result<T, ClientError> {
    match serde_json::from_str::<Outcome<T>>(v.get()) {
        Ok(Outcome::Complete(t)) => Ok(t),
        Ok(Outcome::InputRequired(_)) => Err(ProtocolViolation::InputRequiredInSession.into()),
        Err(source) => Err(ProtocolViolation::Malformed {
            method: method.to_owned(),
            source,
        }
        .into()),
    }
}

/// The URL elicitations of a `-32042` this client can show (it has a URL handler).
fn url_required(c: &Client, e: &ErrorObject) -> Option<Vec<Required>> {
    c.inner.handlers.url.as_ref()?;
    required(e)
}

impl Client {
    pub(crate) async fn legacy_run<T: CallResult>(
        &self,
        link: &LegacyLink,
        call: Call<T>,
        started: Instant,
    ) -> Result<T, ClientError> {
        let mut retries = 0;
        loop {
            let e = match link.session.request(T::METHOD, &call.params, &|_| {}).await {
                Ok(v) => return decode(T::METHOD, &v),
                Err(ClientError::Server(e)) => e,
                Err(other) => return Err(other),
            };
            let (Some(list), Some(handler)) = (url_required(self, &e), &self.inner.handlers.url)
            else {
                return Err(ClientError::Server(e));
            };
            if retries == MAX_URL_RETRIES || !consent(handler.as_ref(), &list).await {
                return Err(ClientError::Server(e));
            }
            retries += 1;
            let left = self.inner.limits.budget.saturating_sub(started.elapsed());
            completion(&self.inner.events, &list, left).await;
        }
    }

    pub(crate) async fn legacy_start<T: CallResult>(
        &self,
        link: &LegacyLink,
        pending: Pending<T>,
    ) -> Result<Step<T>, ClientError> {
        let live = Live::start(
            link.session.clone(),
            &link.dispatch,
            pending.method.clone(),
            pending.params.clone(),
        );
        self.legacy_turn(pending, live, 0).await
    }

    pub(crate) async fn legacy_resume<T: CallResult>(
        &self,
        pending: Pending<T>,
        held: Held,
        answers: InputResponses,
    ) -> Result<Step<T>, ClientError> {
        match held {
            Held::Live(mut live) => {
                live.answer(answers);
                self.legacy_turn(pending, live, 0).await
            }
            Held::UrlRequired {
                list,
                error,
                retries,
            } => {
                let accepted = list.iter().all(|r| {
                    matches!(answers.get(&r.id), Some(InputResponse::Elicit(a)) if a.action == ElicitAction::Accept)
                });
                if !accepted {
                    return Err(ClientError::Server(error));
                }
                completion(&self.inner.events, &list, self.inner.limits.budget).await;
                let Some(super::super::link::Connected::Legacy(link)) =
                    Some(self.connected().await?)
                else {
                    return Err(ClientError::Server(error));
                };
                let live = Live::start(
                    link.session.clone(),
                    &link.dispatch,
                    pending.method.clone(),
                    pending.params.clone(),
                );
                self.legacy_turn(pending, live, retries).await
            }
        }
    }

    /// Waits for the call's next turn.
    async fn legacy_turn<T: CallResult>(
        &self,
        mut pending: Pending<T>,
        mut live: Live,
        retries: u32,
    ) -> Result<Step<T>, ClientError> {
        let held = match live.next().await {
            Turn::Done(Ok(v)) => return decode(T::METHOD, &v).map(Step::Complete),
            Turn::Done(Err(ClientError::Server(e))) => match url_required(self, &e) {
                Some(list) if retries < MAX_URL_RETRIES => {
                    pending.input_requests = list
                        .iter()
                        .map(|r| {
                            (
                                r.id.clone(),
                                InputRequest::Elicit(ElicitRequestParams::Url(r.params.clone())),
                            )
                        })
                        .collect();
                    Held::UrlRequired {
                        list,
                        error: e,
                        retries: retries + 1,
                    }
                }
                _ => return Err(ClientError::Server(e)),
            },
            Turn::Done(Err(e)) => return Err(e),
            Turn::Asked(questions) => {
                pending.input_requests = questions;
                Held::Live(live)
            }
        };
        pending.round += 1;
        pending.held = Some(Box::new(held));
        Ok(Step::InputRequired(pending))
    }
}
