//! The route stage: a prepared 2026-07-28 request goes to its method — one of the core's,
//! or a wing's — and its [`Outcome`] is rendered as 2026-07-28 answers it.

use super::call::{self, Call};
use super::context::RequestEnv;
use super::core::Server;
use super::flow::FlowParams;
use super::lists::{Pages, page_index};
use super::outcome::Outcome;
use super::prepare::{Prepared, check_version, removed};
use super::request::{ListParams, Params, REMOVED};
use super::response::Response;
use super::wing::{Era, WingRequest};
use crate::metrics::MethodMetrics;
use crate::trace::{self, Ending as _, RequestSpan};
use futures_util::FutureExt as _;
use futures_util::future::{BoxFuture, Either, Ready, ready};
use serde_json::value::RawValue;
use std::sync::Arc;
use std::time::Instant;
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::RequestMeta;

/// The future of a routed request: answered at once, or a method running (boxed: its
/// state is large, and only the methods that do work pay for it).
pub(crate) type Running<'s> = Either<Ready<Option<Response>>, Counted<'s>>;

/// A running method, counted when it ends (`sterna_requests_total`; dropped before its
/// end: `cancelled`).
pub(crate) struct Counted<'s> {
    inner: Method<'s>,
    counts: &'s MethodMetrics,
    done: bool,
}

impl std::future::Future for Counted<'_> {
    type Output = Option<Response>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Response>> {
        let r = std::task::ready!(self.inner.poll_unpin(cx));
        self.done = true;
        self.counts.ended(r.as_ref().map(|r| r.ending().0));
        std::task::Poll::Ready(r)
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.counts.ended(None);
        }
    }
}

fn counted<'s>(inner: Method<'s>, counts: &'s MethodMetrics) -> Running<'s> {
    Either::Right(Counted {
        inner,
        counts,
        done: false,
    })
}

impl<'a> Prepared<'a> {
    /// Routes the request: the version check, then the method. The future's `None`
    /// means it was cancelled (nothing may be sent then).
    pub(crate) fn run<'s>(self, server: &'s Server, mut env: RequestEnv) -> Running<'s>
    where
        'a: 's,
    {
        let counts = server.metrics().of(self.method);
        let span = trace::request_span(self.method, self.target().name(), &self.meta);
        if span.is_disabled() {
            return match self.route(server, env) {
                Ok(running) => counted(running, counts),
                Err(answer) => {
                    counts.ended(Some(answer.ending().0));
                    Either::Left(ready(Some(answer)))
                }
            };
        }
        let started = Instant::now();
        env.span = RequestSpan(span.clone());
        match span.in_scope(|| self.route(server, env)) {
            Ok(running) => counted(
                Method::Other(Box::pin(trace::traced(span, running))),
                counts,
            ),
            Err(answer) => {
                trace::record_outcome(&span, Some(&answer), started);
                counts.ended(Some(answer.ending().0));
                Either::Left(ready(Some(answer)))
            }
        }
    }

    fn route<'s>(self, server: &'s Server, env: RequestEnv) -> Result<Method<'s>, Response>
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
        if !offers(server, method) {
            return Err(Response::error(
                Some(id),
                ErrorObject::method_not_found(method),
            ));
        }
        let params = params.map_err(|e| Response::error(Some(id.clone()), e))?;
        if let Params::Wing(request) = params {
            return wing_call(server, id, request, env);
        }
        if let Err(e) = server.wings().check(method, &meta, raw) {
            return Err(Response::error(Some(id), e));
        }
        let lists = server.lists();
        let body = match (method, params) {
            ("server/discover", _) => Ok(lists.discover.clone()),
            ("tools/list", Params::List(p)) => list("tools", &lists.tools, p, method),
            ("prompts/list", Params::List(p)) => list("prompts", &lists.prompts, p, method),
            ("resources/list", Params::List(p)) if server.wings().lists_resources() => {
                lists.resources_now(server.wings().resources(), p.cursor.as_deref())
            }
            ("resources/list", Params::List(p)) => list("resources", &lists.resources, p, method),
            ("resources/templates/list", Params::List(p)) => {
                list("templates", &lists.templates, p, method)
            }
            ("tools/call", Params::Call(p)) => {
                let (call, flow) = call::tool_call(p);
                return Ok(answer_call(server, id, meta, call, flow, env));
            }
            ("prompts/get", Params::Prompt(p)) => {
                let (call, flow) = call::prompt_call(p);
                return Ok(answer_call(server, id, meta, call, flow, env));
            }
            ("resources/read", Params::Read(p)) => {
                let (call, flow) = call::read_call(p);
                return Ok(answer_call(server, id, meta, call, flow, env));
            }
            ("completion/complete", Params::Complete(p)) => {
                return Ok(Method::Other(Box::pin(async move {
                    let outcome =
                        super::complete::complete(server, id.clone(), meta, p, env).await?;
                    Some(respond(server, id, outcome))
                })));
            }
            // The one-pass reader leaves this method's params raw.
            ("subscriptions/listen", _) => {
                return Ok(Method::Other(Box::pin(async move {
                    super::listen::listen(server, id, raw, env).await
                })));
            }
            (m, _) => Err(ErrorObject::method_not_found(m)),
        };
        Err(Response::with(id, body))
    }
}

