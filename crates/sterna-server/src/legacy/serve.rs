//! A legacy session's requests, decoded once ([`LegacyRequest`]) and then served: the 2025
//! utilities (`ping`, `logging/setLevel`, `resources/subscribe`), the lists without 2026
//! decorations, the MRTR-capable methods through the push loop, and the methods wings
//! serve to 2025 sessions (`Wing::methods(Era::Legacy)`), rendered the 2025 way.
//!
//! The decoded request is what runs and what a transport authorizes
//! ([`LegacyRequest::target`]): there is no second reading of the bytes.

use super::Legacy;
use super::render;
use super::session::LegacySession;
use super::shim::LegacyCall;
use crate::server::context::RequestEnv;
use crate::server::lists::page_index;
use crate::server::request::{CompleteParams, RawField, invalid};
use crate::server::response::Response;
#[cfg(feature = "http")]
use crate::server::target::Target;
use crate::server::wing::Era;
use futures_util::future::{BoxFuture, Either, Ready, ready};
use serde::Deserialize;
use serde_json::value::{RawValue, to_raw_value};
use std::collections::BTreeMap;
use sterna_types::error::{ErrorCode, ErrorObject};
use sterna_types::jsonrpc::RequestId;
use sterna_types::legacy::{InitializeParams, InitializeResult};
use sterna_types::meta::{LoggingLevel, ProgressToken};

/// The `_meta` of a 2025 request: only the progress token matters here.
#[derive(Deserialize, Default)]
struct Meta {
    #[serde(rename = "progressToken", default)]
    progress_token: Option<ProgressToken>,
}

#[derive(Deserialize)]
struct CallIn<'a> {
    name: String,
    #[serde(default, borrow)]
    arguments: RawField<'a>,
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
}

#[derive(Deserialize)]
struct PromptIn {
    name: String,
    #[serde(default)]
    arguments: Option<BTreeMap<String, String>>,
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
}

#[derive(Deserialize)]
struct ReadIn {
    uri: String,
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
}

#[derive(Deserialize)]
struct LevelIn {
    level: LoggingLevel,
}

#[derive(Deserialize)]
struct UriIn {
    uri: String,
}

#[derive(Deserialize, Default)]
struct CursorIn {
    #[serde(default)]
    cursor: Option<String>,
}

/// `completion/complete` params without the 2026 `_meta`.
#[derive(Deserialize)]
struct CompleteIn {
    #[serde(rename = "ref")]
    reference: sterna_types::completion::CompletionReference,
    argument: sterna_types::completion::CompletionArgument,
    #[serde(default)]
    context: Option<sterna_types::completion::CompletionContext>,
}

impl From<CompleteIn> for CompleteParams {
    fn from(c: CompleteIn) -> Self {
        CompleteParams {
            meta: None,
            reference: c.reference,
            argument: c.argument,
            context: c.context,
        }
    }
}

/// The lists a legacy session reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    Tools,
    Prompts,
    Resources,
    Templates,
}

/// A request of a legacy session, decoded once: what runs, and what is authorized.
pub(crate) enum LegacyRequest {
    /// `tools/call`, `prompts/get`, `resources/read`: run through the push loop.
    Call {
        call: LegacyCall,
        progress: Option<ProgressToken>,
    },
    Complete(Box<CompleteParams>),
    Ping,
    SetLevel(LoggingLevel),
    Subscribe {
        uri: String,
        on: bool,
    },
    List {
        kind: ListKind,
        cursor: Option<String>,
    },
    /// A method a wing serves to 2025 sessions: decoded by the wing with the session's
    /// `_meta` when it runs, answered with its outcome rendered the 2025 way.
    Wing {
        method: String,
        params: Option<Box<RawValue>>,
    },
}

