//! Answering a round's questions with the handlers the client registered.

use super::driver::Client;
use super::error::{ClientError, ProtocolViolation};
use futures_util::future::join_all;
use sterna_types::elicitation::ElicitRequestParams;
use sterna_types::mrtr::{InputRequest, InputResponse, InputResponses};
use sterna_types::roots::ListRootsResult;

fn undeclared(key: &str, kind: &'static str) -> ClientError {
    ProtocolViolation::Undeclared {
        key: key.to_owned(),
        kind,
    }
    .into()
}

impl Client {
    /// Answers a round's questions with the registered handlers, all at once. A refused
    /// sampling or roots request abandons the call; a question this client never declared
    /// it could answer is a protocol violation.
    pub async fn fulfil(
        &self,
        requests: &sterna_types::mrtr::InputRequests,
    ) -> Result<InputResponses, ClientError> {
        let h = &self.inner.handlers;
        let futures = requests.iter().map(|(key, request)| async move {
            let response = match request {
                InputRequest::Elicit(ElicitRequestParams::Form(form)) => match &h.form {
                    Some(f) => InputResponse::Elicit(f.elicit(form.clone()).await),
                    None => return Err(undeclared(key, "form elicitation")),
                },
                InputRequest::Elicit(ElicitRequestParams::Url(u)) => match &h.url {
                    Some(f) => InputResponse::Elicit(f.elicit_url(u.clone()).await),
                    None => return Err(undeclared(key, "URL elicitation")),
                },
                InputRequest::Sample(p) => match &h.sampling {
                    Some(f) if !p.uses_tools() || h.sampling_tools => InputResponse::Sample(
                        f.sample(p.clone()).await.map_err(ClientError::Refused)?,
                    ),
                    _ => return Err(undeclared(key, "sampling")),
                },
                InputRequest::ListRoots(_) => match &h.roots {
                    Some(f) => InputResponse::ListRoots(ListRootsResult {
                        roots: f.roots().await.map_err(ClientError::Refused)?,
                    }),
                    None => return Err(undeclared(key, "roots")),
                },
                InputRequest::Unknown { method, .. } => {
                    return Err(ProtocolViolation::UnknownQuestion {
                        key: key.clone(),
                        method: method.clone(),
                    }
                    .into());
                }
            };
            Ok((key.clone(), response))
        });
        join_all(futures).await.into_iter().collect()
    }
}
