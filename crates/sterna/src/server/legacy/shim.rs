//! The same handlers, served to a 2025 client: when a round ends with questions, they go
//! out as real requests on the originating request's stream, and the handler is entered
//! again with the answers and the (verified) state, until it completes.

use super::super::context::RequestEnv;
use super::super::core::Server;
use super::super::request::{CallParams, PromptParams, RawField, ReadParams};
use super::super::response::Response;
use super::super::target::Target;
use super::pushes::PushFailure;
use super::render;
use super::session::LegacySession;
use futures_util::future::try_join_all;
use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::RequestMeta;
use sterna_types::mrtr::{InputRequest, InputRequiredResult};

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

/// An MRTR-capable request of a legacy session, decoded.
pub(crate) enum Call {
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

impl Call {
    fn method(&self) -> &'static str {
        match self {
            Self::Tool { .. } => "tools/call",
            Self::Prompt { .. } => "prompts/get",
            Self::Resource { .. } => "resources/read",
        }
    }

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
            .or_insert_with(|| format!("{key}-{}", crate::state::random_id()))
            .clone()
    }

    /// The id issued for the URL question under `key`, if any.
    pub(crate) fn get(&self, key: &str) -> Option<String> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.get(key).cloned()
    }
}

/// What one round ended with.
enum Leg {
    /// The answer (a result or an error).
    Done(Response),
    /// Questions to push (maybe none: a state-only round) and the state to echo.
    Ask {
        requests: BTreeMap<String, InputRequest>,
        state: Option<String>,
    },
}

impl Leg {
    fn of(r: Response) -> Self {
        let Ok(raw) = &r.body else {
            return Leg::Done(r);
        };
        if !raw.get().contains(r#""resultType":"input_required""#) {
            return Leg::Done(r);
        }
        match serde_json::from_str::<InputRequiredResult>(raw.get()) {
            Ok(ir) => Leg::Ask {
                requests: ir.input_requests.unwrap_or_default(),
                state: ir.request_state,
            },
            Err(_) => Leg::Done(r),
        }
    }
}

impl Server {
    /// Runs a `tools/call`, `prompts/get` or `resources/read` of a legacy session to the
    /// end, pushing each round's questions. `None` when it was cancelled.
    pub(crate) async fn drive_legacy(
        &self,
        session: &LegacySession,
        id: RequestId,
        call: Call,
        meta: Arc<RequestMeta>,
        env: RequestEnv,
    ) -> Option<Response> {
        let limits = self.inner.legacy;
        let tool = matches!(call, Call::Tool { .. });
        let mut answers: Option<Box<RawValue>> = None;
        let mut state: Option<String> = None;
        let urls = Arc::new(UrlIds::default());
        let env = env.legacy_urls(urls.clone());
        for _ in 0..limits.max_rounds {
            let r = self
                .legacy_round(
                    &call,
                    id.clone(),
                    meta.clone(),
                    answers.take(),
                    state.take(),
                    env.clone(),
                )
                .await?;
            let (requests, next) = match Leg::of(r) {
                Leg::Done(r) => return Some(finish(tool, r)),
                Leg::Ask { requests, state } => (requests, state),
            };
            state = next;
            if requests.is_empty() {
                tokio::time::sleep(limits.state_only_pause).await;
                continue;
            }
            match push_all(session, &env, &urls, requests, limits.leg_timeout).await {
                Ok(a) => answers = Some(a),
                Err(PushFailure::Cancelled) => return None,
                Err(f) => return Some(render::failure(tool, id, pushed_failure(&f))),
            }
        }
        let msg = format!("gave up after {} rounds of questions", limits.max_rounds);
        Some(render::failure(tool, id, msg))
    }

    /// One round through the same method code as 2026-07-28 requests, in a request span
    /// of its own (the flow id links the rounds).
    async fn legacy_round(
        &self,
        call: &Call,
        id: RequestId,
        meta: Arc<RequestMeta>,
        answers: Option<Box<RawValue>>,
        request_state: Option<String>,
        mut env: RequestEnv,
    ) -> Option<Response> {
        let span = crate::trace::request_span(call.method(), call.target().name(), &meta);
        if span.is_disabled() {
            return self
                .method_round(call, id, meta, answers, request_state, env)
                .await;
        }
        env.span = crate::trace::RequestSpan(span.clone());
        let round = self.method_round(call, id, meta, answers, request_state, env);
        crate::trace::traced(span, round).await
    }

