//! Building a Streamable HTTP transport: TLS roots, extra headers, limits, OAuth.

use super::connect::HttpClient;
use super::http::{HttpTransport, config_url};
use crate::error::{ConfigError, TransportError};
use http::{HeaderMap, HeaderName, HeaderValue, Uri};
use sterna_net::TlsRoots;

/// Builds an [`HttpTransport`].
///
/// ```no_run
/// # fn run(ca_pem: &[u8]) -> Result<(), sterna_client::TransportError> {
/// use sterna_client::transport::HttpTransport;
/// use sterna_net::TlsRoots;
/// let transport = HttpTransport::builder("https://mcp.example.com/mcp")
///     .tls_roots(TlsRoots::new().root_certificate_pem(ca_pem)?)
///     .max_response(4 * 1024 * 1024)
///     .build()?;
/// # let _ = transport; Ok(()) }
/// ```
#[derive(Debug)]
pub struct HttpTransportBuilder {
    url: String,
    roots: TlsRoots,
    extra: Vec<(String, String)>,
    max_response: usize,
    http2_prior_knowledge: bool,
    #[cfg(feature = "oauth")]
    oauth: Option<crate::oauth::OAuth>,
}

impl HttpTransport {
    /// Starts building a transport to the endpoint at `url`.
    pub fn builder(url: &str) -> HttpTransportBuilder {
        HttpTransportBuilder {
            url: url.to_owned(),
            roots: TlsRoots::default(),
            extra: Vec::new(),
            max_response: 16 * 1024 * 1024,
            http2_prior_knowledge: false,
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }
}

impl HttpTransportBuilder {
    /// The certificates trusted for `https://` (default: the platform's roots).
    pub fn tls_roots(mut self, roots: TlsRoots) -> Self {
        self.roots = roots;
        self
    }

    /// The largest answer accepted, in bytes (default 16 MiB): a JSON body, or everything
    /// an SSE stream carries for one request. Larger answers fail the request.
    pub fn max_response(mut self, bytes: usize) -> Self {
        self.max_response = bytes;
        self
    }

    /// Speaks HTTP/2 from the first byte of every connection, without asking (prior
    /// knowledge): h2c on `http://`, and HTTP/2 only on `https://` (a server whose ALPN
    /// does not agree on `h2` then fails). Requests share one connection as streams.
    /// Without it the transport speaks HTTP/1.1 on `http://`, and on `https://` HTTP/2
    /// when the server agrees by ALPN (HTTP/1.1 otherwise).
    pub fn http2_prior_knowledge(mut self) -> Self {
        self.http2_prior_knowledge = true;
        self
    }

    /// Adds a header to every request. (For OAuth, use [`oauth`](Self::oauth) instead of
    /// a fixed `Authorization` header.)
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.extra.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Authorizes requests with OAuth: on `401` (or `403 insufficient_scope`) the client
    /// discovers the authorization server, obtains a token and retries; every request
    /// then carries the token.
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, oauth: crate::oauth::OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// The transport.
    pub fn build(self) -> Result<HttpTransport, TransportError> {
        let url: Uri = self
            .url
            .parse()
            .map_err(|e: http::uri::InvalidUri| config_url(&self.url, e.to_string()))?;
        match url.scheme_str() {
            Some("http") => {}
            Some("https") if HttpClient::supports_https() => {}
            Some("https") => {
                return Err(config_url(
                    &self.url,
                    "https:// needs the `tls` feature".into(),
                ));
            }
            _ => {
                return Err(config_url(
                    &self.url,
                    "only http:// and https:// URLs are supported".into(),
                ));
            }
        }
        let mut extra = HeaderMap::new();
        for (name, value) in &self.extra {
            let bad = || {
                TransportError::Config(ConfigError::Header {
                    name: name.to_owned(),
                })
            };
            let n = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
            let v = HeaderValue::from_str(value).map_err(|_| bad())?;
            extra.append(n, v);
        }
        Ok(HttpTransport {
            client: HttpClient::new(&self.roots, self.http2_prior_knowledge)?,
            url,
            extra,
            max_response: self.max_response,
            #[cfg(feature = "oauth")]
            oauth: self.oauth,
        })
    }
}
