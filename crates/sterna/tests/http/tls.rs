//! HTTPS: a sterna client calls a sterna HTTP endpoint behind TLS (rustls, a test CA made
//! with rcgen at test time), on 127.0.0.1.

use crate::fixture;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::SocketAddr;
use std::sync::Arc;
use sterna::client::transport::HttpTransport;
use sterna::client::{Client, TransportError};
use sterna::net::TlsRoots;
use sterna::server::http::{HttpConfig, McpService};
use tokio::net::TcpListener;

/// A CA and a server certificate for 127.0.0.1 and localhost, signed by it.
struct TestPki {
    ca_der: Vec<u8>,
    ca_pem: String,
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
}

fn pki() -> TestPki {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &ca)
        .unwrap();
    TestPki {
        ca_der: ca.der().to_vec(),
        ca_pem: ca.pem(),
        chain: vec![leaf.der().clone()],
        key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
    }
}

/// Serves the fixture server over TLS (terminated here with tokio-rustls) until dropped.
async fn serve_tls(pki: &TestPki) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(pki.chain.clone(), pki.key.clone_key())
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (server, _) = fixture::server();
    let service = McpService::new(server, HttpConfig::default());
    let task = tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let service = service.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), TowerToHyperService::new(service))
                    .await;
            });
        }
    });
    (addr, task)
}

#[tokio::test]
async fn https_with_a_test_root() {
    let pki = pki();
    let (addr, task) = serve_tls(&pki).await;
    for url in [
        format!("https://{addr}/mcp"),
        format!("https://localhost:{}/mcp", addr.port()),
    ] {
        let transport = HttpTransport::builder(&url)
            .tls_roots(
                TlsRoots::new()
                    .root_certificate_der(pki.ca_der.clone())
                    .only_added_roots(),
            )
            .build()
            .unwrap();
        let client = Client::builder("tls-test", "1.0.0").build(transport);
        let tools = client.list_tools().await.unwrap();
        assert!(
            tools.iter().any(|t| t.name == "provision_database"),
            "{url}"
        );
    }
    // The same root given as PEM.
    let roots = TlsRoots::new()
        .root_certificate_pem(pki.ca_pem.as_bytes())
        .unwrap();
    let transport = HttpTransport::builder(&format!("https://{addr}/mcp"))
        .tls_roots(roots.only_added_roots())
        .build()
        .unwrap();
    let client = Client::builder("tls-test", "1.0.0").build(transport);
    assert!(!client.list_tools().await.unwrap().is_empty());
    task.abort();
}

#[tokio::test]
async fn an_unknown_root_is_refused() {
    let pki = pki();
    let other = self::pki();
    let (addr, task) = serve_tls(&pki).await;
    let transport = HttpTransport::builder(&format!("https://{addr}/mcp"))
        .tls_roots(
            TlsRoots::new()
                .root_certificate_der(other.ca_der)
                .only_added_roots(),
        )
        .build()
        .unwrap();
    let client = Client::builder("tls-test", "1.0.0").build(transport);
    let err = client.list_tools().await.unwrap_err();
    assert!(
        matches!(
            err,
            sterna::client::ClientError::Transport(TransportError::Connection(_))
        ),
        "{err:?}"
    );
    task.abort();
}

/// The resource server's fetcher (JWKS, metadata, introspection) over HTTPS: it reaches a
/// server whose root it was given, and refuses one it was not; plain `http://` to a host
/// other than loopback stays refused.
#[tokio::test]
async fn the_resource_servers_fetcher_speaks_https() {
    use sterna::server::http::auth::{FetchError, HttpFetch, HyperFetcher};
    let pki = pki();
    let (addr, task) = serve_tls(&pki).await;
    let get = |url: String| http::Request::get(url).body(bytes::Bytes::new()).unwrap();
    let trusted = TlsRoots::new()
        .root_certificate_der(pki.ca_der.clone())
        .only_added_roots();
    let fetcher = HyperFetcher::https(&trusted).unwrap();
    // Any status is an answer: the MCP endpoint refuses a GET without a session, over TLS.
    let answer = fetcher
        .fetch(get(format!("https://localhost:{}/mcp", addr.port())))
        .await
        .unwrap();
    assert!(answer.status().is_client_error(), "{}", answer.status());
    let stranger = HyperFetcher::https(
        &TlsRoots::new()
            .root_certificate_der(self::pki().ca_der)
            .only_added_roots(),
    )
    .unwrap();
    let refused = stranger.fetch(get(format!("https://{addr}/mcp"))).await;
    assert!(
        matches!(refused, Err(FetchError::Transport(_))),
        "{refused:?}"
    );
    let plain = fetcher.fetch(get("http://example.com/jwks".into())).await;
    assert!(
        matches!(plain, Err(FetchError::Refused { .. })),
        "{plain:?}"
    );
    task.abort();
}

#[test]
fn bad_urls_and_pem_are_config_errors() {
    assert!(HttpTransport::builder("ftp://x/mcp").build().is_err());
    assert!(
        TlsRoots::new()
            .root_certificate_pem(b"not a certificate")
            .is_err()
    );
}
