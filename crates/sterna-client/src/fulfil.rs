//! Answering a round's questions with the handlers the client registered.

use super::answer::{Unanswered, answer};
use super::driver::Client;
use super::error::{ClientError, ProtocolViolation};
use futures_util::future::join_all;
use sterna_types::mrtr::InputResponses;

fn abandon(key: &str, why: Unanswered) -> ClientError {
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

impl Client {
    /// Answers a round's questions with the registered handlers, all at once. A refused
    /// sampling or roots request abandons the call; a question this client never declared
    /// it could answer is a protocol violation. An accepted form is completed with the
    /// schema's `default`s for the fields the handler left out.
    pub async fn fulfil(
        &self,
        requests: &sterna_types::mrtr::InputRequests,
    ) -> Result<InputResponses, ClientError> {
        let h = &self.inner.handlers;
        let futures = requests.iter().map(|(key, request)| async move {
            match answer(h, request).await {
                Ok(response) => Ok((key.clone(), response)),
                Err(why) => Err(abandon(key, why)),
            }
        });
        join_all(futures).await.into_iter().collect()
    }
}
