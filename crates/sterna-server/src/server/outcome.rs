//! What a method produced, before any era renders it. Every stage after the method passes
//! this typed value on; each era renders it at its edge (2026-07-28 here in
//! [`Outcome::render`], 2025-11-25 in its wing), and none reads what another rendered.

#![cfg_attr(
    not(all(feature = "legacy", feature = "tasks", feature = "http")),
    allow(
        dead_code,
        reason = "parts of the seam only the wings compiled out use"
    )
)]

use crate::mrtr::Inquiry;
use crate::state::FlowState;
use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::time::Duration;
use sterna_types::completion::{CompleteResult, Completion};
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::meta::{ResultMeta, SharedImplementation};
use sterna_types::prompts::GetPromptResult;
use sterna_types::resources::ReadResourceResult;
use sterna_types::result::{CacheScope, ResultType};
use sterna_types::tools::CallToolResult;

/// How a method ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// It completed with this result.
    Complete(Completed),
    /// It needs answers: the questions, and how the flow goes on.
    InputRequired(Asked),
    /// It failed.
    Failed(Failure),
}

/// A result, typed, with the caching hint a 2026-07-28 result carries.
#[derive(Debug)]
pub(crate) struct Completed {
    pub(crate) payload: Payload,
    /// `ttlMs`/`cacheScope` for results that carry them (resources); `None` otherwise.
    pub(crate) cache: Option<(Duration, CacheScope)>,
}

/// The result of each kind of method.
#[derive(Debug)]
pub(crate) enum Payload {
    Tool(CallToolResult),
    Prompt(GetPromptResult),
    Resource(ReadResourceResult),
    Completion(Completion),
    /// A wing's result: its `resultType` and its members (the era adds its stamps).
    Ext(ExtReply),
}

/// The result of a method a wing serves: its members, as the wing built them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExtReply {
    /// `resultType` in 2026-07-28 (`complete`, or `task` for a task handle).
    pub(crate) result_type: ResultType,
    /// The members (without `resultType` or the server's `_meta` stamp).
    pub(crate) members: Map<String, Value>,
}

/// The questions of an `input_required` answer, and how the flow continues.
#[derive(Debug)]
pub(crate) struct Asked {
    pub(crate) requests: BTreeMap<String, Inquiry>,
    pub(crate) next: Continuation,
}

/// An `input_required` answer as 2026-07-28 writes it: [`InputRequiredResult`]'s members,
/// in its order, with the questions borrowed (a form's schema is not copied).
///
/// [`InputRequiredResult`]: sterna_types::mrtr::InputRequiredResult
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct InputRequired<'a> {
    result_type: ResultType,
    #[serde(skip_serializing_if = "nothing_asked")]
    input_requests: &'a BTreeMap<String, Inquiry>,
    request_state: String,
    #[serde(rename = "_meta")]
    meta: ResultMeta,
}

fn nothing_asked(requests: &&BTreeMap<String, Inquiry>) -> bool {
    requests.is_empty()
}

/// Where the flow's state goes between rounds.
#[derive(Debug)]
pub(crate) enum Continuation {
    /// Sealed into `requestState`, for the client to echo (2026-07-28).
    Sealed(String),
    /// Kept by the era that asked, never sealed (a 2025-11-25 session's push loop).
    Held(Box<FlowState>),
}

/// Why a method failed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// `resources/read` of a URI nobody serves. 2026-07-28 answers `-32602` with
    /// `data.uri` (SEP-2164); the 2025 revisions number it `-32002`.
    ResourceNotFound(String),
    /// Any other error, with its code.
    Rpc(ErrorObject),
}

impl From<ErrorObject> for Failure {
    fn from(e: ErrorObject) -> Self {
        Self::Rpc(e)
    }
}

impl Failure {
    /// The error as 2026-07-28 numbers it.
    pub(crate) fn into_modern(self) -> ErrorObject {
        match self {
            Self::ResourceNotFound(uri) => ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                format!("Resource not found: {uri}"),
            )
            .with_data(serde_json::json!({ "uri": uri })),
            Self::Rpc(e) => e,
        }
    }
}

fn stamp(meta: &mut Option<ResultMeta>, info: &SharedImplementation) {
    meta.get_or_insert_with(ResultMeta::default).server_info = Some(info.clone());
}

fn render<T: serde::Serialize>(t: &T) -> Box<RawValue> {
    to_raw_value(t).expect("results serialize")
}

impl Completed {
    /// A result without a caching hint.
    pub(crate) fn new(payload: Payload) -> Self {
        Self {
            payload,
            cache: None,
        }
    }

