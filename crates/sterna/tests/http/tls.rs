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
    serve_tls_with(pki, false).await
}

/// … in HTTP/2 only (ALPN `h2`, and nothing but HTTP/2 spoken) with `h2_only`.
async fn serve_tls_with(pki: &TestPki, h2_only: bool) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(pki.chain.clone(), pki.key.clone_key())
        .unwrap();
    if h2_only {
        config.alpn_protocols = vec![b"h2".to_vec()];
    }
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
                let mut builder =
                    hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                if h2_only {
                    builder = builder.http2_only();
                }
                let _ = builder
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

/// `HttpServer::tls` with `alpn` (empty: the server's default, `h2` then `http/1.1`),
/// serving the fixture until the sender is dropped.
async fn serve_http_server_tls(
    pki: &TestPki,
    alpn: Vec<Vec<u8>>,
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    serve_http_server_tls_limited(pki, alpn, sterna::server::http::DEFAULT_MAX_CONNECTIONS).await
}

/// [`serve_http_server_tls`] serving at most `max_connections` at once.
async fn serve_http_server_tls_limited(
    pki: &TestPki,
    alpn: Vec<Vec<u8>>,
    max_connections: usize,
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    use sterna::server::http::HttpServer;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(pki.chain.clone(), pki.key.clone_key())
        .unwrap();
    config.alpn_protocols = alpn;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = HttpServer::new(fixture::server().0)
        .tls(Arc::new(config))
        .max_connections(max_connections);
    tokio::spawn(server.serve_with_shutdown(listener, async {
        let _ = stopped.await;
    }));
    (addr, stop)
}

/// A TLS connection offering `alpn`; what the server agreed to.
async fn tls_connect(
    pki: &TestPki,
    addr: SocketAddr,
    alpn: &[&[u8]],
) -> (
    tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
    Option<Vec<u8>>,
) {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from(pki.ca_der.clone())).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .unwrap();
    let agreed = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
    (tls, agreed)
}

/// ALPN agrees on `h2` with a client that offers it, and a whole MRTR exchange runs on
/// that HTTP/2 connection; a client offering only `http/1.1` gets HTTP/1.1 on the same
/// listener.
#[tokio::test]
async fn http_server_tls_negotiates_h2_by_alpn() {
    use http_body_util::{BodyExt, Full};
    use serde_json::json;
    let pki = pki();
    let (addr, stop) = serve_http_server_tls(&pki, Vec::new()).await;
    let (tls, agreed) = tls_connect(&pki, addr, &[b"h2", b"http/1.1"]).await;
    assert_eq!(agreed.as_deref(), Some(&b"h2"[..]));
    let (mut h2, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls))
            .await
            .unwrap();
    tokio::spawn(conn);
    let mut send = async |body: serde_json::Value| {
        let req = http::Request::post(format!("https://localhost:{}/mcp", addr.port()))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "provision_database")
            .body(Full::new(bytes::Bytes::from(body.to_string())))
            .unwrap();
        let resp = h2.send_request(req).await.unwrap();
        assert_eq!(resp.version(), http::Version::HTTP_2);
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice::<serde_json::Value>(&bytes).unwrap()
    };
    let mut leg = super::client::call(1, "provision_database", json!({"name": "orders"}));
    let first = send(leg.clone()).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    leg["id"] = json!(2);
    leg["params"]["requestState"] = first["result"]["requestState"].clone();
    leg["params"]["inputResponses"] =
        json!({"pick_region": {"action": "accept", "content": {"region": "us-east-1"}}});
    let done = send(leg).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Created orders in us-east-1",
        "{done}"
    );

    let (tls, agreed) = tls_connect(&pki, addr, &[b"http/1.1"]).await;
    assert_eq!(agreed.as_deref(), Some(&b"http/1.1"[..]));
    let (mut h1, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .unwrap();
    tokio::spawn(conn);
    let body = super::client::call(3, "echo", json!({"text": "over 1.1"}));
    let req = http::Request::post("/mcp")
        .header("host", format!("localhost:{}", addr.port()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .body(Full::new(bytes::Bytes::from(body.to_string())))
        .unwrap();
    let resp = h1.send_request(req).await.unwrap();
    assert_eq!(
        (resp.status(), resp.version()),
        (http::StatusCode::OK, http::Version::HTTP_11)
    );
    drop(stop);
}

/// A full TLS server closes a connection whose handshake never starts to serve a new
/// client (the handshake alone would hold its slot until the header deadline, 30 s).
#[tokio::test]
async fn a_handshake_that_never_starts_does_not_keep_a_full_tls_server_from_a_new_client() {
    let pki = pki();
    let (addr, stop) = serve_http_server_tls_limited(&pki, Vec::new(), 1).await;
    let silent = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let served = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        let (tls, agreed) = tls_connect(&pki, addr, &[b"h2"]).await;
        assert_eq!(agreed.as_deref(), Some(&b"h2"[..]));
        tls
    })
    .await;
    assert!(served.is_ok(), "the new client's handshake completes");
    drop((silent, stop));
}

/// sterna's client offers `h2` by ALPN and speaks HTTP/2 when the server agrees: against
/// a server that speaks nothing else, a whole MRTR flow completes.
#[tokio::test]
async fn the_client_uses_h2_when_alpn_offers_it() {
    let pki = pki();
    let (addr, task) = serve_tls_with(&pki, true).await;
    let transport = HttpTransport::builder(&format!("https://localhost:{}/mcp", addr.port()))
        .tls_roots(
            TlsRoots::new()
                .root_certificate_der(pki.ca_der.clone())
                .only_added_roots(),
        )
        .build()
        .unwrap();
    let client = Client::builder("alpn", "1")
        .on_elicit(|_f: sterna::types::elicitation::ElicitFormParams| async {
            let content = serde_json::json!({"region": "eu-west-1"});
            sterna::types::elicitation::ElicitResult::accept(content.as_object().unwrap().clone())
        })
        .build(transport);
    let done = client
        .call_tool("provision_database", serde_json::json!({"name": "orders"}))
        .await
        .unwrap();
    assert_eq!(done.text_content(), "Created orders in eu-west-1");
    task.abort();
}
