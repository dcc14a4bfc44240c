//! The route stage: a prepared request goes to its method.

use super::context::RequestEnv;
use super::core::Server;
use super::inbound::{Body, Inbound, classify};
use super::lists::{Pages, page_index};
use super::outcome::Outcome;
use super::prepare::{Prepared, check_version, removed};
use super::request::{ListParams, Params, REMOVED};
use super::response::Response;
use crate::trace::{self, RequestSpan};
use futures_util::future::{BoxFuture, Either, Ready, ready};
use serde_json::value::RawValue;
use std::sync::Arc;
use std::time::Instant;
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::RequestMeta;

/// The future of a routed request: answered at once, or a method running (boxed: its
/// state is large, and only the methods that do work pay for it).
pub(crate) type Running<'s> = Either<Ready<Option<Response>>, BoxFuture<'s, Option<Response>>>;

impl<'a> Prepared<'a> {
    /// Routes the request: the version check, then the method. The future's `None`
    /// means it was cancelled (nothing may be sent then).
    pub(crate) fn run<'s>(self, server: &'s Server, mut env: RequestEnv) -> Running<'s>
    where
        'a: 's,
    {
        let span = trace::request_span(self.method, self.target().name(), &self.meta);
        if span.is_disabled() {
            return match self.route(server, env) {
                Ok(running) => Either::Right(running),
                Err(answer) => Either::Left(ready(Some(answer))),
            };
        }
        let started = Instant::now();
        env.span = RequestSpan(span.clone());
        match span.in_scope(|| self.route(server, env)) {
            Ok(running) => Either::Right(Box::pin(trace::traced(span, running))),
            Err(answer) => {
                trace::record_outcome(&span, Some(&answer), started);
                Either::Left(ready(Some(answer)))
            }
        }
    }

    fn route<'s>(
        self,
        server: &'s Server,
        env: RequestEnv,
    ) -> Result<BoxFuture<'s, Option<Response>>, Response>
    where
        'a: 's,
    {
        let Prepared {
            id,
            method,
            meta,
            params,
            raw,
        } = self;
        if let Err(e) = check_version(&meta) {
            return Err(Response::early(id, e));
        }
        if REMOVED.contains(&method) {
            return Err(Response::error(Some(id), removed(method)));
        }
        if !server.offers(method) {
            return Err(Response::error(
                Some(id),
                ErrorObject::method_not_found(method),
            ));
        }
        if super::is_task_method(method) {
            // The extension's gate comes before the params and any id lookup.
            super::tasks::gate(&meta).map_err(|e| Response::error(Some(id.clone()), e))?;
        }
        let params = params.map_err(|e| Response::error(Some(id.clone()), e))?;
        let meta = Arc::new(meta);
        let lists = &server.inner.lists;
        let body = match (method, params) {
            ("server/discover", _) => Ok(lists.discover.clone()),
            ("tools/list", Params::List(p)) => server.list("tools", &lists.tools, p, method),
            ("prompts/list", Params::List(p)) => server.list("prompts", &lists.prompts, p, method),
            ("resources/list", Params::List(p)) => {
                server.list("resources", &lists.resources, p, method)
            }
            ("resources/templates/list", Params::List(p)) => {
                server.list("templates", &lists.templates, p, method)
            }
            ("tools/call", Params::Call(p)) => {
                let (call, flow) = super::call::tool_call(p);
                return Ok(Box::pin(server.answer_call(id, meta, call, flow, env)));
            }
            ("tasks/get" | "tasks/update" | "tasks/cancel", Params::Task(p)) => {
                return Ok(Box::pin(server.task_method(id, method, p, env)));
            }
            ("prompts/get", Params::Prompt(p)) => {
                let (call, flow) = super::call::prompt_call(p);
                return Ok(Box::pin(server.answer_call(id, meta, call, flow, env)));
            }
            ("resources/read", Params::Read(p)) => {
                let (call, flow) = super::call::read_call(p);
                return Ok(Box::pin(server.answer_call(id, meta, call, flow, env)));
            }
            ("completion/complete", Params::Complete(p)) => {
                return Ok(Box::pin(async move {
                    let outcome = server.complete(id.clone(), meta, p, env).await?;
                    Some(server.respond(id, outcome))
                }));
            }
            // The one-pass reader leaves this method's params raw.
            ("subscriptions/listen", _) => {
                return Ok(Box::pin(async move {
                    super::listen::listen(server, id, raw, &meta, env).await
                }));
            }
            (m, _) => Err(ErrorObject::method_not_found(m)),
        };
        Err(Response::with(id, body))
    }
}

impl Server {
    /// Runs an MRTR-capable call and answers it as 2026-07-28 does.
    async fn answer_call(
        &self,
        id: RequestId,
        meta: Arc<RequestMeta>,
        call: super::call::Call<'_>,
        flow: super::round::FlowParams<'_>,
        env: RequestEnv,
    ) -> Option<Response> {
        let outcome = self.run_call(id.clone(), meta, call, flow, env).await?;
        Some(self.respond(id, outcome))
    }

    /// The 2026-07-28 answer to an outcome.
    pub(crate) fn respond(&self, id: RequestId, outcome: Outcome) -> Response {
        let asked = outcome.is_input_required();
        let mut r = Response::with(id, outcome.render(&self.inner.info));
        r.input_required = asked;
        r
    }

    /// Handles one message given as bytes (a line of stdio, a POST body). Returns the
    /// response to send, if any: notifications and cancelled requests get none.
    pub async fn handle_message(&self, bytes: &[u8], env: RequestEnv) -> Option<Response> {
        match classify(bytes) {
            Inbound::Malformed(m) => Some(Response::error(m.id, m.error)),
            Inbound::Request { id, method, params } => match self.prepare(id, &method, params) {
                Ok(prepared) => prepared.run(self, env).await,
                Err(refused) => Some(refused),
            },
            Inbound::Notification { method, .. } => {
                tracing::debug!(%method, "notification ignored");
                None
            }
            Inbound::Response { id, .. } => {
                tracing::warn!(
                    ?id,
                    "a response arrived but this server never sends requests"
                );
                None
            }
        }
    }

    /// Handles one request. `None` when it was cancelled (nothing may be sent then).
    pub async fn handle(
        &self,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        env: RequestEnv,
    ) -> Option<Response> {
        match self.prepare(id, method, Body::Raw(params)) {
            Ok(prepared) => prepared.run(self, env).await,
            Err(refused) => Some(refused),
        }
    }

    /// Methods this server answers (a capability it does not offer is an unknown method).
    fn offers(&self, method: &str) -> bool {
        let l = &self.inner.lists;
        match method {
            "server/discover" | "subscriptions/listen" => true,
            "tools/list" | "tools/call" => l.tools.is_some(),
            "prompts/list" | "prompts/get" => l.prompts.is_some(),
            "resources/list" | "resources/templates/list" | "resources/read" => {
                l.resources.is_some()
            }
            "completion/complete" => self.inner.completions,
            "tasks/get" | "tasks/update" | "tasks/cancel" => self.inner.tasks.is_some(),
            _ => false,
        }
    }

    fn list(
        &self,
        kind: &str,
        pages: &Pages,
        p: ListParams,
        method: &str,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let pages = pages
            .as_ref()
            .ok_or_else(|| ErrorObject::method_not_found(method))?;
        let i = page_index(kind, p.cursor.as_deref(), pages.len())?;
        Ok(pages[i].clone())
    }
}
