//! Discovery and the list methods (all pages), and the `x-mcp-header` annotations the
//! tool list teaches, mirrored into `Mcp-Param-*` headers on each call.

use super::driver::Client;
use super::error::{ClientError, ProtocolViolation};
use super::link::Connected;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::HashMap;
use sterna_types::discover::DiscoverResult;
use sterna_types::mirror::{ParamKind, header_params};
use sterna_types::prompts::{ListPromptsResult, Prompt};
use sterna_types::resources::{
    ListResourceTemplatesResult, ListResourcesResult, Resource, ResourceTemplate,
};
use sterna_types::tools::{ListToolsResult, Tool};

impl Client {
    /// `server/discover`. A 2025-11-25 server has no such method: its answer to
    /// `initialize` is returned in the same shape (its version, capabilities,
    /// instructions, and `serverInfo` in `_meta`).
    pub async fn discover(&self) -> Result<DiscoverResult, ClientError> {
        if let Connected::Legacy(link) = self.connected().await? {
            return Ok(link.session.discover());
        }
        self.typed("server/discover", Map::new()).await
    }

    async fn pages<R: DeserializeOwned, I>(
        &self,
        method: &str,
        items: impl Fn(R) -> (Vec<I>, Option<String>),
    ) -> Result<Vec<I>, ClientError> {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let mut params = Map::new();
            if let Some(c) = cursor.take() {
                params.insert("cursor".into(), Value::String(c));
            }
            let (page, next) = items(self.typed::<R>(method, params).await?);
            all.extend(page);
            match next {
                Some(c) => cursor = Some(c),
                None => return Ok(all),
            }
        }
        Err(ProtocolViolation::EndlessList {
            method: method.to_owned(),
        }
        .into())
    }

    /// Every tool (all pages). Tools whose `x-mcp-header` annotations are invalid are left
    /// out (with a warning), as 2026-07-28 requires; the valid annotations are kept to
    /// mirror arguments into `Mcp-Param-*` headers.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let tools = self
            .pages("tools/list", |r: ListToolsResult| (r.tools, r.next_cursor))
            .await?;
        let mut mirrors = HashMap::new();
        let mut kept = Vec::with_capacity(tools.len());
        for tool in tools {
            let mut schema = tool.input_schema.clone();
            match header_params(&mut schema) {
                Ok(params) => {
                    mirrors.insert(tool.name.clone(), params);
                    kept.push(tool);
                }
                Err(e) => {
                    tracing::warn!(tool = %tool.name, "leaving out a tool with invalid x-mcp-header annotations: {e}")
                }
            }
        }
        *self
            .inner
            .mirrors
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(mirrors);
        Ok(kept)
    }

    /// Every prompt (all pages).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.pages("prompts/list", |r: ListPromptsResult| {
            (r.prompts, r.next_cursor)
        })
        .await
    }

    /// Every resource (all pages).
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.pages("resources/list", |r: ListResourcesResult| {
            (r.resources, r.next_cursor)
        })
        .await
    }

    /// Every resource template (all pages).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.pages(
            "resources/templates/list",
            |r: ListResourceTemplatesResult| (r.resource_templates, r.next_cursor),
        )
        .await
    }

    /// `resources/subscribe` (2025-11-25): the server then sends
    /// [`ServerEvent::ResourceUpdated`](super::ServerEvent::ResourceUpdated) when the
    /// resource changes. 2026-07-28 replaced it with `subscriptions/listen`.
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.resource_subscription("resources/subscribe", uri).await
    }

    /// `resources/unsubscribe` (2025-11-25).
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.resource_subscription("resources/unsubscribe", uri)
            .await
    }

    async fn resource_subscription(&self, method: &str, uri: &str) -> Result<(), ClientError> {
        let mut params = Map::new();
        params.insert("uri".into(), Value::String(uri.to_owned()));
        self.request(method, &params, None).await.map(drop)
    }

    /// The `Mcp-Param-*` headers for a call of `tool` (learning annotations first if
    /// needed). A tool this client left out as invalid is refused here.
    pub(crate) async fn mirrored(
        &self,
        tool: &str,
        args: Option<&Value>,
    ) -> Result<Vec<(String, String)>, ClientError> {
        let known = self
            .inner
            .mirrors
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .is_some();
        if !known {
            Box::pin(self.list_tools()).await?;
        }
        let mirrors = self.inner.mirrors.read().unwrap_or_else(|p| p.into_inner());
        let Some(params) = mirrors.as_ref().and_then(|m| m.get(tool)) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(params.len());
        for p in params {
            let value = args.and_then(|a| p.path.iter().try_fold(a, |v, k| v.get(k)));
            let text = match (p.kind, value) {
                (_, None | Some(Value::Null)) => continue,
                (ParamKind::String, Some(Value::String(s))) => {
                    sterna_types::header::encode(s).into_owned()
                }
                (ParamKind::Integer, Some(Value::Number(n))) => match (n.as_i64(), n.as_f64()) {
                    (Some(i), _) => i.to_string(),
                    (None, Some(f)) if f.fract() == 0.0 => format!("{}", f as i64),
                    _ => n.to_string(),
                },
                (ParamKind::Boolean, Some(Value::Bool(b))) => b.to_string(),
                (_, Some(other)) => {
                    tracing::warn!(tool, header = %p.name, "argument {other} does not match its x-mcp-header type; header left out");
                    continue;
                }
            };
            out.push((p.name.clone(), text));
        }
        Ok(out)
    }
}
