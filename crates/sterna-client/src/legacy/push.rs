//! Requests a 2025-11-25 server pushes — `elicitation/create`, `sampling/createMessage`,
//! `roots/list`, `ping` — answered with the handlers that also answer MRTR questions, or
//! handed to a call in manual mode ([`Client::start`](crate::Client::start)),
//! whose [`resume`](crate::Client::resume) answers them.
//!
//! The wire rules of 2025-11-25: an elicitation mode the client did not declare gets
//! `-32602`; sampling or roots without a handler get `-32601`; a refused sampling gets
//! the user-rejection error `-1`; a refused roots request `-32603`.

use crate::answer::{Unanswered, answer, check_declared};
use crate::events::EventHub;
use crate::handlers::Handlers;
use crate::transport::{Inbound, Origin};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::RequestId;
use sterna_types::mrtr::{InputRequest, InputResponse};
use tokio::sync::{mpsc, oneshot};

/// The most pushed questions waiting for their answers at once; a server that pushes more
/// before the earlier ones are answered gets `-32603` for each one over.
pub(crate) const MAX_PUSHED_IN_FLIGHT: usize = 32;

/// The 2025-11-25 error code of a user who rejected a sampling request.
pub(crate) const USER_REJECTED: ErrorCode = ErrorCode(-1);

/// A pushed question waiting for its answer in manual mode.
#[derive(Debug)]
pub(crate) struct Pushed {
    /// The server's request id.
    pub(crate) id: RequestId,
    /// The question.
    pub(crate) question: InputRequest,
    /// Where the answer goes (dropped: a default refusal is sent).
    pub(crate) reply: oneshot::Sender<Result<Value, ErrorObject>>,
}

/// A call in manual mode that takes the pushes meant for it.
#[derive(Debug)]
pub(crate) struct Claim {
    /// The id its request went out with (the latest, when a session was renewed).
    call: Mutex<Option<RequestId>>,
    tx: mpsc::UnboundedSender<Pushed>,
}

impl Claim {
    /// The request went out with `id`.
    pub(crate) fn sent(&self, id: &RequestId) {
        *self.call.lock().unwrap_or_else(|p| p.into_inner()) = Some(id.clone());
    }

    fn is(&self, id: &RequestId) -> bool {
        self.call.lock().unwrap_or_else(|p| p.into_inner()).as_ref() == Some(id)
    }
}

struct Inner {
    handlers: Handlers,
    events: Arc<EventHub>,
    claims: Mutex<Vec<Arc<Claim>>>,
    /// One per pushed question being answered ([`MAX_PUSHED_IN_FLIGHT`]).
    in_flight: Arc<tokio::sync::Semaphore>,
}

/// Answers what a 2025-11-25 server pushes.
#[derive(Clone)]
pub(crate) struct Dispatch(Arc<Inner>);

impl std::fmt::Debug for Dispatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatch").finish()
    }
}

/// Unregisters a claim when its call ends.
#[derive(Debug)]
pub(crate) struct ClaimGuard {
    claim: Arc<Claim>,
    dispatch: Dispatch,
}

impl ClaimGuard {
    pub(crate) fn claim(&self) -> &Arc<Claim> {
        &self.claim
    }
}

impl Drop for ClaimGuard {
    fn drop(&mut self) {
        let mut claims = self
            .dispatch
            .0
            .claims
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        claims.retain(|c| !Arc::ptr_eq(c, &self.claim));
    }
}

impl Dispatch {
    pub(crate) fn new(handlers: Handlers, events: Arc<EventHub>) -> Self {
        Self(Arc::new(Inner {
            handlers,
            events,
            claims: Mutex::default(),
            in_flight: Arc::new(tokio::sync::Semaphore::new(MAX_PUSHED_IN_FLIGHT)),
        }))
    }

    /// Takes the pushes of a call from now on: those on its own response stream, and —
    /// for the earliest claim — those no stream ties to a call (stdio, the GET stream).
    pub(crate) fn claim(&self) -> (ClaimGuard, mpsc::UnboundedReceiver<Pushed>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let claim = Arc::new(Claim {
            call: Mutex::new(None),
            tx,
        });
        self.0
            .claims
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(claim.clone());
        let guard = ClaimGuard {
            claim,
            dispatch: self.clone(),
        };
        (guard, rx)
    }

    fn claimant(&self, origin: &Origin) -> Option<Arc<Claim>> {
        let claims = self.0.claims.lock().unwrap_or_else(|p| p.into_inner());
        match origin {
            Origin::Call(id) => claims.iter().find(|c| c.is(id)).cloned(),
            Origin::Unrelated => claims.first().cloned(),
        }
    }

