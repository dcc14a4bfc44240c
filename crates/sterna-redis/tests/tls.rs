//! `rediss://` against a real `redis-server` serving TLS on 127.0.0.1 with a certificate
//! of a test CA made here (required: the test fails, never skips, when redis-server is
//! missing). Run with `--features tls`.

#![cfg(feature = "tls")]
#![allow(missing_docs)]

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use sterna::server::state::ReplayStore;
use sterna_redis::Redis;

/// A TLS-only redis-server, stopped (and its files removed) when dropped.
struct TlsServer {
    child: Child,
    port: u16,
    dir: std::path::PathBuf,
    ca_pem: String,
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn start() -> TlsServer {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = std::env::temp_dir().join(format!("sterna-redis-tls-{port}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    std::fs::write(dir.join("cert.pem"), cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), key.serialize_pem()).unwrap();
    let p = port.to_string();
    let child = Command::new("redis-server")
        .args([
            "--port",
            "0",
            "--tls-port",
            &p,
            "--bind",
            "127.0.0.1",
            "--tls-cert-file",
            "cert.pem",
            "--tls-key-file",
            "key.pem",
            "--tls-ca-cert-file",
            "ca.pem",
            "--tls-auth-clients",
            "no",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-server is required for these tests (apt-get install redis-server)");
    let server = TlsServer {
        child,
        port,
        dir,
        ca_pem: ca.pem(),
    };
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return server;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("redis-server (TLS) did not start on port {port}");
}

#[tokio::test]
async fn rediss_with_the_test_ca_works_and_an_unknown_ca_is_refused() {
    let server = start();
    let url = format!("rediss://127.0.0.1:{}/", server.port);
    let redis = Redis::connect_with_root_ca(&url, server.ca_pem.as_bytes())
        .await
        .unwrap();
    let store = redis.replay_store();
    let at = 4_000_000_000;
    let owner = sterna::server::QuotaKey::of(&sterna::server::Principal::new("owner"));
    assert!(store.consume([1; 16], &owner, at).await.unwrap());
    assert!(
        !store.consume([1; 16], &owner, at).await.unwrap(),
        "a replay is refused"
    );
    let warnings = redis.check_settings().await.unwrap();
    assert!(
        warnings.iter().any(|w| w.contains("appendonly")),
        "{warnings:?}"
    );
    // The platform's roots do not include the test CA.
    let refused = Redis::connect(&url).await;
    assert!(
        refused.is_err(),
        "a certificate of an unknown CA is refused"
    );
}
