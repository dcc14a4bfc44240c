//! No token ever reaches the logs, whatever happens to it.

use super::client::call;
use super::protected::{list_tools, post_as, setup};
use http::StatusCode;
use serde_json::json;
use std::io::Write;
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;

    fn make_writer(&'a self) -> Captured {
        self.clone()
    }
}

/// Everything logged at any level, by the server, its validator and the authorization
/// server's fetches.
#[tokio::test]
async fn tokens_never_appear_in_the_logs() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(captured.clone())
        .finish();
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");

    let t = setup(|b| b).await;
    let good = t.token("alice", "mcp:read");
    let read_only_provision = good.clone();
    let claims = t.idp.claims(&t.resource, "alice", "mcp:read");
    let expired = t.key.sign(&{
        let mut c = claims.clone();
        c["exp"] = json!(0);
        c
    });
    let wrong_audience = t.key.sign(&{
        let mut c = claims.clone();
        c["aud"] = json!("http://127.0.0.1:1/mcp");
        c
    });
    let unknown_kid = t.key.sign_with(&claims, |h| h.kid = Some("nope".into()));
    let bad_signature = super::idp::SigningKey::generate("k1").sign(&claims);
    let cases = [
        (&good, StatusCode::OK),
        (&expired, StatusCode::UNAUTHORIZED),
        (&wrong_audience, StatusCode::UNAUTHORIZED),
        (&unknown_kid, StatusCode::UNAUTHORIZED),
        (&bad_signature, StatusCode::UNAUTHORIZED),
    ];
    for (token, status) in cases {
        assert_eq!(
            post_as(t.s.addr, &list_tools(1), token).await.status,
            status
        );
    }
    let r = post_as(
        t.s.addr,
        &call(2, "provision_database", json!({"name": "x"})),
        &read_only_provision,
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let garbage = "not-a-jwt-but-a-secret-0123456789";
    assert_eq!(
        post_as(t.s.addr, &list_tools(3), garbage).await.status,
        StatusCode::UNAUTHORIZED
    );
    t.s.shutdown().await;

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("credentials refused"),
        "refusals are logged:\n{logs}"
    );
    assert!(logs.contains("insufficient scope"), "{logs}");
    for token in [
        &good,
        &expired,
        &wrong_audience,
        &unknown_kid,
        &bad_signature,
    ] {
        for (i, part) in token.split('.').enumerate() {
            assert!(
                !logs.contains(part),
                "part {i} of a token is in the logs:\n{logs}"
            );
        }
    }
    assert!(!logs.contains(garbage), "{logs}");
}
