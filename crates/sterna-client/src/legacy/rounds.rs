//! [`Client::run`](crate::Client::run), [`start`](crate::Client::start) and
//! [`resume`](crate::Client::resume) on a 2025-11-25 server: the same meaning as with MRTR, over pushed requests.
//!
//! * `run` sends the request once; the registered handlers answer what the server pushes
//!   while it holds the request open; a `-32042` is resolved with the URL handler, then the
//!   request is sent again.
//! * `start` surfaces the pushed questions as [`Step::InputRequired`]; `resume` sends the
//!   answers back as the responses to those pushes and waits for the next turn. A `-32042`
//!   surfaces its URL elicitations the same way (keyed by `elicitationId`); once they are
//!   all accepted, `resume` waits for their completion and sends the request again.

use super::{Held, Live, MAX_URL_RETRIES, Required, Turn, completion, consent, required};
use crate::call::{Call, CallResult, Pending, Step};
use crate::connect::connected;
use crate::error::{ClientError, ProtocolViolation};
use crate::link::{Connected, LegacyLink};
use crate::shared::Shared;
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
fn url_required(shared: &Shared, e: &ErrorObject) -> Option<Vec<Required>> {
    shared.handlers.url.as_ref()?;
    required(e)
}

/// Runs a call to completion, answering pushes as they come.
pub(crate) async fn run<T: CallResult>(
    shared: &Shared,
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
        let (Some(list), Some(handler)) = (url_required(shared, &e), &shared.handlers.url) else {
            return Err(ClientError::Server(e));
        };
        if retries == MAX_URL_RETRIES || !consent(handler.as_ref(), &list).await {
            return Err(ClientError::Server(e));
        }
        retries += 1;
        let left = shared.limits.budget.saturating_sub(started.elapsed());
        completion(&shared.events, &list, left).await;
    }
}

/// Sends the call and waits for its first turn.
pub(crate) async fn start<T: CallResult>(
    shared: &Shared,
    link: &LegacyLink,
    pending: Pending<T>,
) -> Result<Step<T>, ClientError> {
    let live = Live::start(
        link.session.clone(),
        &link.dispatch,
        pending.method.clone(),
        pending.params.clone(),
    );
    turn(shared, pending, live, 0).await
}

/// Answers the held questions (or resolves the URL elicitations) and waits for the next
/// turn.
pub(crate) async fn resume<T: CallResult>(
    shared: &Shared,
    pending: Pending<T>,
    held: Held,
    answers: InputResponses,
) -> Result<Step<T>, ClientError> {
    match held {
        Held::Live(mut live) => {
            live.answer(answers);
            turn(shared, pending, live, 0).await
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
            completion(&shared.events, &list, shared.limits.budget).await;
            let Connected::Legacy(link) = connected(shared).await? else {
                return Err(ClientError::Server(error));
            };
            let live = Live::start(
                link.session.clone(),
                &link.dispatch,
                pending.method.clone(),
                pending.params.clone(),
            );
            turn(shared, pending, live, retries).await
        }
    }
}

/// Waits for the call's next turn.
async fn turn<T: CallResult>(
    shared: &Shared,
    mut pending: Pending<T>,
    mut live: Live,
    retries: u32,
) -> Result<Step<T>, ClientError> {
    let held = match live.next().await {
        Turn::Done(Ok(v)) => return decode(T::METHOD, &v).map(Step::Complete),
        Turn::Done(Err(ClientError::Server(e))) => match url_required(shared, &e) {
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