    /// The result as 2026-07-28 sends it (see [`Payload::stamp_modern`]).
    pub(crate) fn render_modern(mut self, info: &SharedImplementation) -> Box<RawValue> {
        self.payload.stamp_modern(info, self.cache);
        match self.payload {
            Payload::Tool(t) => render(&t),
            Payload::Prompt(p) => render(&p),
            Payload::Resource(r) => render(&r),
            Payload::Completion(completion) => render(&CompleteResult {
                result_type: ResultType::Complete,
                completion,
                meta: Some(ResultMeta {
                    server_info: Some(info.clone()),
                    ..ResultMeta::default()
                }),
            }),
            Payload::Ext(ext) => render(&ext.render_modern(info, self.cache)),
        }
    }
}

impl Payload {
    /// Stamps what 2026-07-28 adds to a result: `resultType`, the `serverInfo` stamp and,
    /// for resources, `ttlMs`/`cacheScope` (unless the handler set its own). Completions
    /// and wing results are stamped as they are rendered.
    pub(crate) fn stamp_modern(
        &mut self,
        info: &SharedImplementation,
        cache: Option<(Duration, CacheScope)>,
    ) {
        match self {
            Payload::Tool(t) => {
                t.result_type = ResultType::Complete;
                stamp(&mut t.meta, info);
            }
            Payload::Prompt(p) => {
                p.result_type = ResultType::Complete;
                stamp(&mut p.meta, info);
            }
            Payload::Resource(r) => {
                r.result_type = ResultType::Complete;
                stamp(&mut r.meta, info);
                if let Some((ttl, scope)) = cache {
                    r.ttl_ms.get_or_insert(ttl.as_millis() as u64);
                    r.cache_scope.get_or_insert(scope);
                }
            }
            Payload::Completion(_) | Payload::Ext(_) => {}
        }
    }
}

impl ExtReply {
    /// A `complete` result with these members.
    pub(crate) fn complete(members: Map<String, Value>) -> Self {
        Self {
            result_type: ResultType::Complete,
            members,
        }
    }

    fn render_modern(
        mut self,
        info: &SharedImplementation,
        cache: Option<(Duration, CacheScope)>,
    ) -> Map<String, Value> {
        let mut out = Map::with_capacity(self.members.len() + 3);
        out.insert("resultType".into(), self.result_type.as_str().into());
        if let Some((ttl, scope)) = cache {
            out.insert("ttlMs".into(), (ttl.as_millis() as u64).into());
            out.insert(
                "cacheScope".into(),
                serde_json::to_value(scope).expect("scopes serialize"),
            );
        }
        let meta = self.members.remove("_meta");
        out.append(&mut self.members);
        let mut meta = match meta {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let server = serde_json::to_value(&**info).expect("implementations serialize");
        meta.insert(sterna_types::meta::SERVER_INFO_KEY.into(), server);
        out.insert("_meta".into(), Value::Object(meta));
        out
    }
}

impl Outcome {
    /// The outcome as 2026-07-28 answers it.
    pub(crate) fn render(self, info: &SharedImplementation) -> Result<Box<RawValue>, ErrorObject> {
        match self {
            Self::Complete(c) => Ok(c.render_modern(info)),
            Self::Failed(f) => Err(f.into_modern()),
            Self::InputRequired(asked) => {
                let Continuation::Sealed(token) = asked.next else {
                    // Only an era that holds its own state asks for a held one.
                    tracing::error!("a held continuation reached the 2026-07-28 rendering");
                    return Err(ErrorObject::internal("Internal error"));
                };
                Ok(render(&InputRequired {
                    result_type: ResultType::InputRequired,
                    input_requests: &asked.requests,
                    request_state: token,
                    meta: ResultMeta {
                        server_info: Some(info.clone()),
                        ..ResultMeta::default()
                    },
                }))
            }
        }
    }

    /// Whether the method asked for input (a round of an MRTR flow).
    pub(crate) fn is_input_required(&self) -> bool {
        matches!(self, Self::InputRequired(_))
    }
}

impl crate::trace::Ending for Outcome {
    fn ending(&self) -> (&'static str, Option<i32>) {
        match self {
            Self::Complete(_) => ("complete", None),
            Self::InputRequired(_) => ("input_required", None),
            Self::Failed(Failure::ResourceNotFound(_)) => {
                ("error", Some(ErrorCode::INVALID_PARAMS.0))
            }
            Self::Failed(Failure::Rpc(e)) => ("error", Some(e.code.0)),
        }
    }
}
