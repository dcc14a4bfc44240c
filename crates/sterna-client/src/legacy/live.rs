//! A call to a 2025-11-25 server taken round by round
//! ([`Client::start`](crate::Client::start) and
//! [`resume`](crate::Client::resume)): the request stays open on the server while
//! the questions it pushed wait for answers here.
//!
//! Unlike a 2026-07-28 pending call, this one lives in this process only: the server holds
//! the request, so it cannot be serialized, resumed elsewhere, or resumed after the server
//! gave up waiting. Dropping it answers its open questions with `cancel` (elicitation) or
//! a refusal, and cancels the request (`notifications/cancelled`).

use super::push::{ClaimGuard, Dispatch, Pushed, question_default, response_value};
use super::session::Session;
use crate::error::{ClientError, TransportError};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use sterna_types::jsonrpc::RequestId;
use sterna_types::mrtr::{InputRequests, InputResponses};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// How long to wait for more questions after the first one of a round (a server pushes
/// the questions of one round together, but they arrive one by one).
const GATHER: Duration = Duration::from_millis(20);

/// A call in flight whose pushed questions surface as rounds.
pub(crate) struct Live {
    done: oneshot::Receiver<Result<Box<RawValue>, ClientError>>,
    pushes: mpsc::UnboundedReceiver<Pushed>,
    asked: BTreeMap<String, Pushed>,
    task: JoinHandle<()>,
    _claim: ClaimGuard,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("asked", &self.asked.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        // Dropping the request's future cancels it; the open questions' answer channels
        // drop with `asked`, and the dispatcher sends their defaults.
        self.task.abort();
    }
}

/// Where a live call stands.
pub(crate) enum Turn {
    /// The server answered the request.
    Done(Result<Box<RawValue>, ClientError>),
    /// The server asks these questions (keyed by the id of the request that asked).
    Asked(InputRequests),
}

/// The key of a question: its request id.
fn key_of(id: &RequestId) -> String {
    match id {
        RequestId::Number(n) => n.to_string(),
        RequestId::String(s) => s.clone(),
    }
}

impl Live {
    /// Sends the request; its pushed questions come to this call.
    pub(crate) fn start(
        session: Arc<Session>,
        dispatch: &Dispatch,
        method: String,
        params: Map<String, Value>,
    ) -> Self {
        let (guard, pushes) = dispatch.claim();
        let claim = guard.claim().clone();
        let (tx, done) = oneshot::channel();
        let task = tokio::spawn(async move {
            let sent = move |id: &RequestId| claim.sent(id);
            let r = session.request(&method, &params, &sent).await;
            let _ = tx.send(r);
        });
        Self {
            done,
            pushes,
            asked: BTreeMap::new(),
            task,
            _claim: guard,
        }
    }

    /// Waits for the next turn: the response, or the next questions.
    pub(crate) async fn next(&mut self) -> Turn {
        let first = tokio::select! {
            biased;
            r = &mut self.done => {
                return Turn::Done(r.unwrap_or(Err(TransportError::Closed.into())));
            }
            p = self.pushes.recv() => p,
        };
        let Some(first) = first else {
            let r = (&mut self.done).await;
            return Turn::Done(r.unwrap_or(Err(TransportError::Closed.into())));
        };
        self.ask(first);
        // The rest of the round, if it comes right behind.
        while let Ok(Some(p)) = tokio::time::timeout(GATHER, self.pushes.recv()).await {
            self.ask(p);
        }
        Turn::Asked(
            self.asked
                .iter()
                .map(|(k, p)| (k.clone(), p.question.clone()))
                .collect(),
        )
    }

    fn ask(&mut self, p: Pushed) {
        let mut key = key_of(&p.id);
        while self.asked.contains_key(&key) {
            key.push('\'');
        }
        self.asked.insert(key, p);
    }

    /// Sends the answers of the open questions (a question left out gets `cancel` or a
    /// refusal).
    pub(crate) fn answer(&mut self, mut answers: InputResponses) {
        for (key, pushed) in std::mem::take(&mut self.asked) {
            let reply = match answers.remove(&key) {
                Some(a) => Ok(response_value(&a)),
                None => question_default(&pushed.question),
            };
            let _ = pushed.reply.send(reply);
        }
    }
}

/// A call to a 2025-11-25 server between two rounds.
#[derive(Debug)]
pub(crate) enum Held {
    /// In flight: the server holds the request open while its pushed questions wait.
    Live(Live),
    /// Answered `-32042`: the URL elicitations to complete before sending it again.
    UrlRequired {
        list: Vec<super::url::Required>,
        error: sterna_types::error::ErrorObject,
        retries: u32,
    },
}
