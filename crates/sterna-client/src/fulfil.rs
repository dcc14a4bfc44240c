//! Answering a round's questions with the handlers the client registered.

use super::answer::{Unanswered, answer};
use super::error::{ClientError, ProtocolViolation};
use super::handlers::Handlers;
use futures_util::future::join_all;
use sterna_types::mrtr::{InputRequests, InputResponses};

pub(crate) fn abandon(key: &str, why: Unanswered) -> ClientError {
    match why {
        Unanswered::Undeclared(kind) => ProtocolViolation::Undeclared {
            key: key.to_owned(),
            kind,
        }
        .into(),
        Unanswered::Refused { refusal, .. } => ClientError::Refused(refusal),
        Unanswered::Unknown(method) => ProtocolViolation::UnknownQuestion {
            key: key.to_owned(),
            method,
        }
        .into(),
    }
}

/// Runs the handlers for `requests` at once (see
/// [`Client::fulfil`](crate::Client::fulfil)).
pub(crate) async fn fulfil(
    handlers: &Handlers,
    requests: &InputRequests,
) -> Result<InputResponses, ClientError> {
    let futures = requests.iter().map(|(key, request)| async move {
        match answer(handlers, request).await {
            Ok(response) => Ok((key.clone(), response)),
            Err(why) => Err(abandon(key, why)),
        }
    });
    join_all(futures).await.into_iter().collect()
}
