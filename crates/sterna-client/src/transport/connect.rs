//! The HTTP client under the Streamable HTTP transport and the OAuth client: pooled
//! keep-alive connections, plain HTTP or HTTPS (rustls, with the `tls` feature).

use super::super::error::{ConfigError, TransportError};
use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

#[cfg(feature = "tls")]
pub(crate) type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
#[cfg(not(feature = "tls"))]
type Connector = HttpConnector;

/// Which certificates the HTTPS client trusts.
///
/// By default: the platform's root certificates (and, with the `webpki-roots` feature,
/// Mozilla's). Tests and private deployments add their own root CA with
/// [`root_certificate_der`](Self::root_certificate_der) or
/// [`root_certificate_pem`](Self::root_certificate_pem), and may drop the platform's
/// roots with [`only_added_roots`](Self::only_added_roots).
#[derive(Clone, Default)]
pub struct TlsRoots {
    added: Vec<Vec<u8>>,
    only_added: bool,
}

impl std::fmt::Debug for TlsRoots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsRoots")
            .field("added", &self.added.len())
            .field("only_added", &self.only_added)
            .finish()
    }
}

impl TlsRoots {
    /// The platform's roots (the default).
    pub fn new() -> Self {
        Self::default()
    }

    /// Also trusts this root certificate (DER).
    pub fn root_certificate_der(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.added.push(der.into());
        self
    }

    /// Also trusts the root certificates in this PEM text.
    pub fn root_certificate_pem(mut self, pem: &[u8]) -> Result<Self, TransportError> {
        let certs = pem_certificates(pem)?;
        if certs.is_empty() {
            return Err(tls_config("no certificate in the PEM text".into()));
        }
        self.added.extend(certs);
        Ok(self)
    }

    /// Trusts only the certificates added here, not the platform's.
    pub fn only_added_roots(mut self) -> Self {
        self.only_added = true;
        self
    }
}

#[cfg(feature = "tls")]
fn pem_certificates(pem: &[u8]) -> Result<Vec<Vec<u8>>, TransportError> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    CertificateDer::pem_slice_iter(pem)
        .map(|c| c.map(|c| c.to_vec()))
        .collect::<Result<_, _>>()
        .map_err(|e| tls_config(format!("unreadable PEM: {e}")))
}

#[cfg(not(feature = "tls"))]
fn pem_certificates(_pem: &[u8]) -> Result<Vec<Vec<u8>>, TransportError> {
    Err(tls_config("built without the `tls` feature".into()))
}

fn tls_config(reason: String) -> TransportError {
    TransportError::Config(ConfigError::Tls { reason })
}

/// A pooled HTTP/1.1 client (HTTPS too with the `tls` feature). Cheap to clone.
#[derive(Clone)]
pub(crate) struct HttpClient {
    inner: Client<Connector, Full<Bytes>>,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HttpClient")
    }
}

impl HttpClient {
    /// A client trusting `roots` for HTTPS.
    pub(crate) fn new(roots: &TlsRoots) -> Result<Self, TransportError> {
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        let connector = connector(http, roots)?;
        let inner = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(64)
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
        cfg!(feature = "tls")
    }
}

#[cfg(feature = "tls")]
pub(crate) fn connector(
    mut http: HttpConnector,
    roots: &TlsRoots,
) -> Result<Connector, TransportError> {
    use std::sync::Arc;
    http.enforce_http(false);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_config(e.to_string()))?
        .with_root_certificates(root_store(roots)?)
        .with_no_client_auth();
    Ok(hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_or_http()
        .enable_http1()
        .wrap_connector(http))
}

#[cfg(not(feature = "tls"))]
fn connector(http: HttpConnector, _roots: &TlsRoots) -> Result<Connector, TransportError> {
    Ok(http)
}

#[cfg(feature = "tls")]
fn root_store(roots: &TlsRoots) -> Result<rustls::RootCertStore, TransportError> {
    use rustls::pki_types::CertificateDer;
    let mut store = rustls::RootCertStore::empty();
    if !roots.only_added {
        let native = rustls_native_certs::load_native_certs();
        for e in &native.errors {
            tracing::debug!(error = %e, "a platform root certificate could not be loaded");
        }
        let (_added, ignored) = store.add_parsable_certificates(native.certs);
        if ignored > 0 {
            tracing::debug!(ignored, "platform root certificates ignored");
        }
        #[cfg(feature = "webpki-roots")]
        store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    }
    for der in &roots.added {
        store
            .add(CertificateDer::from(der.clone()))
            .map_err(|e| tls_config(format!("unusable root certificate: {e}")))?;
    }
    Ok(store)
}
