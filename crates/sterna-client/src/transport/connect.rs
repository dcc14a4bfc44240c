//! The HTTP client under the Streamable HTTP transport and the OAuth client: pooled
//! keep-alive connections, plain HTTP or HTTPS (the shared connector of `sterna-net`,
//! rustls with the `tls` feature).

use super::super::error::{ConfigError, TransportError};
use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use sterna_net::TlsRoots;

/// A TLS configuration as the client reports it.
impl From<sterna_net::TlsError> for TransportError {
    fn from(e: sterna_net::TlsError) -> Self {
        TransportError::Config(ConfigError::Tls {
            reason: e.to_string(),
        })
    }
}

/// A pooled HTTP client (HTTPS too with the `tls` feature): HTTP/2 where ALPN agrees on
/// it, or on every connection with prior knowledge (h2c); HTTP/1.1 otherwise. Cheap to
/// clone.
#[derive(Clone)]
pub(crate) struct HttpClient {
    inner: Client<sterna_net::Connector, Full<Bytes>>,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HttpClient")
    }
}

impl HttpClient {
    /// A client trusting `roots` for HTTPS; `http2_only`: every connection speaks HTTP/2
    /// from its first byte (prior knowledge: h2c on `http://`).
    pub(crate) fn new(roots: &TlsRoots, http2_only: bool) -> Result<Self, TransportError> {
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        let connector = sterna_net::connector(http, roots)?;
        let inner = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(64)
            .http2_only(http2_only)
            .build(connector);
        Ok(Self { inner })
    }

    /// Sends one request (no redirects are followed).
    pub(crate) async fn send(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<http::Response<Incoming>, TransportError> {
        self.inner
            .request(request)
            .await
            .map_err(|e| TransportError::Connection(Box::new(e)))
    }

    /// Whether this build speaks HTTPS.
    pub(crate) fn supports_https() -> bool {
        sterna_net::supports_https()
    }
}
