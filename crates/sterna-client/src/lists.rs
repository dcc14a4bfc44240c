//! Discovery and the list methods (all pages), and the `x-mcp-header` annotations the
//! tool list teaches, mirrored into `Mcp-Param-*` headers on each call.

use super::client::Client;
use super::error::{ClientError, ProtocolViolation};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::HashMap;
use sterna_types::mirror::{ParamKind, header_params};
use sterna_types::tools::{ListToolsResult, Tool};

impl Client {
    pub(crate) async fn pages<R: DeserializeOwned, I>(
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

    pub(crate) async fn resource_subscription(
        &self,
        method: &str,
        uri: &str,
    ) -> Result<(), ClientError> {
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

/// Every tool, and the `x-mcp-header` annotations learned from them (see
/// [`Client::list_tools`]).
pub(crate) async fn tools(client: &Client) -> Result<Vec<Tool>, ClientError> {
    let tools = client
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
    *client
        .inner
        .mirrors
        .write()
        .unwrap_or_else(|p| p.into_inner()) = Some(mirrors);
    Ok(kept)
}
