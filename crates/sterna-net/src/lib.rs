//! The network pieces sterna's client and server share: the connector their HTTP clients
//! use (plain HTTP, and HTTPS with rustls under the `tls` feature) and the root
//! certificates it trusts ([`TlsRoots`]). The client's Streamable HTTP transport and OAuth
//! flows, and the resource server's JWKS and introspection fetches, are built on it.
//!
//! The public interface is: [`TlsRoots`], [`TlsError`], [`Connector`], [`connector`].

#![forbid(unsafe_code)]

use hyper_util::client::legacy::connect::HttpConnector;

/// The connector of sterna's HTTP clients: HTTPS and HTTP with the `tls` feature, plain
/// HTTP without it.
#[cfg(feature = "tls")]
pub type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
/// The connector of sterna's HTTP clients: HTTPS and HTTP with the `tls` feature, plain
/// HTTP without it.
#[cfg(not(feature = "tls"))]
pub type Connector = HttpConnector;

/// Which certificates the HTTPS clients trust.
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

/// Why a TLS configuration cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TlsError {
    /// A certificate or the TLS settings are unusable (the reason says which).
    Config {
        /// What is wrong.
        reason: String,
    },
    /// This build has no TLS (the `tls` feature is off).
    Unsupported,
}

impl std::fmt::Display for TlsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Config { reason } => write!(f, "TLS configuration: {reason}"),
            Self::Unsupported => f.write_str("built without the `tls` feature"),
        }
    }
}

impl std::error::Error for TlsError {}

fn config(reason: String) -> TlsError {
    TlsError::Config { reason }
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
    pub fn root_certificate_pem(mut self, pem: &[u8]) -> Result<Self, TlsError> {
        let certs = pem_certificates(pem)?;
        if certs.is_empty() {
            return Err(config("no certificate in the PEM text".into()));
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
fn pem_certificates(pem: &[u8]) -> Result<Vec<Vec<u8>>, TlsError> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    CertificateDer::pem_slice_iter(pem)
        .map(|c| c.map(|c| c.to_vec()))
        .collect::<Result<_, _>>()
        .map_err(|e| config(format!("unreadable PEM: {e}")))
}

#[cfg(not(feature = "tls"))]
fn pem_certificates(_pem: &[u8]) -> Result<Vec<Vec<u8>>, TlsError> {
    Err(TlsError::Unsupported)
}

/// The connector over `http` that trusts `roots` for HTTPS (with the `tls` feature;
/// without it, `http` itself: plain HTTP only). Over TLS it offers `h2` and `http/1.1` by
/// ALPN; a client built on it speaks HTTP/2 where the server agrees to.
#[cfg(feature = "tls")]
pub fn connector(mut http: HttpConnector, roots: &TlsRoots) -> Result<Connector, TlsError> {
    use std::sync::Arc;
    http.enforce_http(false);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| config(e.to_string()))?
        .with_root_certificates(root_store(roots)?)
        .with_no_client_auth();
    Ok(hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_all_versions()
        .wrap_connector(http))
}

/// The connector over `http` that trusts `roots` for HTTPS (with the `tls` feature;
/// without it, `http` itself: plain HTTP only).
#[cfg(not(feature = "tls"))]
pub fn connector(http: HttpConnector, _roots: &TlsRoots) -> Result<Connector, TlsError> {
    Ok(http)
}

/// Whether this build speaks HTTPS.
pub fn supports_https() -> bool {
    cfg!(feature = "tls")
}

#[cfg(feature = "tls")]
fn root_store(roots: &TlsRoots) -> Result<rustls::RootCertStore, TlsError> {
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
            .map_err(|e| config(format!("unusable root certificate: {e}")))?;
    }
    Ok(store)
}
