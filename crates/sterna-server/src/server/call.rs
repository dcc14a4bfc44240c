//! The three MRTR-capable methods: `tools/call`, `prompts/get`, `resources/read`. Each
//! finds its target, says what its state is bound to, and runs one [`Round`]. Both eras
//! come here with a decoded [`Call`]; each renders the [`Outcome`].

use super::context::RequestEnv;
use super::core::Server;
use super::flow::FlowParams;
use super::handler::Produced;
use super::outcome::{Completed, Failure, Outcome, Payload};
use super::request::{CallParams, PromptParams, RawField, ReadParams, invalid};
use super::round::{BindArgs, Resolved, Round, Subject};
use super::wing::{TakeCall, ToolPlan};
use crate::definition::ArgsError;
use crate::state::FlowState;
use futures_util::future::{BoxFuture, Either, ready};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::RequestMeta;
use sterna_types::tools::CallToolResult;

/// An MRTR-capable request, decoded: what runs.
pub(crate) enum Call<'a> {
    /// `tools/call` of `name` (arguments absent or `null` read as none).
    Tool {
        name: Cow<'a, str>,
        arguments: Option<&'a RawValue>,
    },
    /// `prompts/get` of `name`.
    Prompt {
        name: Cow<'a, str>,
        arguments: BTreeMap<String, String>,
    },
    /// `resources/read` of `uri`.
    Resource { uri: Cow<'a, str> },
}

impl Call<'_> {
    #[cfg(feature = "legacy")]
    /// The method's name.
    pub(crate) fn method(&self) -> &'static str {
        match self {
            Self::Tool { .. } => "tools/call",
            Self::Prompt { .. } => "prompts/get",
            Self::Resource { .. } => "resources/read",
        }
    }

    #[cfg(feature = "legacy")]
    /// What runs: the tool, prompt or resource.
    pub(crate) fn target(&self) -> super::target::Target<'_> {
        use super::target::Target;
        match self {
            Self::Tool { name, .. } => Target::Tool(name),
            Self::Prompt { name, .. } => Target::Prompt(name),
            Self::Resource { uri } => Target::Resource(uri),
        }
    }
}

/// Tool arguments as a handler gets them: `null` reads as absent.
pub(crate) fn arguments<'a>(raw: &RawField<'a>) -> Option<&'a RawValue> {
    match *raw {
        RawField::Present(a) if a.get().trim() != "null" => Some(a),
        _ => None,
    }
}

/// The call and its flow, as a 2026-07-28 `tools/call` carries them.
pub(crate) fn tool_call(p: CallParams<'_>) -> (Call<'_>, FlowParams<'_>) {
    let arguments = arguments(&p.arguments);
    let flow = FlowParams::sealed(p.input_responses, p.request_state);
    (
        Call::Tool {
            name: p.name,
            arguments,
        },
        flow,
    )
}

/// The call and its flow, as a 2026-07-28 `prompts/get` carries them.
pub(crate) fn prompt_call(p: PromptParams<'_>) -> (Call<'_>, FlowParams<'_>) {
    let flow = FlowParams::sealed(p.input_responses, p.request_state);
    let arguments = p.arguments.unwrap_or_default();
    (
        Call::Prompt {
            name: p.name,
            arguments,
        },
        flow,
    )
}

/// The call and its flow, as a 2026-07-28 `resources/read` carries them.
pub(crate) fn read_call(p: ReadParams<'_>) -> (Call<'_>, FlowParams<'_>) {
    let flow = FlowParams::sealed(p.input_responses, p.request_state);
    (
        Call::Resource {
            uri: Cow::Owned(p.uri),
        },
        flow,
    )
}

/// Runs one round of an MRTR-capable call. `None` when it was cancelled.
pub(crate) fn run<'a>(
    server: &'a Server,
    id: RequestId,
    meta: Arc<RequestMeta>,
    call: Call<'a>,
    flow: FlowParams<'a>,
    env: Arc<RequestEnv>,
) -> impl Future<Output = Option<Outcome>> + Send + 'a {
    let cx = Cx {
        server,
        id,
        meta,
        env,
    };
    // Chosen here, not in an async block, which would keep the call's parts twice. The
    // rarer two are boxed, so that a `tools/call`'s future is no larger than its own.
    match call {
        Call::Tool { name, arguments } => Either::Left(call_tool(cx, name, arguments, flow)),
        Call::Prompt { name, arguments } => {
            Either::Right(Box::pin(get_prompt(cx, name, arguments, flow)) as BoxFuture<'a, _>)
        }
        Call::Resource { uri } => {
            Either::Right(Box::pin(read_resource(cx, uri, flow)) as BoxFuture<'a, _>)
        }
    }
}

/// What every call runs with.
struct Cx<'s> {
    server: &'s Server,
    id: RequestId,
    meta: Arc<RequestMeta>,
    env: Arc<RequestEnv>,
}

fn failed(e: ErrorObject) -> Option<Outcome> {
    Some(Outcome::Failed(e.into()))
}

