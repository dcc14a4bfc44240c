//! The seam eras and extensions plug into: a [`Wing`] wraps the core without changing it.
//!
//! A wing may add:
//! * **methods** ([`Wing::methods`]), per era: it decodes their requests itself
//!   ([`Wing::decode`], one reading: the decoded value names its `Mcp-Name` and is what
//!   runs) and answers them with an [`Outcome`] the era renders;
//! * **capabilities** ([`Wing::capabilities`]): its entry under `extensions`, or a
//!   capability it needs (`resources` …), per era — `server/discover` and `initialize`
//!   show them;
//! * **resources of its own** ([`Wing::resources`], [`Wing::read_resource`]): listed by
//!   `resources/list` after the core's, read when no registered resource or template
//!   matches the URI (what they are may change while the server runs);
//! * **hooks around a call**: a check before a core method runs ([`Wing::check`]), and a
//!   plan for `tools/call` ([`Wing::plan_tool_call`]: run as usual, or taken over by the
//!   wing, possibly once the tool's declared questions are answered by MRTR);
//! * **state of its own** ([`Wings::get`]) and settings on tools and on the builder (the
//!   type maps of [`Tool`](super::Tool) and [`ServerBuilder`](super::ServerBuilder)).
//!
//! A wing may **not** touch the core's routing tables, the sealing of `requestState`, the
//! round (open → resolve → run → seal), or what a core method answers. An era is a wing
//! around the transports as well: it decodes its own requests, runs the core's methods
//! through the same calls, and renders each [`Outcome`] its way.

#![cfg_attr(
    not(all(feature = "legacy", feature = "tasks", feature = "http")),
    allow(
        dead_code,
        reason = "parts of the seam only the wings compiled out use"
    )
)]

use super::context::RequestEnv;
use super::outcome::{Failure, Outcome};
use super::routes::ToolEntry;
use super::typemap::TypeMap;
use crate::state::FlowState;
use futures_util::future::BoxFuture;
use serde_json::value::RawValue;
use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;
use sterna_types::capabilities::ServerCapabilities;
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::RequestId;
use sterna_types::meta::RequestMeta;
use sterna_types::resources::{ReadResourceResult, Resource};

/// The protocol era a request belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// 2026-07-28: every request carries its own `_meta`; no session.
    Modern,
    /// 2025-11-25 and earlier: `initialize`, then a session.
    Legacy,
}

/// An era or extension around the core. Every hook has a neutral default.
pub(crate) trait Wing<S>: Any + Send + Sync {
    /// Protocol revisions this wing serves besides 2026-07-28 (an era's: listed by
    /// `server/discover`).
    fn versions(&self) -> &'static [&'static str] {
        &[]
    }

    /// Adds what this wing declares, for clients of `era`.
    fn capabilities(&self, _era: Era, _caps: &mut ServerCapabilities) {}

    /// The methods this wing serves to clients of `era`.
    fn methods(&self, _era: Era) -> &'static [&'static str] {
        &[]
    }

    /// Decodes a request of one of its methods (`_meta` already read). Called only for
    /// the methods it listed.
    fn decode<'a>(
        &'a self,
        method: &'a str,
        _meta: &RequestMeta,
        _params: Option<&'a RawValue>,
    ) -> WingRequest<'a, S> {
        WingRequest::unnamed(Err(ErrorObject::method_not_found(method)))
    }

    /// Whether this wing lists resources of its own (then `resources/list` is rendered
    /// per request, with [`resources`](Self::resources) after the core's).
    fn lists_resources(&self) -> bool {
        false
    }

    /// The resources this wing lists now.
    fn resources(&self) -> Vec<Resource> {
        Vec::new()
    }

    /// Reads a resource of this wing (`None`: not one of its URIs). The result gets the
    /// era's stamps like any other (`ttlMs`/`cacheScope` unless set here).
    fn read_resource<'a>(&'a self, _uri: &'a str) -> Option<BoxFuture<'a, ReadResult>> {
        None
    }

    /// May refuse a request of a core method before it runs (a member of its params this
    /// wing owns, for instance).
    fn check(
        &self,
        _method: &str,
        _meta: &RequestMeta,
        _params: Option<&RawValue>,
    ) -> Result<(), ErrorObject> {
        Ok(())
    }

    /// How a `tools/call` of `tool` is served (`-32xxx` refuses it before it runs).
    fn plan_tool_call(
        &self,
        _tool: &ToolEntry,
        _meta: &RequestMeta,
    ) -> Result<ToolPlan, ErrorObject> {
        Ok(ToolPlan::Run)
    }

    /// Takes over a `tools/call` its plan claimed.
    fn take_tool_call<'a>(&'a self, _server: &'a S, take: TakeCall<'a>) -> BoxFuture<'a, Outcome> {
        let _ = take;
        Box::pin(async { Outcome::Failed(ErrorObject::internal("Internal error").into()) })
    }
}

/// What reading a wing's resource gives.
pub(crate) type ReadResult = Result<ReadResourceResult, Failure>;

/// How a `tools/call` is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolPlan {
    /// As usual: a round of the tool.
    Run,
    /// Taken over by the wing at once (its arguments checked first).
    Take,
    /// The tool's declared questions first (by MRTR); once every one is answered, the
    /// wing takes over with the answers.
    AskThenTake,
}

