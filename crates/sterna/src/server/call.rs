//! The three MRTR-capable methods: `tools/call`, `prompts/get`, `resources/read`. Each
//! finds its target, says what its state is bound to, and runs one [`Round`].

use super::context::RequestEnv;
use super::core::Server;
use super::request::{CallParams, PromptParams, RawField, ReadParams, invalid};
use super::response::Response;
use super::round::{BindArgs, FlowParams, Round, Subject};
use std::collections::BTreeMap;
use std::sync::Arc;
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::RequestMeta;

impl Server {
    pub(crate) async fn call_tool(
        &self,
        id: RequestId,
        meta: Arc<RequestMeta>,
        p: CallParams<'_>,
        env: RequestEnv,
    ) -> Option<Response> {
        let Some(tool) = self.inner.tools.get(p.name.as_ref()) else {
            let e = invalid(format!("Unknown tool: {}", p.name));
            return Some(Response::error(Some(id), e));
        };
        let args = match p.arguments {
            RawField::Present(a) if a.get().trim() != "null" => Some(a),
            _ => None,
        };
        let mode = match super::tasks::mode(tool, &meta) {
            Ok(m) => m,
            Err(e) => return Some(Response::error(Some(id), e)),
        };
        if let super::tasks::Mode::Task = mode {
            if let Err(e) = tool.handler.check(args) {
                let e = invalid(format!("Invalid arguments: {e}"));
                return Some(Response::error(Some(id), e));
            }
            let flow = crate::state::FlowState::default();
            let body = self.create_task(&env, &meta, &tool.name, args, flow).await;
            return Some(Response::with(id, body));
        }
        let mut subject = Subject::new("tools/call", tool.name.clone(), BindArgs::Tool(args));
        subject.single_use = tool.single_use;
        subject.unsolicited = tool.unsolicited;
        let flow = FlowParams {
            input_responses: p.input_responses,
            request_state: p.request_state,
        };
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

    pub(crate) async fn get_prompt(
        &self,
        id: RequestId,
        meta: Arc<RequestMeta>,
        p: PromptParams<'_>,
        env: RequestEnv,
    ) -> Option<Response> {
        let Some(prompt) = self.inner.prompts.get(p.name.as_ref()) else {
            let e = invalid(format!("Unknown prompt: {}", p.name));
            return Some(Response::error(Some(id), e));
        };
        let args = p.arguments.unwrap_or_default();
        let subject = Subject::new("prompts/get", prompt.name.clone(), BindArgs::Prompt(&args));
        let flow = FlowParams {
            input_responses: p.input_responses,
            request_state: p.request_state,
        };
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

    pub(crate) async fn read_resource(
        &self,
        id: RequestId,
        meta: Arc<RequestMeta>,
        p: ReadParams<'_>,
        env: RequestEnv,
    ) -> Option<Response> {
        let Some((entry, vars)) = self.find_resource(&p.uri) else {
            return Some(Response::error(Some(id), not_found(&p.uri)));
        };
        let mut subject = Subject::new(
            "resources/read",
            Arc::from(p.uri.as_str()),
            BindArgs::Resource,
        );
        subject.cache = entry.cache;
        let flow = FlowParams {
            input_responses: p.input_responses,
            request_state: p.request_state,
        };
        let handler = entry.handler.clone();
        let mime = entry.mime.clone();
        let uri = p.uri;
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

/// `-32602` "Resource not found" with `data.uri` (2026-07-28, SEP-2164).
fn not_found(uri: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_PARAMS,
        format!("Resource not found: {uri}"),
    )
    .with_data(serde_json::json!({ "uri": uri }))
}
