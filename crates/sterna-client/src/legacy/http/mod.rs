//! Streamable HTTP as 2025-11-25 defines it: the `Mcp-Session-Id` from the `initialize`
//! response, sent with `MCP-Protocol-Version` on every later POST, GET and DELETE; a GET
//! stream for what the server sends on its own; SSE streams resumed with `Last-Event-ID`
//! after the server's `retry`; the server's requests answered by POST (202 expected) from
//! whichever stream carried them; responses matched by id on any stream.
//!
//! Requests carry no 2026-07-28 header (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`).

mod get;
mod probe;
mod read;
mod stream;

pub(crate) use probe::probe;

use super::wire_error::WireError;
use crate::error::TransportError;
use crate::transport::{HttpTransport, Inbound, Kind, Origin, kind_of};
use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{Method, StatusCode};
use read::{error_text, is_sse, read_all};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use sterna_types::jsonrpc::{Incoming, RawMessage, RequestId};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// The session headers, once `initialize` has set them.
#[derive(Debug, Default, Clone)]
struct SessionHeaders {
    session: Option<String>,
    version: Option<String>,
}

/// A 2025-11-25 session over Streamable HTTP.
pub(crate) struct LegacyHttp {
    http: HttpTransport,
    headers: Mutex<SessionHeaders>,
    waiters: Mutex<HashMap<RequestId, oneshot::Sender<Vec<u8>>>>,
    inbound: Arc<dyn Inbound>,
    /// Ends the GET stream (a new session, a close, or the client dropped).
    get_stop: Mutex<CancellationToken>,
    me: Weak<LegacyHttp>,
}

impl std::fmt::Debug for LegacyHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacyHttp")
            .field("url", self.http.endpoint())
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Drop for LegacyHttp {
    fn drop(&mut self) {
        lock(&self.get_stop).cancel();
    }
}

/// Removes a waiter when its call ends, however it ends.
struct Waiting<'a> {
    id: &'a RequestId,
    http: &'a LegacyHttp,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        lock(&self.http.waiters).remove(self.id);
    }
}

/// Sends `notifications/cancelled` (2025-11-25 cancellation) when a call is dropped
/// before its response: a closed stream is no cancellation in this era.
struct CancelOnDrop {
    id: Option<RequestId>,
    http: Weak<LegacyHttp>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (Some(id), Some(http)) = (self.id.take(), self.http.upgrade()) else {
            return;
        };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let msg = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "the client stopped waiting"}
        });
        rt.spawn(async move {
            let _ = http.send(msg.to_string().into_bytes()).await;
        });
    }
}