/// A `tools/call` a wing takes over.
pub(crate) struct TakeCall<'a> {
    pub(crate) env: &'a RequestEnv,
    pub(crate) meta: &'a RequestMeta,
    pub(crate) tool: &'a ToolEntry,
    pub(crate) args: Option<&'a RawValue>,
    /// The answers of the declared questions ([`ToolPlan::AskThenTake`]), else empty.
    pub(crate) answers: FlowState,
}

/// A request of a wing's method, as the wing decoded it.
pub(crate) struct WingRequest<'a, S> {
    /// The method carries `Mcp-Name` (2026-07-28), and this is the value it must equal.
    pub(crate) name: Option<Option<Cow<'a, str>>>,
    /// What runs, or why it cannot (answered after the envelope checks).
    pub(crate) call: Result<Box<dyn WingCall<S>>, ErrorObject>,
}

impl<'a, S> WingRequest<'a, S> {
    /// A request of a method without `Mcp-Name`.
    pub(crate) fn unnamed(call: Result<Box<dyn WingCall<S>>, ErrorObject>) -> Self {
        Self { name: None, call }
    }

    /// A request of a method whose `Mcp-Name` must equal `name` (absent: the header is
    /// still required, and any value mismatches).
    pub(crate) fn named(
        name: Option<Cow<'a, str>>,
        call: Result<Box<dyn WingCall<S>>, ErrorObject>,
    ) -> Self {
        Self {
            name: Some(name),
            call,
        }
    }
}

/// A decoded request of a wing's method, ready to run.
pub(crate) trait WingCall<S>: Send {
    /// Runs it. `None` when it was cancelled.
    fn run<'s>(
        self: Box<Self>,
        server: &'s S,
        id: RequestId,
        env: RequestEnv,
    ) -> BoxFuture<'s, Option<Outcome>>;
}

/// The wings of a server, in the order they were added.
pub(crate) struct Wings<S> {
    list: Vec<Arc<dyn Wing<S>>>,
    by_type: TypeMap,
}

impl<S> Default for Wings<S> {
    fn default() -> Self {
        Self {
            list: Vec::new(),
            by_type: TypeMap::default(),
        }
    }
}

impl<S> Clone for Wings<S> {
    fn clone(&self) -> Self {
        Self {
            list: self.list.clone(),
            by_type: self.by_type.clone(),
        }
    }
}

impl<S> std::fmt::Debug for Wings<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wings")
            .field("count", &self.list.len())
            .finish()
    }
}

impl<S: 'static> Wings<S> {
    /// Adds a wing.
    pub(crate) fn add<W: Wing<S>>(&mut self, wing: W) {
        let wing = Arc::new(wing);
        self.by_type.insert_arc(wing.clone());
        self.list.push(wing);
    }

    /// The wing of type `W`, if added.
    pub(crate) fn get<W: Wing<S>>(&self) -> Option<&W> {
        self.by_type.get::<W>()
    }

    /// The wing serving `method` to clients of `era`.
    pub(crate) fn serving(&self, era: Era, method: &str) -> Option<&dyn Wing<S>> {
        self.list
            .iter()
            .find(|w| w.methods(era).contains(&method))
            .map(|w| &**w)
    }

    /// Every method a wing serves, in either era (each once per era).
    pub(crate) fn all_methods(&self) -> Vec<&'static str> {
        let eras = [Era::Modern, Era::Legacy];
        eras.iter()
            .flat_map(|e| self.list.iter().flat_map(|w| w.methods(*e)))
            .copied()
            .collect()
    }

    /// Every revision served: 2026-07-28's, then the wings'.
    pub(crate) fn versions(&self) -> Vec<String> {
        let modern = sterna_types::version::MODERN_VERSIONS.iter();
        let others = self.list.iter().flat_map(|w| w.versions());
        modern.chain(others).map(|v| (*v).to_owned()).collect()
    }

    /// What every wing declares for `era`.
    pub(crate) fn capabilities(&self, era: Era, caps: &mut ServerCapabilities) {
        for w in &self.list {
            w.capabilities(era, caps);
        }
    }

    /// Whether some wing lists resources of its own.
    pub(crate) fn lists_resources(&self) -> bool {
        self.list.iter().any(|w| w.lists_resources())
    }

    /// The resources the wings list now, in the order the wings were added.
    pub(crate) fn resources(&self) -> Vec<Resource> {
        self.list.iter().flat_map(|w| w.resources()).collect()
    }

    /// The read of `uri` by the wing that owns it, if one does.
    pub(crate) fn read_resource<'a>(&'a self, uri: &'a str) -> Option<BoxFuture<'a, ReadResult>> {
        self.list.iter().find_map(|w| w.read_resource(uri))
    }

    /// Every wing's check of a core method's request.
    pub(crate) fn check(
        &self,
        method: &str,
        meta: &RequestMeta,
        params: Option<&RawValue>,
    ) -> Result<(), ErrorObject> {
        self.list
            .iter()
            .try_for_each(|w| w.check(method, meta, params))
    }

    /// The first plan other than [`ToolPlan::Run`], and the wing that made it.
    pub(crate) fn plan_tool_call(
        &self,
        tool: &ToolEntry,
        meta: &RequestMeta,
    ) -> Result<Option<(ToolPlan, &dyn Wing<S>)>, ErrorObject> {
        for w in &self.list {
            match w.plan_tool_call(tool, meta)? {
                ToolPlan::Run => {}
                plan => return Ok(Some((plan, &**w))),
            }
        }
        Ok(None)
    }
}
