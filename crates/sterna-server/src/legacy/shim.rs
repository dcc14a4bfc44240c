//! The same handlers, served to a 2025 client: when a round ends with questions, they go
//! out as real requests on the originating request's stream, and the handler is entered
//! again with the answers and the state of the last round — kept here, in the session's
//! memory, never sealed — until it completes.

use super::Legacy;
use super::pushes::PushFailure;
use super::render;
use super::session::LegacySession;
use crate::mrtr::{FormView, Inquiry};
use crate::server::call::{Call, run};
use crate::server::context::EraSide;
use crate::server::context::RequestEnv;
use crate::server::flow::{Answers, FlowParams, Held, StateIn};
use crate::server::outcome::{Asked, Continuation, Outcome};
use crate::server::request::RawField;
use crate::server::response::Response;
#[cfg(feature = "http")]
use crate::server::target::Target;
use futures_util::future::{BoxFuture, Either, try_join_all};
use serde::Serialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use sterna_types::elicitation::ElicitRequestParams;
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::RequestMeta;
use sterna_types::mrtr::InputRequest;

/// Bounds of the push loop.
#[derive(Debug, Clone, Copy)]
pub struct LegacyLimits {
    /// Rounds before giving up (default 8).
    pub max_rounds: u32,
    /// How long one round's pushes may wait for their answers (default 10 minutes).
    pub leg_timeout: Duration,
    /// The pause before re-entering after a round that asked nothing, only carried state
    /// (default 250 ms).
    pub state_only_pause: Duration,
}

impl Default for LegacyLimits {
    fn default() -> Self {
        Self {
            max_rounds: 8,
            leg_timeout: Duration::from_secs(600),
            state_only_pause: Duration::from_millis(250),
        }
    }
}

/// An MRTR-capable request of a legacy session, decoded and owned (it outlives the
/// bytes: a session's request runs on a task of its own).
#[derive(Debug, Clone)]
pub(crate) enum LegacyCall {
    Tool {
        name: String,
        arguments: Option<Box<RawValue>>,
    },
    Prompt {
        name: String,
        arguments: Option<BTreeMap<String, String>>,
    },
    Resource {
        uri: String,
    },
}

impl LegacyCall {
    #[cfg(feature = "http")]
    /// The JSON-RPC method of the call.
    pub(crate) fn method(&self) -> &'static str {
        self.as_call().method()
    }

    /// The call as the core runs it.
    fn as_call(&self) -> Call<'_> {
        match self {
            Self::Tool { name, arguments } => Call::Tool {
                name: Cow::Borrowed(name),
                arguments: arguments.as_deref(),
            },
            Self::Prompt { name, arguments } => Call::Prompt {
                name: Cow::Borrowed(name),
                arguments: arguments.clone().unwrap_or_default(),
            },
            Self::Resource { uri } => Call::Resource {
                uri: Cow::Borrowed(uri),
            },
        }
    }

    #[cfg(feature = "http")]
    /// What the push loop will run.
    pub(crate) fn target(&self) -> Target<'_> {
        match self {
            Self::Tool { name, .. } => Target::Tool(name),
            Self::Prompt { name, .. } => Target::Prompt(name),
            Self::Resource { uri } => Target::Resource(uri),
        }
    }
}

/// The `elicitationId`s a legacy flow issued for its URL questions, by question key: the
/// 2025 wire needs one, and `notifications/elicitation/complete` names it.
#[derive(Debug, Default)]
pub(crate) struct UrlIds(std::sync::Mutex<std::collections::HashMap<String, String>>);

impl UrlIds {
    fn id_for(&self, key: &str) -> String {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.entry(key.to_owned())
            .or_insert_with(|| format!("{key}-{}", crate::state::random_id::<16>()))
            .clone()
    }

    /// The id issued for the URL question under `key`, if any.
    fn get(&self, key: &str) -> Option<String> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.get(key).cloned()
    }
}