impl LegacyHttp {
    pub(crate) fn new(http: HttpTransport, inbound: Arc<dyn Inbound>) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            http,
            headers: Mutex::default(),
            waiters: Mutex::default(),
            inbound,
            get_stop: Mutex::new(CancellationToken::new()),
            me: me.clone(),
        })
    }

    /// Forgets the session (before a new `initialize`) and ends its GET stream.
    pub(crate) fn reset(&self) {
        *lock(&self.headers) = SessionHeaders::default();
        let mut stop = lock(&self.get_stop);
        stop.cancel();
        *stop = CancellationToken::new();
    }

    /// The revision `initialize` negotiated: sent as `MCP-Protocol-Version` from now on.
    pub(crate) fn negotiated(&self, version: &str) {
        lock(&self.headers).version = Some(version.to_owned());
    }

    fn session_headers(&self) -> SessionHeaders {
        lock(&self.headers).clone()
    }

    /// One request to the endpoint with the session's headers (none on `initialize`).
    async fn exchange(
        &self,
        method: Method,
        mut headers: Vec<(&str, &str)>,
        body: Vec<u8>,
        with_session: bool,
    ) -> Result<http::Response<hyper::body::Incoming>, TransportError> {
        let s = if with_session {
            self.session_headers()
        } else {
            SessionHeaders::default()
        };
        if let Some(id) = &s.session {
            headers.push(("mcp-session-id", id));
        }
        if let Some(v) = &s.version {
            headers.push(("mcp-protocol-version", v));
        }
        let request = self.http.prepare(method, &headers, Bytes::from(body))?;
        self.http.exchange(request).await
    }

    async fn post(
        &self,
        body: Vec<u8>,
        with_session: bool,
    ) -> Result<http::Response<hyper::body::Incoming>, TransportError> {
        let headers = vec![
            (CONTENT_TYPE.as_str(), "application/json"),
            (ACCEPT.as_str(), "application/json, text/event-stream"),
        ];
        self.exchange(Method::POST, headers, body, with_session)
            .await
    }

    /// A 404 answering a request that carried a session: the session is gone.
    fn gone(&self, status: StatusCode, sent_session: bool) -> bool {
        status == StatusCode::NOT_FOUND && sent_session
    }

    /// Sends a request and returns its response (raw JSON), from the POST's JSON body or
    /// SSE stream — or, after a resume, from a GET stream.
    pub(crate) async fn call(
        &self,
        id: &RequestId,
        body: Vec<u8>,
        initialize: bool,
    ) -> Result<Vec<u8>, WireError> {
        let (tx, rx) = oneshot::channel();
        lock(&self.waiters).insert(id.clone(), tx);
        let _waiting = Waiting { id, http: self };
        let mut cancel = CancelOnDrop {
            id: (!initialize).then(|| id.clone()),
            http: self.me.clone(),
        };
        let sent_session = !initialize && self.session_headers().session.is_some();
        let response = self.post(body, !initialize).await?;
        let status = response.status();
        if initialize {
            let session = response
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            lock(&self.headers).session = session;
        }
        if self.gone(status, sent_session) {
            cancel.id = None;
            return Err(WireError::SessionGone);
        }
        let answer = if status.is_success() && is_sse(response.headers()) {
            self.follow(id, response.into_body(), rx).await
        } else {
            self.json_answer(status, response.into_body()).await
        };
        cancel.id = None;
        answer
    }

    async fn json_answer(
        &self,
        status: StatusCode,
        body: hyper::body::Incoming,
    ) -> Result<Vec<u8>, WireError> {
        let bytes = read_all(body, self.http.response_limit()).await?;
        // Read quietly: a body that is no JSON-RPC at all (an HTML 404 page) is an HTTP
        // error, not an unreadable message to warn about.
        match RawMessage::parse(&bytes) {
            // An error without an id (a session or header problem) is still an answer.
            Ok(Incoming::Result { .. } | Incoming::Error { .. }) => {
                crate::transport::tap::received("http", &bytes);
                Ok(bytes)
            }
            _ => Err(WireError::Transport(TransportError::Http {
                status: status.as_u16(),
                body: String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).into_owned(),
            })),
        }
    }

    /// Sends a notification, or the answer to a server request: 202 expected (other 2xx
    /// tolerated).
    pub(crate) async fn send(&self, message: Vec<u8>) -> Result<(), WireError> {
        let sent_session = self.session_headers().session.is_some();
        let response = self.post(message, true).await?;
        let status = response.status();
        if self.gone(status, sent_session) {
            return Err(WireError::SessionGone);
        }
        if status.is_success() {
            return Ok(());
        }
        Err(WireError::Transport(TransportError::Http {
            status: status.as_u16(),
            body: error_text(response.into_body()).await,
        }))
    }

    /// Ends the session: DELETE with its id (a 405 is fine), and the GET stream.
    pub(crate) async fn terminate(&self) {
        lock(&self.get_stop).cancel();
        if self.session_headers().session.is_none() {
            return;
        }
        let delete = self.exchange(Method::DELETE, Vec::new(), Vec::new(), true);
        match tokio::time::timeout(Duration::from_secs(2), delete).await {
            Ok(Ok(r)) => tracing::debug!(status = %r.status(), "session deleted"),
            Ok(Err(e)) => tracing::debug!(error = %e, "DELETE of the session failed"),
            Err(_) => tracing::debug!("no answer to DELETE within 2 s"),
        }
    }

    /// Hands a message from any stream to whoever waits for it.
    fn route(&self, message: String, origin: Origin) {
        crate::transport::tap::received("http", message.as_bytes());
        match kind_of(message.as_bytes()) {
            Kind::Response(id) => match lock(&self.waiters).remove(&id) {
                Some(tx) => {
                    let _ = tx.send(message.into_bytes());
                }
                None => tracing::debug!(%id, "a response to no request in flight"),
            },
            Kind::Request(_) => {
                let answer = self.inbound.answer(message.into_bytes(), origin);
                let me = self.me.clone();
                tokio::spawn(async move {
                    let response = answer.await;
                    if let Some(http) = me.upgrade()
                        && let Err(e) = http.send(response).await
                    {
                        tracing::warn!(error = %e, "could not answer a request of the server");
                    }
                });
            }
            Kind::Notification => self.inbound.notification(message.as_bytes()),
            Kind::Other => {}
        }
    }
}
