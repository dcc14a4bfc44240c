//! How requests reach a server: newline-delimited JSON over a byte stream (a child
//! process's stdio, an in-memory duplex) or Streamable HTTP.

#[cfg(feature = "http")]
mod busy;
#[cfg(feature = "http")]
mod connect;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod http_auth;
#[cfg(feature = "http")]
mod http_builder;
#[cfg(any(feature = "http", feature = "fuzzing"))]
pub(crate) mod sse;
mod stdio;
mod stream;
pub mod tap;

#[cfg(feature = "oauth")]
pub(crate) use connect::HttpClient;
#[cfg(feature = "http")]
pub use http::HttpTransport;
#[cfg(feature = "oauth")]
pub(crate) use http_auth::rebuild;
#[cfg(feature = "http")]
pub use http_builder::HttpTransportBuilder;
pub use stdio::{EXIT_TARGET, STDERR_TARGET, StdioTransport};
pub(crate) use stream::ProbeReply;
pub use stream::StreamTransport;

use super::error::TransportError;
use futures_util::future::BoxFuture;
use std::sync::Arc;
use sterna_types::jsonrpc::{Incoming, RawMessage, RequestId};

/// Receives the notifications a server sends (progress, log messages, subscription
/// events), as raw JSON-RPC messages.
pub type NotificationSink = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// One request to send.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// Its id.
    pub id: RequestId,
    /// Its method.
    pub method: String,
    /// The whole JSON-RPC message.
    pub body: Vec<u8>,
    /// The protocol version (for `MCP-Protocol-Version`).
    pub protocol_version: String,
    /// The tool or prompt name, or resource URI (for `Mcp-Name`).
    pub name: Option<String>,
    /// `Mcp-Param-*` headers: (name without the prefix, encoded value).
    pub params: Vec<(String, String)>,
}

/// Carries requests to a server and brings back the response.
pub trait Transport: Send + Sync + 'static {
    /// Sends one request and returns the response message (raw JSON). Notifications that
    /// arrive meanwhile go to `sink`.
    fn request(
        &self,
        req: Outgoing,
        sink: NotificationSink,
    ) -> BoxFuture<'_, Result<Vec<u8>, TransportError>>;

    /// Whether the server sees `Mcp-Name` / `Mcp-Param-*` headers (HTTP) — then the
    /// client learns `x-mcp-header` annotations before calling tools.
    fn uses_headers(&self) -> bool {
        false
    }

    /// Closes the transport (ends the child process, drops connections).
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// Where a message the server sent on its own (a request, a notification) arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// On the response stream of this request (an HTTP POST answered with SSE).
    #[cfg_attr(not(feature = "http"), allow(dead_code, reason = "an HTTP stream"))]
    Call(RequestId),
    /// Not tied to a request: stdio, or the HTTP GET stream.
    Unrelated,
}

/// What a 2025-11-25 server sends on its own: requests the client answers (elicitation,
/// sampling, roots, ping) and notifications. Attached to a transport once the server is
/// known to be legacy; 2026-07-28 servers send no requests.
pub(crate) trait Inbound: Send + Sync + 'static {
    /// The JSON-RPC response to a server request (`message` is the whole request).
    fn answer(&self, message: Vec<u8>, origin: Origin) -> BoxFuture<'static, Vec<u8>>;
    /// A notification (the whole message).
    fn notification(&self, message: &[u8]);
}

/// What a message from the server is, read once.
#[derive(Debug)]
pub(crate) enum Kind {
    /// A response (result or error) to this request.
    Response(RequestId),
    /// A request from the server (its method).
    Request(String),
    /// A notification.
    Notification,
    /// Anything else (logged here): an error without an id, an unreadable message.
    Other,
}

/// Reads what `message` is.
pub(crate) fn kind_of(message: &[u8]) -> Kind {
    match RawMessage::parse(message) {
        Ok(Incoming::Result { id, .. }) | Ok(Incoming::Error { id: Some(id), .. }) => {
            Kind::Response(id)
        }
        Ok(Incoming::Notification { .. }) => Kind::Notification,
        Ok(Incoming::Request { method, .. }) => Kind::Request(method.into_owned()),
        Ok(Incoming::Error { id: None, error }) => {
            tracing::warn!(%error, "the server reported an error without an id");
            Kind::Other
        }
        Err(e) => {
            tracing::warn!(error = %e.error, "an unreadable message from the server");
            Kind::Other
        }
    }
}