impl EraSide for UrlIds {
    /// `notifications/elicitation/complete` with the `elicitationId` issued for `key`.
    fn url_elicitation_complete(&self, key: &str) -> Option<Vec<u8>> {
        let Some(id) = self.get(key) else {
            tracing::debug!(
                key,
                "complete_url_elicitation: no URL question under this key"
            );
            return None;
        };
        let note = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/elicitation/complete",
            "params": { "elicitationId": id },
        });
        Some(serde_json::to_vec(&note).expect("notifications serialize"))
    }
}

impl Legacy<'_> {
    /// Runs a `tools/call`, `prompts/get` or `resources/read` of a legacy session to the
    /// end, pushing each round's questions. `None` when it was cancelled. An async block,
    /// not an `async fn` (which keeps each argument twice in its future), and each round's
    /// state is moved into the round, not copied out of a slot that stays behind.
    #[allow(
        clippy::manual_async_fn,
        reason = "an `async fn` keeps each argument twice in its future (once as passed, once moved)"
    )]
    pub(crate) fn drive<'s>(
        &'s self,
        session: &'s LegacySession,
        id: RequestId,
        call: LegacyCall,
        meta: Arc<RequestMeta>,
        env: RequestEnv,
    ) -> impl Future<Output = Option<Response>> + Send + 's {
        let tool = matches!(call, LegacyCall::Tool { .. });
        let urls = Arc::new(UrlIds::default());
        // Shared by the rounds, not copied into each.
        let env = Arc::new(env.era(urls.clone()));
        async move {
            let limits = &self.wing.limits;
            let mut state: Option<Box<Held>> = None;
            for _ in 0..limits.max_rounds {
                let flow = FlowParams {
                    input_responses: RawField::Absent,
                    state: state.map(StateIn::Held),
                    hold: true,
                };
                let Asked { requests, next } = match self
                    .round(&call, id.clone(), meta.clone(), flow, &env)
                    .await?
                {
                    Outcome::InputRequired(asked) => asked,
                    done => return Some(finish(tool, id, done)),
                };
                let Continuation::Held(next) = next else {
                    tracing::error!("a legacy round sealed its state");
                    return Some(Response::error(
                        Some(id),
                        ErrorObject::internal("Internal error"),
                    ));
                };
                if requests.is_empty() {
                    state = Some(Box::new(Held {
                        flow: *next,
                        answers: Answers::default(),
                    }));
                    tokio::time::sleep(limits.state_only_pause).await;
                    continue;
                }
                let pushed = push_all(session, &env, &urls, requests, limits.leg_timeout);
                let answers = match Box::pin(pushed).await {
                    Ok(a) => a,
                    Err(PushFailure::Cancelled) => return None,
                    Err(f) => return Some(render::cannot_go_on(tool, id, pushed_failure(&f))),
                };
                state = Some(Box::new(Held {
                    flow: *next,
                    answers,
                }));
            }
            let msg = format!("gave up after {} rounds of questions", limits.max_rounds);
            Some(render::cannot_go_on(tool, id, msg))
        }
    }

    /// One round through the same method code as 2026-07-28 requests, in a request span
    /// of its own (the flow id links the rounds): the round's future itself, boxed only
    /// when traced.
    fn round<'s>(
        &'s self,
        call: &'s LegacyCall,
        id: RequestId,
        meta: Arc<RequestMeta>,
        flow: FlowParams<'s>,
        env: &Arc<RequestEnv>,
    ) -> Either<impl Future<Output = Option<Outcome>> + Send + 's, BoxFuture<'s, Option<Outcome>>>
    {
        let call = call.as_call();
        let span = crate::trace::request_span(call.method(), call.target().name(), &meta);
        if span.is_disabled() {
            return Either::Left(run(self.server, id, meta, call, flow, env.clone()));
        }
        let mut traced = RequestEnv::clone(env);
        traced.span = crate::trace::RequestSpan(span.clone());
        let round = Box::pin(run(self.server, id, meta, call, flow, Arc::new(traced)));
        Either::Right(Box::pin(crate::trace::traced(span, round)))
    }
}

