//! Sending one request: in the server's era (found first, by `connect.rs`), with `_meta`
//! and the mirrored `Mcp-Param-*` headers to a 2026-07-28 server, retried as the
//! [`Policy`] says; and the paged lists, `tools/list` among them, which teaches the header
//! annotations a `tools/call` needs (`mirror.rs`) — a call may list the tools first, so
//! both live here.

use super::connect::{connected, forget_era};
use super::envelope::{Message, WithMeta, read_answer};
use super::error::{ClientError, GaveUp, ProtocolViolation, TransportError};
use super::link::Connected;
use super::mirror;
use super::retry::{Attempt, Failure, Next, Policy};
use super::shared::Shared;
use super::transport::Outgoing;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::time::{Duration, Instant};
use sterna_types::tools::{ListToolsResult, Tool};

/// Runs `fut` within what is left of `budget` since `started`.
pub(crate) async fn within<T>(
    started: Instant,
    budget: Duration,
    fut: impl std::future::Future<Output = Result<T, ClientError>>,
) -> Result<T, ClientError> {
    tokio::time::timeout(budget.saturating_sub(started.elapsed()), fut)
        .await
        .map_err(|_| ClientError::GaveUp(GaveUp::TimeBudget(budget)))?
}

/// Sends one request and returns its `result`: in the server's era (found first, once),
/// with `_meta` to a 2026-07-28 server, plain in a 2025-11-25 session. A remembered
/// modern verdict that a bare 400/404/405 contradicts is forgotten and the server
/// probed again.
pub(crate) async fn request(
    shared: &Shared,
    method: &str,
    params: &Map<String, Value>,
    name: Option<&str>,
) -> Result<Box<RawValue>, ClientError> {
    let remembered = match connected(shared).await? {
        Connected::Legacy(link) => return link.session.request(method, params, &|_| {}).await,
        Connected::Modern { remembered } => remembered,
    };
    match modern_request(shared, method, params, name).await {
        Err(ClientError::Transport(TransportError::Http { status, .. }))
            if remembered && matches!(status, 400 | 404 | 405) =>
        {
            tracing::info!(
                status,
                "a remembered 2026-07-28 verdict failed; probing again"
            );
            forget_era(shared).await;
            Box::pin(request(shared, method, params, name)).await
        }
        other => other,
    }
}

/// Sends one request (with `_meta`) and returns its `result`, retrying as the [`Policy`]
/// says (broken streams, version renegotiation, stale header annotations).
async fn modern_request(
    shared: &Shared,
    method: &str,
    params: &Map<String, Value>,
    name: Option<&str>,
) -> Result<Box<RawValue>, ClientError> {
    let mut policy = Policy::new(method);
    let mut attempt = Attempt {
        version: shared.version(),
    };
    loop {
        let failure = match attempt_once(shared, method, params, name, &attempt).await {
            Ok(v) => return Ok(v),
            Err(f) => f,
        };
        let before = attempt.version.clone();
        match policy.retry(&mut attempt, failure)? {
            Next::Retry if attempt.version != before => {
                shared.set_version(attempt.version.clone());
            }
            Next::Retry => {}
            Next::RefreshTools => {
                Box::pin(list_tools(shared)).await?;
            }
        }
    }
}

/// One attempt: a new id, the envelope, the headers, the transport, the answer read.
async fn attempt_once(
    shared: &Shared,
    method: &str,
    params: &Map<String, Value>,
    name: Option<&str>,
    attempt: &Attempt,
) -> Result<Box<RawValue>, Failure> {
    let id = shared.next_id();
    let body = serde_json::to_vec(&Message {
        jsonrpc: "2.0",
        id: &id,
        method,
        params: WithMeta {
            params,
            version: &attempt.version,
            caps: &shared.caps,
            info: shared.info.as_ref(),
        },
    })
    .expect("requests serialize");
    let header_params = if method == "tools/call" && shared.transport.uses_headers() {
        mirrored(shared, name.unwrap_or(""), params.get("arguments"))
            .await
            .map_err(Failure::Client)?
    } else {
        Vec::new()
    };
    let out = Outgoing {
        id: id.clone(),
        method: method.to_owned(),
        body,
        protocol_version: attempt.version.clone(),
        name: name.map(str::to_owned),
        params: header_params,
    };
    let sink = shared.sink.clone();
    let bytes = shared
        .transport
        .request(out, sink)
        .await
        .map_err(Failure::Transport)?;
    read_answer(method, &id, &bytes)
}

/// Sends one request and decodes its `result` as `T`.
pub(crate) async fn typed<T: DeserializeOwned>(
    shared: &Shared,
    method: &str,
    params: Map<String, Value>,
) -> Result<T, ClientError> {
    let v = request(shared, method, &params, None).await?;
    serde_json::from_str(v.get()).map_err(|source| {
        ProtocolViolation::Malformed {
            method: method.to_owned(),
            source,
        }
        .into()
    })
}

/// Every item of a paged list method (at most 1000 pages).
pub(crate) async fn pages<R: DeserializeOwned, I>(
    shared: &Shared,
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
        let (page, next) = items(typed::<R>(shared, method, params).await?);
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

/// Every tool (all pages), less those with invalid `x-mcp-header` annotations; the valid
/// annotations are kept for the calls that follow.
pub(crate) async fn list_tools(shared: &Shared) -> Result<Vec<Tool>, ClientError> {
    let tools = pages(shared, "tools/list", |r: ListToolsResult| {
        (r.tools, r.next_cursor)
    })
    .await?;
    let (kept, mirrors) = mirror::learn(tools);
    *shared.mirrors.write().unwrap_or_else(|p| p.into_inner()) = Some(mirrors);
    Ok(kept)
}

/// The `Mcp-Param-*` headers for a call of `tool` (learning annotations first if
/// needed); none for a tool without annotations, or left out as invalid.
async fn mirrored(
    shared: &Shared,
    tool: &str,
    args: Option<&Value>,
) -> Result<Vec<(String, String)>, ClientError> {
    let known = shared
        .mirrors
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .is_some();
    if !known {
        Box::pin(list_tools(shared)).await?;
    }
    let mirrors = shared.mirrors.read().unwrap_or_else(|p| p.into_inner());
    Ok(match mirrors.as_ref().and_then(|m| m.get(tool)) {
        Some(params) => mirror::headers(tool, params, args),
        None => Vec::new(),
    })
}
