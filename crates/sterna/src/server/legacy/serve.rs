//! A legacy session's requests: the 2025 utilities (`ping`, `logging/setLevel`,
//! `resources/subscribe`), the lists without 2026 decorations, and the MRTR-capable
//! methods through the push loop.

use super::super::context::RequestEnv;
use super::super::core::Server;
use super::super::lists::page_index;
use super::super::request::{CompleteParams, RawField, invalid};
use super::super::response::Response;
use super::render;
use super::session::LegacySession;
use super::shim::Call;
use serde::Deserialize;
use serde_json::value::{RawValue, to_raw_value};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
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
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default, borrow)]
    arguments: RawField<'a>,
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
}

#[derive(Deserialize)]
struct PromptIn<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
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

fn decode<'a, T: Deserialize<'a>>(params: Option<&'a RawValue>) -> Result<T, ErrorObject> {
    let raw = params.map_or("{}", RawValue::get);
    serde_json::from_str(raw).map_err(|e| invalid(format!("Invalid params: {e}")))
}

fn empty() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).expect("valid JSON")
}

impl Server {
    /// `initialize`: opens a legacy session. Returns it with the result to send.
    pub(crate) fn initialize(
        &self,
        params: Option<&RawValue>,
    ) -> Result<(LegacySession, Box<RawValue>), ErrorObject> {
        let params: InitializeParams = decode(params)?;
        let session = LegacySession::open(params);
        let result = InitializeResult {
            protocol_version: session.version.to_owned(),
            capabilities: self.inner.lists.legacy.capabilities.clone(),
            server_info: (*self.inner.info).clone(),
            instructions: self.inner.lists.legacy.instructions.clone(),
            meta: None,
        };
        Ok((session, to_raw_value(&result).expect("results serialize")))
    }

    /// Serves one request of a legacy session. `None` when it was cancelled.
    pub(crate) async fn serve_legacy(
        &self,
        session: &LegacySession,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        env: RequestEnv,
    ) -> Option<Response> {
        let answer = match method {
            "tools/call" | "prompts/get" | "resources/read" => {
                return self.legacy_call(session, id, method, params, env).await;
            }
            "completion/complete" if self.inner.completions => {
                return self.legacy_complete(session, id, params, env).await;
            }
            _ => self.legacy_utility(session, method, params),
        };
        Some(Response::with(id, answer.map_err(render::error)))
    }

    fn legacy_utility(
        &self,
        session: &LegacySession,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let pages = &self.inner.lists.legacy;
        let list = |pages: &Option<Vec<Box<RawValue>>>, kind: &str| {
            let pages = pages
                .as_ref()
                .ok_or_else(|| ErrorObject::method_not_found(method))?;
            let c: CursorIn = decode(params)?;
            Ok(pages[page_index(kind, c.cursor.as_deref(), pages.len())?].clone())
        };
        match method {
            "ping" => Ok(empty()),
            "logging/setLevel" => {
                let p: LevelIn = decode(params)?;
                session.set_log_level(p.level);
                Ok(empty())
            }
            "resources/subscribe" | "resources/unsubscribe" if pages.resources.is_some() => {
                let p: UriIn = decode(params)?;
                session.subscribe(&p.uri, method == "resources/subscribe");
                Ok(empty())
            }
            "tools/list" => list(&pages.tools, "tools"),
            "prompts/list" => list(&pages.prompts, "prompts"),
            "resources/list" => list(&pages.resources, "resources"),
            "resources/templates/list" => list(&pages.templates, "templates"),
            "initialize" => Err(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "Invalid request: the session is already initialized",
            )),
            m => Err(ErrorObject::method_not_found(m)),
        }
    }

    async fn legacy_call(
        &self,
        session: &LegacySession,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        env: RequestEnv,
    ) -> Option<Response> {
        let decoded = match method {
            "tools/call" => decode::<CallIn>(params).map(|p| {
                let call = Call::Tool {
                    name: p.name,
                    arguments: p.arguments,
                };
                (call, p.meta)
            }),
            "prompts/get" => decode::<PromptIn>(params).map(|p| {
                let call = Call::Prompt {
                    name: p.name,
                    arguments: p.arguments,
                };
                (call, p.meta)
            }),
            _ => decode::<ReadIn>(params).map(|p| (Call::Resource { uri: p.uri }, p.meta)),
        };
        let (call, meta) = match decoded {
            Ok(d) => d,
            Err(e) => return Some(Response::error(Some(id), e)),
        };
        let meta = Arc::new(session.meta(meta.unwrap_or_default().progress_token));
        self.drive_legacy(session, id, call, meta, env).await
    }

    async fn legacy_complete(
        &self,
        session: &LegacySession,
        id: RequestId,
        params: Option<&RawValue>,
        env: RequestEnv,
    ) -> Option<Response> {
        let p: CompleteParams = match decode::<CompleteIn>(params) {
            Ok(p) => p.into(),
            Err(e) => return Some(Response::error(Some(id), e)),
        };
        let meta = Arc::new(session.meta(None));
        let r = self.complete(id, meta, p, env).await?;
        Some(render::response(r))
    }
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
