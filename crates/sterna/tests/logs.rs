//! Nothing secret reaches the logs: a full OAuth flow (registration with a client secret,
//! authorization code, PKCE verifier, access and refresh tokens, step-up) runs with
//! every `TRACE` event of every crate captured, and no secret appears.
//!
//! Its own test binary: the subscriber is process-global, so no other test may run
//! beside it.

#![cfg(feature = "oauth")]
#![allow(unreachable_pub, missing_docs, dead_code)]

#[path = "server/fixture.rs"]
mod fixture;
#[path = "http/oauth_mock.rs"]
mod oauth_mock;

use serde_json::json;
use std::io::Write;
use std::sync::{Arc, Mutex};
use sterna::client::Client;
use sterna::client::oauth::{HeadlessRedirect, OAuth};
use sterna::client::transport::HttpTransport;

/// Collects everything logged.
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

#[tokio::test]
async fn a_full_flow_logs_no_secret() {
    let logs = Captured::default();
    let sink = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();

    let mock = oauth_mock::start().await;
    let oauth =
        OAuth::authorization_code(HeadlessRedirect::new("http://127.0.0.1:9/callback")).build();
    let transport = HttpTransport::builder(&mock.mcp_url())
        .oauth(oauth.clone())
        .build()
        .unwrap();
    let c = Client::builder("logs-test", "1.0.0").build(transport);
    c.list_tools().await.unwrap();
    c.call_tool("add", json!({"a": 1, "b": 2})).await.unwrap();
    mock.revoke_all();
    c.list_tools().await.unwrap(); // refreshed
    // Debug output of the client and its configuration is redacted too.
    tracing::debug!(?oauth, ?c, "state after the flow");

    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    for step in [
        "registered",
        "authorization request",
        "step-up",
        "authorized",
    ] {
        assert!(text.contains(step), "{step:?} is not in the logs:\n{text}");
    }
    let seen = mock.seen.lock().unwrap();
    assert_eq!(
        seen.grants,
        ["authorization_code", "authorization_code", "refresh_token"]
    );
    assert!(seen.secrets.len() >= 9, "{:?}", seen.secrets.len());
    for secret in &seen.secrets {
        assert!(
            !text.contains(secret.as_str()),
            "a secret leaked into the logs:\n{text}"
        );
    }
    assert!(
        !text.contains("SECRET"),
        "a secret leaked into the logs:\n{text}"
    );
}