/// A `tools/call`: the round's own future on the common path (nothing around it, so
/// nothing kept twice); a boxed one where a wing takes the call or the request fails
/// before it runs.
fn call_tool<'a>(
    cx: Cx<'a>,
    name: Cow<'a, str>,
    args: Option<&'a RawValue>,
    flow: FlowParams<'a>,
) -> Either<BoxFuture<'a, Option<Outcome>>, impl Future<Output = Option<Outcome>> + Send + 'a> {
    let done = |outcome| Either::Left(Box::pin(ready(outcome)) as BoxFuture<'a, _>);
    let Some(tool) = cx.server.tool(&name) else {
        return done(failed(invalid(format!("Unknown tool: {name}"))));
    };
    let plan = match cx.server.wings().plan_tool_call(tool, &cx.meta) {
        Ok(p) => p,
        Err(e) => return done(failed(e)),
    };
    if let Some((ToolPlan::Take, wing)) = plan {
        if let Err(e) = tool.handler.check(args) {
            return done(Some(match unfit_arguments(e) {
                Ok(result) => Outcome::Complete(Completed::new(Payload::Tool(result))),
                Err(e) => Outcome::Failed(e.into()),
            }));
        }
        return Either::Left(Box::pin(async move {
            let take = TakeCall {
                env: &cx.env,
                meta: &cx.meta,
                tool,
                args,
                answers: FlowState::default(),
            };
            Some(wing.take_tool_call(cx.server, take).await)
        }));
    }
    let mut subject = Subject::new("tools/call", tool.name.clone(), BindArgs::Tool(args));
    subject.single_use = tool.single_use;
    subject.unsolicited = tool.unsolicited;
    let handler = tool.handler.clone();
    let start = move |ctx| match handler.call(ctx, args) {
        Ok(running) => Ok(running),
        Err(e) => unfit_arguments(e).map(|r| ready_result(Produced::Complete(r))),
    };
    let Some((ToolPlan::AskThenTake, wing)) = plan else {
        let round = Round::new(cx.server, cx.id, cx.meta, cx.env, subject, flow);
        return Either::Right(round.run(start));
    };
    // Kept for the wing that takes over once the declared questions are answered.
    let (server, env, meta) = (cx.server, cx.env.clone(), cx.meta.clone());
    let round = Round::new(server, cx.id, cx.meta, cx.env, subject, flow);
    Either::Left(Box::pin(async move {
        match round.resolve_declared(start).await? {
            Resolved::Asked(outcome) => Some(outcome),
            Resolved::Answered(answers) => {
                let take = TakeCall {
                    env: &env,
                    meta: &meta,
                    tool,
                    args,
                    answers,
                };
                Some(wing.take_tool_call(server, take).await)
            }
        }
    }))
}

/// Arguments a tool cannot take. Those that do not decode into its type are a tool
/// execution error the model can read and correct (SEP-1303, 2025-11-25 on): an `isError`
/// result. Arguments that are no object fail the request's own schema: `-32602`.
fn unfit_arguments(e: ArgsError) -> Result<CallToolResult, ErrorObject> {
    match e {
        ArgsError::Decode(e) => Ok(CallToolResult::error(format!("Invalid arguments: {e}"))),
        other => Err(invalid(format!("Invalid arguments: {other}"))),
    }
}

fn ready_result(p: Produced<CallToolResult>) -> BoxFuture<'static, Produced<CallToolResult>> {
    Box::pin(std::future::ready(p))
}

#[allow(
    clippy::manual_async_fn,
    reason = "an `async fn` keeps each argument twice in its future (once as passed, once moved)"
)]
fn get_prompt<'a>(
    cx: Cx<'a>,
    name: Cow<'a, str>,
    args: BTreeMap<String, String>,
    flow: FlowParams<'a>,
) -> impl Future<Output = Option<Outcome>> + Send + 'a {
    async move {
        let Some(prompt) = cx.server.prompt(&name) else {
            return failed(invalid(format!("Unknown prompt: {name}")));
        };
        let subject = Subject::new("prompts/get", prompt.name.clone(), BindArgs::Prompt(&args));
        let handler = prompt.handler.clone();
        let owned = args.clone();
        Round::new(cx.server, cx.id, cx.meta, cx.env, subject, flow)
            .run(move |ctx| {
                handler
                    .call(ctx, owned)
                    .map_err(|e| invalid(format!("Invalid arguments: {e}")))
            })
            .await
    }
}

#[allow(
    clippy::manual_async_fn,
    reason = "an `async fn` keeps each argument twice in its future (once as passed, once moved)"
)]
fn read_resource<'a>(
    cx: Cx<'a>,
    uri: Cow<'a, str>,
    flow: FlowParams<'a>,
) -> impl Future<Output = Option<Outcome>> + Send + 'a {
    async move {
        let uri = &*uri;
        let Some((entry, vars)) = cx.server.resource(uri) else {
            return Some(wing_resource(cx.server, uri).await);
        };
        let mut subject = Subject::new("resources/read", Arc::from(uri), BindArgs::Resource);
        subject.cache = entry.cache;
        let handler = entry.handler.clone();
        let mime = entry.mime.clone();
        let uri = uri.to_owned();
        Round::new(cx.server, cx.id, cx.meta, cx.env, subject, flow)
            .run(move |ctx| {
                handler
                    .call(ctx, uri, mime, vars)
                    .map_err(|e| invalid(format!("Invalid resource variables: {e}")))
            })
            .await
    }
}

/// A resource no registration serves: a wing's, or not found.
async fn wing_resource(server: &Server, uri: &str) -> Outcome {
    let Some(read) = server.wings().read_resource(uri) else {
        return Outcome::Failed(Failure::ResourceNotFound(uri.to_owned()));
    };
    match read.await {
        Ok(r) => Outcome::Complete(Completed {
            payload: Payload::Resource(r),
            cache: Some(server.cache()),
        }),
        Err(f) => Outcome::Failed(f),
    }
}
