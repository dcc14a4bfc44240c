//! The three MRTR-capable methods: `tools/call`, `prompts/get`, `resources/read`. Each
//! finds its target, says what its state is bound to, and runs one [`Round`]. Both eras
//! come here with a decoded [`Call`]; each renders the [`Outcome`].

use super::context::RequestEnv;
use super::core::Server;
use super::outcome::{Failure, Outcome};
use super::request::{CallParams, PromptParams, RawField, ReadParams, invalid};
use super::round::{BindArgs, FlowParams, Round, Subject};
use super::target::Target;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::RequestMeta;

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
    /// The method's name.
    pub(crate) fn method(&self) -> &'static str {
        match self {
            Self::Tool { .. } => "tools/call",
            Self::Prompt { .. } => "prompts/get",
            Self::Resource { .. } => "resources/read",
        }
    }

    /// What runs: the tool, prompt or resource.
    pub(crate) fn target(&self) -> Target<'_> {
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

impl Server {
    /// Runs one round of an MRTR-capable call. `None` when it was cancelled.
    pub(crate) async fn run_call(
        &self,
        id: RequestId,
        meta: Arc<RequestMeta>,
        call: Call<'_>,
        flow: FlowParams<'_>,
        env: RequestEnv,
    ) -> Option<Outcome> {
        match call {
            Call::Tool { name, arguments } => {
                self.call_tool(id, meta, &name, arguments, flow, env).await
            }
            Call::Prompt { name, arguments } => {
                self.get_prompt(id, meta, &name, arguments, flow, env).await
            }
            Call::Resource { uri } => self.read_resource(id, meta, &uri, flow, env).await,
        }
    }

    async fn call_tool(
        &self,
        id: RequestId,
        meta: Arc<RequestMeta>,
        name: &str,
        args: Option<&RawValue>,
        flow: FlowParams<'_>,
        env: RequestEnv,
    ) -> Option<Outcome> {
        let Some(tool) = self.inner.tools.get(name) else {
            let e = invalid(format!("Unknown tool: {name}"));
            return Some(Outcome::Failed(e.into()));
        };
        let mode = match super::tasks::mode(tool, &meta) {
            Ok(m) => m,
            Err(e) => return Some(Outcome::Failed(e.into())),
        };
        if let super::tasks::Mode::Task = mode {
            if let Err(e) = tool.handler.check(args) {
                let e = invalid(format!("Invalid arguments: {e}"));
                return Some(Outcome::Failed(e.into()));
            }
            let state = crate::state::FlowState::default();
            return Some(self.create_task(&env, &meta, &tool.name, args, state).await);
        }
        let mut subject = Subject::new("tools/call", tool.name.clone(), BindArgs::Tool(args));
        subject.single_use = tool.single_use;
        subject.unsolicited = tool.unsolicited;
        let handler = tool.handler.clone();
        let mut round = Round::new(self, id, meta, env, subject, flow);
        if let super::tasks::Mode::QuestionsThenTask = mode {
            round = round.before_task();
        }
        round
            .run(move |ctx| {
                handler
                    .call(ctx, args)
                    .map_err(|e| invalid(format!("Invalid arguments: {e}")))
            })
            .await
    }

    async fn get_prompt(
        &self,
        id: RequestId,
        meta: Arc<RequestMeta>,
        name: &str,
        args: BTreeMap<String, String>,
        flow: FlowParams<'_>,
        env: RequestEnv,
    ) -> Option<Outcome> {
        let Some(prompt) = self.inner.prompts.get(name) else {
            let e = invalid(format!("Unknown prompt: {name}"));
            return Some(Outcome::Failed(e.into()));
        };
        let subject = Subject::new("prompts/get", prompt.name.clone(), BindArgs::Prompt(&args));
        let handler = prompt.handler.clone();
        let owned = args.clone();
        Round::new(self, id, meta, env, subject, flow)
            .run(move |ctx| {
                handler
                    .call(ctx, owned)
                    .map_err(|e| invalid(format!("Invalid arguments: {e}")))
            })
            .await
    }

    async fn read_resource(
        &self,
        id: RequestId,
        meta: Arc<RequestMeta>,
        uri: &str,
        flow: FlowParams<'_>,
        env: RequestEnv,
    ) -> Option<Outcome> {
        let Some((entry, vars)) = self.find_resource(uri) else {
            return Some(Outcome::Failed(Failure::ResourceNotFound(uri.to_owned())));
        };
        let mut subject = Subject::new("resources/read", Arc::from(uri), BindArgs::Resource);
        subject.cache = entry.cache;
        let handler = entry.handler.clone();
        let mime = entry.mime.clone();
        let uri = uri.to_owned();
        Round::new(self, id, meta, env, subject, flow)
            .run(move |ctx| {
                handler
                    .call(ctx, uri, mime, vars)
                    .map_err(|e| invalid(format!("Invalid resource variables: {e}")))
            })
            .await
    }

    /// A static resource, or the first template that matches (with its variables).
    fn find_resource(
        &self,
        uri: &str,
    ) -> Option<(&super::core::ResourceEntry, BTreeMap<String, String>)> {
        if let Some(e) = self.inner.resources.get(uri) {
            return Some((e, BTreeMap::new()));
        }
        self.inner
            .templates
            .iter()
            .find_map(|t| t.parsed.matches(uri).map(|v| (&t.entry, v)))
    }
}
