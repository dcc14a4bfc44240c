//! The two wires a 2025-11-25 session runs on: a byte stream (stdio) and Streamable HTTP.

#[cfg(feature = "http")]
use super::http::LegacyHttp;
use super::wire_error::WireError;
use crate::transport::{NotificationSink, Outgoing, StreamTransport, Transport};
use std::sync::Arc;
use sterna_types::jsonrpc::RequestId;

/// Where the session's messages travel.
#[derive(Debug, Clone)]
pub(crate) enum Wire {
    /// Newline-delimited JSON (a child's stdio, a duplex).
    Stream(Arc<StreamTransport>),
    /// Streamable HTTP with a session.
    #[cfg(feature = "http")]
    Http(Arc<LegacyHttp>),
}

impl Wire {
    /// Sends a request and returns its response (raw JSON). On stdio, a call dropped
    /// before its response sends `notifications/cancelled`; over HTTP too.
    pub(crate) async fn call(
        &self,
        id: &RequestId,
        method: &str,
        body: Vec<u8>,
    ) -> Result<Vec<u8>, WireError> {
        match self {
            Self::Stream(s) => {
                let out = Outgoing {
                    id: id.clone(),
                    method: method.to_owned(),
                    body,
                    protocol_version: String::new(),
                    name: None,
                    params: Vec::new(),
                };
                // Notifications reach the client through the attached inbound side.
                let quiet: NotificationSink = Arc::new(|_: &[u8]| {});
                Ok(s.request(out, quiet).await?)
            }
            #[cfg(feature = "http")]
            Self::Http(h) => h.call(id, body, method == "initialize").await,
        }
    }

    /// Sends a notification.
    pub(crate) async fn notify(&self, body: Vec<u8>) -> Result<(), WireError> {
        match self {
            Self::Stream(s) => Ok(s.send_message(body).await?),
            #[cfg(feature = "http")]
            Self::Http(h) => h.send(body).await,
        }
    }

    /// Before a (new) `initialize`: forget the old session.
    pub(crate) fn reset(&self) {
        #[cfg(feature = "http")]
        if let Self::Http(h) = self {
            h.reset();
        }
    }

    /// After `initialize`: the negotiated revision goes into the headers (HTTP).
    pub(crate) fn opened(&self, version: &str) {
        #[cfg(feature = "http")]
        if let Self::Http(h) = self {
            h.negotiated(version);
        }
        let _ = version;
    }

    /// After `notifications/initialized`: the GET stream opens (HTTP).
    pub(crate) async fn ready(&self) {
        #[cfg(feature = "http")]
        if let Self::Http(h) = self {
            h.open_stream().await;
        }
    }

    /// Ends the session (HTTP: DELETE).
    pub(crate) async fn terminate(&self) {
        #[cfg(feature = "http")]
        if let Self::Http(h) = self {
            h.terminate().await;
        }
    }
}