/// A wing's method: what its decoding produced runs.
fn wing_call<'s>(
    server: &'s Server,
    id: RequestId,
    request: WingRequest<'_, Server>,
    env: RequestEnv,
) -> Result<Method<'s>, Response> {
    let call = request
        .call
        .map_err(|e| Response::error(Some(id.clone()), e))?;
    Ok(Method::Other(Box::pin(async move {
        let outcome = call.run(server, id.clone(), env).await?;
        Some(respond(server, id, outcome))
    })))
}

/// A routed method's future: an MRTR-capable call (its round boxed as it is made), or
/// any other method (boxed whole).
pub(crate) enum Method<'s> {
    Call(Answering<'s>),
    Other(BoxFuture<'s, Option<Response>>),
}

impl std::future::Future for Method<'_> {
    type Output = Option<Response>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Response>> {
        match self.get_mut() {
            Method::Call(call) => call.poll_unpin(cx),
            Method::Other(other) => other.as_mut().poll(cx),
        }
    }
}

/// A call's round, answered as 2026-07-28 does once it ends.
pub(crate) struct Answering<'s> {
    round: BoxFuture<'s, Option<Outcome>>,
    server: &'s Server,
    id: Option<RequestId>,
}

impl std::future::Future for Answering<'_> {
    type Output = Option<Response>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Response>> {
        let this = self.get_mut();
        let outcome = std::task::ready!(this.round.as_mut().poll(cx));
        // `None` once answered: a future polled again answers nothing.
        let answer = this.id.take().zip(outcome);
        std::task::Poll::Ready(answer.map(|(id, o)| respond(this.server, id, o)))
    }
}

/// Runs an MRTR-capable call and answers it as 2026-07-28 does.
fn answer_call<'a>(
    server: &'a Server,
    id: RequestId,
    meta: Arc<RequestMeta>,
    call: Call<'a>,
    flow: FlowParams<'a>,
    env: RequestEnv,
) -> Method<'a> {
    // Boxed as it is made, then answered by a small future around it: a mapped or awaited
    // future would be moved whole (twice) on its way into the box.
    Method::Call(Answering {
        round: Box::pin(call::run(
            server,
            id.clone(),
            meta,
            call,
            flow,
            Arc::new(env),
        )),
        server,
        id: Some(id),
    })
}

/// The 2026-07-28 answer to an outcome.
pub(crate) fn respond(server: &Server, id: RequestId, outcome: Outcome) -> Response {
    let asked = outcome.is_input_required();
    let mut r = Response::with(id, outcome.render(server.shared_info()));
    r.input_required = asked;
    r
}

/// Methods this server answers (a capability it does not offer is an unknown method).
fn offers(server: &Server, method: &str) -> bool {
    let l = server.lists();
    match method {
        "server/discover" | "subscriptions/listen" => true,
        "tools/list" | "tools/call" => l.tools.is_some(),
        "prompts/list" | "prompts/get" => l.prompts.is_some(),
        "resources/list" | "resources/templates/list" | "resources/read" => l.resources.is_some(),
        "completion/complete" => server.routes().completions,
        m => server.wings().serving(Era::Modern, m).is_some(),
    }
}

fn list(
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
