//! The client and its MRTR round driver.

use super::envelope::{Message, WithMeta};
use super::error::{ClientError, GaveUp, ProtocolViolation, Refusal};
use super::handlers::Handlers;
use super::retry::{Attempt, Failure, Next, Policy};
use super::transport::{NotificationSink, Outgoing, Transport};
use crate::mirror::HeaderParam;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use sterna_types::capabilities::ClientCapabilities;
use sterna_types::jsonrpc::{Incoming, RawMessage, RequestId};
use sterna_types::meta::Implementation;

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

/// A 2026-07-28 MCP client. Cheap to clone; calls may run concurrently.
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) transport: Box<dyn Transport>,
    pub(crate) info: Option<Implementation>,
    pub(crate) caps: ClientCapabilities,
    pub(crate) handlers: Handlers,
    pub(crate) limits: Limits,
    pub(crate) sink: NotificationSink,
    pub(crate) version: Mutex<String>,
    pub(crate) next_id: AtomicI64,
    /// `x-mcp-header` annotations by tool, learned from `tools/list`.
    pub(crate) mirrors: RwLock<Option<HashMap<String, Vec<HeaderParam>>>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("capabilities", &self.inner.caps)
            .field("limits", &self.inner.limits)
            .finish()
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
    pub(crate) fn new(
        transport: Box<dyn Transport>,
        info: Option<Implementation>,
        caps: ClientCapabilities,
        handlers: Handlers,
        limits: Limits,
        sink: Option<NotificationSink>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                transport,
                info,
                caps,
                handlers,
                limits,
                sink: sink.unwrap_or_else(|| Arc::new(|_: &[u8]| {})),
                version: Mutex::new(sterna_types::version::LATEST.to_owned()),
                next_id: AtomicI64::new(1),
                mirrors: RwLock::new(None),
            }),
        }
    }

    /// The capabilities this client declares on every request.
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.inner.caps
    }

    /// The protocol version in use (after any negotiation).
    pub fn protocol_version(&self) -> String {
        self.inner
            .version
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Closes the transport (ends a child server process gracefully).
    pub async fn close(&self) {
        self.inner.transport.close().await;
    }

    fn next_id(&self) -> RequestId {
        RequestId::Number(self.inner.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends one request (with `_meta`) and returns its `result`, retrying as the
    /// [`Policy`] says (broken streams, version renegotiation, stale header annotations).
    pub(crate) async fn request(
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
    async fn attempt(
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

    /// A raw request (for methods without a typed helper); `_meta` is added (entries of
    /// a `_meta` in `params` are kept; the version, capabilities and client info are the
    /// client's own).
    pub async fn raw_request(
        &self,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<Value, ClientError> {
        self.typed(method, params).await
    }
}

/// The result of the response to `id`, or why there is none.
///
/// The result stays raw: decoding it through a `Value` would sort every object's keys,
/// and a form's fields must reach the user in the order the server sent them.
fn read_answer(method: &str, id: &RequestId, bytes: &[u8]) -> Result<Box<RawValue>, Failure> {
    let violation = |v: ProtocolViolation| Failure::Client(v.into());
    match RawMessage::parse(bytes) {
        Ok(Incoming::Result { id: got, result }) if got == *id => {
            serde_json::from_str(result.get()).map_err(|source| {
                violation(ProtocolViolation::Malformed {
                    method: method.to_owned(),
                    source,
                })
            })
        }
        Ok(Incoming::Error { error, .. }) => Err(Failure::Server(error)),
        Ok(_) => Err(violation(ProtocolViolation::WrongResponse)),
        Err(m) => Err(violation(ProtocolViolation::Unreadable(m.error))),
    }
}

/// Used in `fulfil` to surface a refusal with its reason.
impl From<Refusal> for ClientError {
    fn from(r: Refusal) -> Self {
        Self::Refused(r)
    }
}
