//! The client and its MRTR round driver.

use super::client::Client;
use super::envelope::{Message, WithMeta, read_answer};
use super::error::{ClientError, GaveUp, ProtocolViolation, Refusal, TransportError};
use super::link::Connected;
use super::retry::{Attempt, Failure, Next, Policy};
use super::transport::Outgoing;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use sterna_types::jsonrpc::RequestId;

/// Limits of the round driver.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_rounds: u32,
    pub(crate) budget: Duration,
    pub(crate) backoff: (Duration, Duration),
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_rounds: 10,
            budget: Duration::from_secs(600),
            backoff: (Duration::from_millis(50), Duration::from_secs(1)),
        }
    }
}

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

impl Client {
    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::Number(self.inner.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends one request and returns its `result`: in the server's era (found first, once),
    /// with `_meta` to a 2026-07-28 server, plain in a 2025-11-25 session. A remembered
    /// modern verdict that a bare 400/404/405 contradicts is forgotten and the server
    /// probed again.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: &Map<String, Value>,
        name: Option<&str>,
    ) -> Result<Box<RawValue>, ClientError> {
        let remembered = match self.connected().await? {
            Connected::Legacy(link) => return link.session.request(method, params, &|_| {}).await,
            Connected::Modern { remembered } => remembered,
        };
        match self.modern_request(method, params, name).await {
            Err(ClientError::Transport(TransportError::Http { status, .. }))
                if remembered && matches!(status, 400 | 404 | 405) =>
            {
                tracing::info!(
                    status,
                    "a remembered 2026-07-28 verdict failed; probing again"
                );
                self.forget_era().await;
                Box::pin(self.request(method, params, name)).await
            }
            other => other,
        }
    }

    /// Sends one request (with `_meta`) and returns its `result`, retrying as the
    /// [`Policy`] says (broken streams, version renegotiation, stale header annotations).
    pub(crate) async fn modern_request(
        &self,
        method: &str,
        params: &Map<String, Value>,
        name: Option<&str>,
    ) -> Result<Box<RawValue>, ClientError> {
        let mut policy = Policy::new(method);
        let mut attempt = Attempt {
            version: self.protocol_version(),
        };
        loop {
            let failure = match self.attempt(method, params, name, &attempt).await {
                Ok(v) => return Ok(v),
                Err(f) => f,
            };
            let before = attempt.version.clone();
            match policy.retry(&mut attempt, failure)? {
                Next::Retry if attempt.version != before => {
                    *self.inner.version.lock().unwrap_or_else(|p| p.into_inner()) =
                        attempt.version.clone();
                }
                Next::Retry => {}
                Next::RefreshTools => {
                    Box::pin(self.list_tools()).await?;
                }
            }
        }
    }

    /// One attempt: a new id, the envelope, the headers, the transport, the answer read.
    pub(crate) async fn attempt(
        &self,
        method: &str,
        params: &Map<String, Value>,
        name: Option<&str>,
        attempt: &Attempt,
    ) -> Result<Box<RawValue>, Failure> {
        let id = self.next_id();
        let body = serde_json::to_vec(&Message {
            jsonrpc: "2.0",
            id: &id,
            method,
            params: WithMeta {
                params,
                version: &attempt.version,
                caps: &self.inner.caps,
                info: self.inner.info.as_ref(),
            },
        })
        .expect("requests serialize");
        let header_params = if method == "tools/call" && self.inner.transport.uses_headers() {
            self.mirrored(name.unwrap_or(""), params.get("arguments"))
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
        let sink = self.inner.sink.clone();
        let bytes = self
            .inner
            .transport
            .request(out, sink)
            .await
            .map_err(Failure::Transport)?;
        read_answer(method, &id, &bytes)
    }

    pub(crate) async fn typed<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<T, ClientError> {
        let v = self.request(method, &params, None).await?;
        serde_json::from_str(v.get()).map_err(|source| {
            ProtocolViolation::Malformed {
                method: method.to_owned(),
                source,
            }
            .into()
        })
    }
}

/// Used in `fulfil` to surface a refusal with its reason.
impl From<Refusal> for ClientError {
    fn from(r: Refusal) -> Self {
        Self::Refused(r)
    }
}