/// A finished round, as the legacy client gets it: a question the session cannot answer
/// (no capability) is a failure of the family, never a 2026 error code.
fn finish(tool: bool, id: RequestId, outcome: Outcome) -> Response {
    match outcome {
        Outcome::Failed(crate::server::outcome::Failure::Rpc(e))
            if e.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY =>
        {
            let msg = format!("{} (declared at initialize)", e.message);
            render::cannot_go_on(tool, id, msg)
        }
        done => render::outcome(id, done),
    }
}

fn pushed_failure(f: &PushFailure) -> String {
    match f {
        PushFailure::TimedOut => "the client did not answer in time".to_owned(),
        PushFailure::Cancelled => "cancelled".to_owned(),
        PushFailure::Refused(e) => format!("the client refused: {}", e.message),
    }
}

/// Pushes a round's questions at once and gathers the answers, keyed as asked. The first
/// failure abandons the others.
async fn push_all(
    session: &LegacySession,
    env: &RequestEnv,
    urls: &UrlIds,
    requests: BTreeMap<String, Inquiry>,
    within: Duration,
) -> Result<Answers, PushFailure> {
    let Some(out) = env.notifier.as_ref() else {
        let e = ErrorObject::internal("this request has no stream to push questions on");
        return Err(PushFailure::Refused(e));
    };
    let leg = |(key, request): (String, Inquiry)| async move {
        let params = push_params(session, urls, &key, &request);
        let answer = session
            .pushes
            .ask(out, request.method(), params.as_ref(), within, &env.cancel)
            .await?;
        Ok::<_, PushFailure>((key, answer))
    };
    // Each answer goes on as the client wrote it (the round checks it), keyed as asked.
    let mut requests = requests.into_iter();
    if requests.len() == 1 {
        // The usual round: one question, awaited as it is (no join, no list of legs).
        let only = requests.next().expect("one question");
        return Ok(Answers::from([leg(only).await?]));
    }
    Ok(try_join_all(requests.map(leg)).await?.into_iter().collect())
}

/// A URL elicitation as 2025-11-25 sends it: with the `elicitationId` sterna issued.
#[derive(Serialize)]
struct UrlElicitation<'a> {
    mode: &'static str,
    message: &'a str,
    url: &'a str,
    #[serde(rename = "elicitationId")]
    elicitation_id: String,
}

/// The params of a pushed request, written straight into the request (no copy of their own).
#[derive(Serialize)]
#[serde(untagged)]
enum PushParams<'a> {
    Url(UrlElicitation<'a>),
    /// A form: without `mode` for a client older than 2025-11-25 (it knew no other).
    Form(FormView<'a>),
    Elicit(&'a ElicitRequestParams),
    Sample(&'a sterna_types::sampling::CreateMessageRequestParams),
    Roots(&'a sterna_types::roots::ListRootsParams),
    Other(&'a serde_json::Value),
}

/// A question as the params of a 2025 request: URL elicitations get an `elicitationId`;
/// form elicitations lose `mode` before 2025-11-25 (they knew no other).
fn push_params<'a>(
    session: &LegacySession,
    urls: &UrlIds,
    key: &str,
    request: &'a Inquiry,
) -> Option<PushParams<'a>> {
    let with_mode = sterna_types::legacy::at_least_2025_11_25(session.version);
    if let Some(form) = request.form(with_mode) {
        return Some(PushParams::Form(form));
    }
    let Inquiry::Built(request) = request else {
        return None;
    };
    Some(match &**request {
        InputRequest::Elicit(ElicitRequestParams::Url(u)) => PushParams::Url(UrlElicitation {
            mode: "url",
            message: &u.message,
            url: &u.url,
            elicitation_id: urls.id_for(key),
        }),
        InputRequest::Elicit(e) => PushParams::Elicit(e),
        InputRequest::Sample(s) => PushParams::Sample(s),
        InputRequest::ListRoots(r) => PushParams::Roots(r.as_ref()?),
        InputRequest::Unknown { params: p, .. } => PushParams::Other(p.as_ref()?),
    })
}