impl LegacyRequest {
    #[cfg(feature = "http")]
    /// The JSON-RPC method it came as (a label for metrics).
    pub(crate) fn method(&self) -> &str {
        match self {
            Self::Call { call, .. } => call.method(),
            Self::Complete(_) => "completion/complete",
            Self::Ping => "ping",
            Self::SetLevel(_) => "logging/setLevel",
            Self::Subscribe { on: true, .. } => "resources/subscribe",
            Self::Subscribe { on: false, .. } => "resources/unsubscribe",
            Self::List { kind, .. } => match kind {
                ListKind::Tools => "tools/list",
                ListKind::Prompts => "prompts/list",
                ListKind::Resources => "resources/list",
                ListKind::Templates => "resources/templates/list",
            },
            Self::Wing { method, .. } => method,
        }
    }

    #[cfg(feature = "http")]
    /// What the request acts on (the tool, prompt or resource the push loop will run).
    pub(crate) fn target(&self) -> Target<'_> {
        match self {
            Self::Call { call, .. } => call.target(),
            _ => Target::Untargeted,
        }
    }
}

fn decode<'a, T: Deserialize<'a>>(params: Option<&'a RawValue>) -> Result<T, ErrorObject> {
    let raw = params.map_or("{}", RawValue::get);
    serde_json::from_str(raw).map_err(|e| invalid(format!("Invalid params: {e}")))
}

fn empty() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).expect("valid JSON")
}

fn progress(meta: Option<Meta>) -> Option<ProgressToken> {
    meta.unwrap_or_default().progress_token
}