    async fn respond(
        &self,
        id: RequestId,
        method: String,
        params: Option<Value>,
        origin: Origin,
    ) -> Vec<u8> {
        let outcome = match parse(&method, params) {
            Ok(None) => Ok(json!({})),
            Ok(Some(question)) => match self.0.in_flight.clone().try_acquire_owned() {
                Ok(_held) => self.answer_question(id.clone(), question, &origin).await,
                Err(_) => Err(ErrorObject::internal(format!(
                    "Too many requests from the server waiting for answers: at most {MAX_PUSHED_IN_FLIGHT} at once; this one was not put to the user"
                ))),
            },
            Err(e) => Err(e),
        };
        let message = match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        };
        serde_json::to_vec(&message).expect("responses serialize")
    }

    async fn answer_question(
        &self,
        id: RequestId,
        question: InputRequest,
        origin: &Origin,
    ) -> Result<Value, ErrorObject> {
        check_declared(&self.0.handlers, &question).map_err(|w| wire_error(&question, w))?;
        if let Some(claim) = self.claimant(origin) {
            let (reply, answer) = oneshot::channel();
            let kind = question_default(&question);
            let pushed = Pushed {
                id,
                question,
                reply,
            };
            if claim.tx.send(pushed).is_ok() {
                return answer.await.unwrap_or(kind);
            }
            return kind;
        }
        match answer(&self.0.handlers, &question).await {
            Ok(response) => Ok(response_value(&response)),
            Err(why) => Err(wire_error(&question, why)),
        }
    }
}

/// The answer sent for a pushed question left unanswered (its pending call was dropped
/// or resumed without it): `cancel` for an elicitation, a refusal otherwise.
pub(crate) fn question_default(question: &InputRequest) -> Result<Value, ErrorObject> {
    match question {
        InputRequest::Elicit(_) => Ok(json!({"action": "cancel"})),
        InputRequest::Sample(_) => Err(ErrorObject::new(
            USER_REJECTED,
            "User rejected sampling request",
        )),
        _ => Err(ErrorObject::internal("the client gave no answer")),
    }
}

/// An answer as the result of the pushed request.
pub(crate) fn response_value(response: &InputResponse) -> Value {
    serde_json::to_value(response).expect("answers serialize")
}

/// The question a request asks (`None` for `ping`).
fn parse(method: &str, params: Option<Value>) -> Result<Option<InputRequest>, ErrorObject> {
    if method == "ping" {
        return Ok(None);
    }
    let embedded = json!({"method": method, "params": params});
    match serde_json::from_value::<InputRequest>(embedded) {
        Ok(InputRequest::Unknown { .. }) => Err(ErrorObject::method_not_found(method)),
        Ok(q) => Ok(Some(q)),
        Err(e) => Err(ErrorObject::invalid_params(format!(
            "invalid {method} params: {e}"
        ))),
    }
}

/// Why a push got no answer, as the 2025-11-25 error.
fn wire_error(question: &InputRequest, why: Unanswered) -> ErrorObject {
    match (question, why) {
        (InputRequest::Elicit(_), Unanswered::Undeclared(kind)) => {
            ErrorObject::invalid_params(format!("this client did not declare {kind}"))
        }
        (InputRequest::Sample(p), Unanswered::Undeclared(_)) if p.uses_tools() => {
            ErrorObject::invalid_params("this client did not declare sampling with tools")
        }
        (_, Unanswered::Undeclared(_)) => ErrorObject::method_not_found(question.method()),
        (
            _,
            Unanswered::Refused {
                kind: "sampling",
                refusal,
            },
        ) => ErrorObject::new(
            USER_REJECTED,
            format!("User rejected sampling request: {refusal}"),
        ),
        (_, Unanswered::Refused { refusal, .. }) => ErrorObject::internal(refusal.to_string()),
        (_, Unanswered::Unknown(method)) => ErrorObject::method_not_found(&method),
    }
}

impl Inbound for Dispatch {
    fn answer(&self, message: Vec<u8>, origin: Origin) -> BoxFuture<'static, Vec<u8>> {
        let me = self.clone();
        Box::pin(async move {
            let request: Value = serde_json::from_slice(&message).unwrap_or_default();
            let id: RequestId =
                serde_json::from_value(request["id"].clone()).unwrap_or(RequestId::Number(0));
            let method = request["method"].as_str().unwrap_or_default().to_owned();
            let params = request.get("params").cloned();
            me.respond(id, method, params, origin).await
        })
    }

    fn notification(&self, message: &[u8]) {
        self.0.events.deliver(message);
    }
}