    async fn method_round(
        &self,
        call: &Call,
        id: RequestId,
        meta: Arc<RequestMeta>,
        answers: Option<Box<RawValue>>,
        request_state: Option<String>,
        env: RequestEnv,
    ) -> Option<Response> {
        let input_responses = match &answers {
            Some(a) => RawField::Present(a),
            None => RawField::Absent,
        };
        match call {
            Call::Tool { name, arguments } => {
                let arguments = match arguments {
                    Some(a) => RawField::Present(a),
                    None => RawField::Absent,
                };
                let p = CallParams {
                    meta: None,
                    name: Cow::Borrowed(name),
                    arguments,
                    input_responses,
                    request_state,
                };
                Box::pin(self.call_tool(id, meta, p, env)).await
            }
            Call::Prompt { name, arguments } => {
                let p = PromptParams {
                    meta: None,
                    name: Cow::Borrowed(name),
                    arguments: arguments.clone(),
                    input_responses,
                    request_state,
                };
                Box::pin(self.get_prompt(id, meta, p, env)).await
            }
            Call::Resource { uri } => {
                let p = ReadParams {
                    meta: None,
                    uri: uri.clone(),
                    input_responses,
                    request_state,
                };
                Box::pin(self.read_resource(id, meta, p, env)).await
            }
        }
    }
}

/// A finished round, as the legacy client gets it: a question the session cannot answer
/// (no capability) is a failure of the family, never a 2026 error code.
fn finish(tool: bool, r: Response) -> Response {
    match &r.body {
        Err(e) if e.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY => {
            let msg = format!("{} (declared at initialize)", e.message);
            let id = r.id.clone().unwrap_or(RequestId::Number(0));
            render::failure(tool, id, msg)
        }
        _ => render::response(r),
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
    requests: BTreeMap<String, InputRequest>,
    within: Duration,
) -> Result<Box<RawValue>, PushFailure> {
    let Some(out) = env.notifier.as_ref() else {
        let e = ErrorObject::internal("this request has no stream to push questions on");
        return Err(PushFailure::Refused(e));
    };
    let legs = requests.into_iter().map(|(key, request)| async move {
        let (method, params) = legacy_request(session, urls, &key, request);
        let answer = session
            .pushes
            .ask(out, &method, params.as_deref(), within, &env.cancel)
            .await?;
        Ok::<_, PushFailure>((key, answer))
    });
    let answers: Map<String, Value> = try_join_all(legs).await?.into_iter().collect();
    Ok(to_raw_value(&answers).expect("answers serialize"))
}

/// A question as a 2025 request: URL elicitations get an `elicitationId`; form
/// elicitations lose `mode` before 2025-11-25. The members stay raw JSON: through a
/// `Value` (which sorts keys) a form's fields would reach the client out of order.
fn legacy_request(
    session: &LegacySession,
    urls: &UrlIds,
    key: &str,
    request: InputRequest,
) -> (String, Option<Box<RawValue>>) {
    #[derive(serde::Deserialize)]
    struct Wire {
        #[serde(default)]
        params: Option<BTreeMap<String, Box<RawValue>>>,
    }
    let method = request.method().to_owned();
    let wire = serde_json::to_string(&request).expect("questions serialize");
    let mut params = serde_json::from_str::<Wire>(&wire)
        .expect("a serialized question reads back")
        .params;
    if let Some(p) = params.as_mut() {
        match p.get("mode").map(|m| m.get()) {
            Some(r#""url""#) => {
                let id = to_raw_value(&urls.id_for(key)).expect("strings serialize");
                p.insert("elicitationId".into(), id);
            }
            Some(_) if !sterna_types::legacy::at_least_2025_11_25(session.version) => {
                p.remove("mode");
            }
            _ => {}
        }
    }
    let params = params.map(|p| to_raw_value(&p).expect("params serialize"));
    (method, params)
}