impl Legacy<'_> {
    /// `initialize`: opens a legacy session. Returns it with the result to send.
    pub(crate) fn initialize(
        &self,
        params: Option<&RawValue>,
    ) -> Result<(LegacySession, Box<RawValue>), ErrorObject> {
        let params: InitializeParams = decode(params)?;
        let session = LegacySession::open(params);
        let lists = &self.wing.lists;
        let result = InitializeResult {
            protocol_version: session.version.to_owned(),
            capabilities: lists.capabilities.clone(),
            server_info: self.server.info().clone(),
            instructions: lists.instructions.clone(),
            meta: None,
        };
        Ok((session, to_raw_value(&result).expect("results serialize")))
    }

    /// Decodes a request of a legacy session. `Err` is the error to answer it with (an
    /// unknown or unoffered method, unreadable params): such a request never runs.
    pub(crate) fn decode(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<LegacyRequest, ErrorObject> {
        let lists = &self.wing.lists;
        let offered = |pages: &crate::server::lists::Pages| pages.is_some();
        let list = |kind, pages| {
            if !offered(pages) {
                return Err(ErrorObject::method_not_found(method));
            }
            let c: CursorIn = decode(params)?;
            Ok(LegacyRequest::List {
                kind,
                cursor: c.cursor,
            })
        };
        match method {
            "tools/call" => decode::<CallIn>(params).map(|p| LegacyRequest::Call {
                call: LegacyCall::Tool {
                    name: p.name,
                    arguments: match p.arguments {
                        RawField::Present(a) if a.get().trim() != "null" => Some(a.to_owned()),
                        _ => None,
                    },
                },
                progress: progress(p.meta),
            }),
            "prompts/get" => decode::<PromptIn>(params).map(|p| LegacyRequest::Call {
                call: LegacyCall::Prompt {
                    name: p.name,
                    arguments: p.arguments,
                },
                progress: progress(p.meta),
            }),
            "resources/read" => decode::<ReadIn>(params).map(|p| LegacyRequest::Call {
                call: LegacyCall::Resource { uri: p.uri },
                progress: progress(p.meta),
            }),
            "completion/complete" if self.server.routes().completions => {
                decode::<CompleteIn>(params).map(|p| LegacyRequest::Complete(Box::new(p.into())))
            }
            "ping" => Ok(LegacyRequest::Ping),
            "logging/setLevel" => {
                decode::<LevelIn>(params).map(|p| LegacyRequest::SetLevel(p.level))
            }
            "resources/subscribe" | "resources/unsubscribe" if offered(&lists.resources) => {
                decode::<UriIn>(params).map(|p| LegacyRequest::Subscribe {
                    uri: p.uri,
                    on: method == "resources/subscribe",
                })
            }
            "tools/list" => list(ListKind::Tools, &lists.tools),
            "prompts/list" => list(ListKind::Prompts, &lists.prompts),
            "resources/list" => list(ListKind::Resources, &lists.resources),
            "resources/templates/list" => list(ListKind::Templates, &lists.templates),
            "initialize" => Err(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "Invalid request: the session is already initialized",
            )),
            m if self.server.wings().serving(Era::Legacy, m).is_some() => Ok(LegacyRequest::Wing {
                method: m.to_owned(),
                params: params.map(ToOwned::to_owned),
            }),
            m => Err(ErrorObject::method_not_found(m)),
        }
    }

    /// Serves one decoded request of a legacy session. `None` when it was cancelled. The
    /// methods that wait are boxed on their own (the push loop's future among them), so
    /// that the request's future stays small; the others are answered here.
    pub(crate) fn serve<'s>(
        &'s self,
        session: &'s LegacySession,
        id: RequestId,
        request: LegacyRequest,
        env: RequestEnv,
    ) -> Either<Ready<Option<Response>>, BoxFuture<'s, Option<Response>>> {
        let answer = match request {
            LegacyRequest::Call { call, progress } => {
                let meta = session.meta(progress);
                return Either::Right(Box::pin(self.drive(session, id, call, meta, env)));
            }
            LegacyRequest::Complete(p) => {
                let meta = session.meta(None);
                return Either::Right(Box::pin(async move {
                    let outcome =
                        crate::server::complete::complete(self.server, id.clone(), meta, *p, env)
                            .await?;
                    Some(render::outcome(id, outcome))
                }));
            }
            LegacyRequest::Ping => Ok(empty()),
            LegacyRequest::SetLevel(level) => {
                session.set_log_level(level);
                Ok(empty())
            }
            LegacyRequest::Subscribe { uri, on } => {
                session.subscribe(&uri, on);
                Ok(empty())
            }
            LegacyRequest::List { kind, cursor } => self.page(kind, cursor.as_deref()),
            LegacyRequest::Wing { method, params } => {
                return Either::Right(Box::pin(async move {
                    self.wing(session, id, &method, params.as_deref(), env)
                        .await
                }));
            }
        };
        Either::Left(ready(Some(Response::with(id, answer))))
    }

    /// Runs a wing's method for a session and renders its outcome the 2025 way.
    async fn wing(
        &self,
        session: &LegacySession,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        env: RequestEnv,
    ) -> Option<Response> {
        let Some(wing) = self.server.wings().serving(Era::Legacy, method) else {
            return Some(Response::error(
                Some(id),
                ErrorObject::method_not_found(method),
            ));
        };
        let meta = session.meta(None);
        let call = match wing.decode(method, &meta, params).call {
            Ok(call) => call,
            Err(e) => return Some(Response::error(Some(id), e)),
        };
        let outcome = call.run(self.server, id.clone(), env).await?;
        Some(render::outcome(id, outcome))
    }

    fn page(&self, kind: ListKind, cursor: Option<&str>) -> Result<Box<RawValue>, ErrorObject> {
        let lists = &self.wing.lists;
        let wings = self.server.wings();
        if kind == ListKind::Resources && wings.lists_resources() {
            return lists.resources_now(wings.resources(), cursor);
        }
        let (pages, name) = match kind {
            ListKind::Tools => (&lists.tools, "tools"),
            ListKind::Prompts => (&lists.prompts, "prompts"),
            ListKind::Resources => (&lists.resources, "resources"),
            ListKind::Templates => (&lists.templates, "templates"),
        };
        // Decoding checked the list is offered.
        let pages = pages.as_deref().unwrap_or_default();
        let i = page_index(name, cursor, pages.len())?;
        pages
            .get(i)
            .cloned()
            .ok_or_else(|| ErrorObject::invalid_params("Invalid cursor"))
    }
}
