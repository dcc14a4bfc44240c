//! How requests reach a server: newline-delimited JSON over a byte stream (a child
//! process's stdio, an in-memory duplex) or Streamable HTTP.

#[cfg(feature = "http")]
mod http;
#[cfg(any(feature = "http", feature = "fuzzing"))]
pub(crate) mod sse;
mod stream;

#[cfg(feature = "http")]
pub use http::HttpTransport;
pub use stream::{StdioTransport, StreamTransport};

use super::error::TransportError;
use futures_util::future::BoxFuture;
use std::sync::Arc;
use sterna_types::jsonrpc::RequestId;

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
