//! The OAuth client end to end against the mock authorization server and resource: a
//! full flow (discovery, registration, PKCE, `iss`, step-up with the union of scopes),
//! refresh, a file store shared by two clients, bounded step-up. (The logs of a full
//! flow are checked for secrets in `tests/logs.rs`.)

use crate::oauth_mock::{self, Mock};
use serde_json::json;
use sterna::client::oauth::{FileStore, HeadlessRedirect, OAuth, OAuthBuilder};
use sterna::client::transport::HttpTransport;
use sterna::client::{Client, ClientError, TransportError};

fn oauth() -> OAuthBuilder {
    OAuth::authorization_code(HeadlessRedirect::new("http://127.0.0.1:9/callback"))
        .client_name("oauth-test")
}

fn client(mock: &Mock, oauth: OAuth) -> Client {
    let transport = HttpTransport::builder(&mock.mcp_url())
        .oauth(oauth)
        .build()
        .unwrap();
    Client::builder("oauth-test", "1.0.0").build(transport)
}

#[tokio::test]
async fn full_flow_with_step_up() {
    let mock = oauth_mock::start().await;
    let c = client(&mock, oauth().build());
    // 401 → discovery, registration, authorization for the challenged scope.
    assert!(!c.list_tools().await.unwrap().is_empty());
    // tools/call needs mcp:write: 403 → a fresh authorization for the union.
    let r = c.call_tool("add", json!({"a": 1, "b": 2})).await;
    assert!(r.is_ok(), "{r:?}");
    let seen = mock.seen.lock().unwrap();
    assert_eq!(seen.registrations, 1);
    assert_eq!(
        seen.authorizations,
        [
            Some("mcp:read offline_access".to_owned()),
            Some("mcp:read mcp:write offline_access".to_owned())
        ]
    );
    assert_eq!(seen.grants, ["authorization_code", "authorization_code"]);
    drop(seen);
    assert!(mock.verifier_ok());
}

#[tokio::test]
async fn a_refused_token_is_refreshed() {
    let mock = oauth_mock::start().await;
    let c = client(&mock, oauth().build());
    c.list_tools().await.unwrap();
    mock.revoke_all();
    c.list_tools().await.unwrap();
    let seen = mock.seen.lock().unwrap();
    assert_eq!(seen.grants, ["authorization_code", "refresh_token"]);
    assert_eq!(seen.authorizations.len(), 1);
}

#[tokio::test]
async fn a_file_store_is_shared_across_clients() {
    let mock = oauth_mock::start().await;
    let dir = std::env::temp_dir().join(format!("sterna-oauth-{}", mock.addr.port()));
    let path = dir.join("tokens.json");
    let first = client(&mock, oauth().store(FileStore::new(&path)).build());
    first.list_tools().await.unwrap();
    // A second client (a new process, say) finds the registration and the token.
    let second = client(&mock, oauth().store(FileStore::new(&path)).build());
    second.list_tools().await.unwrap();
    {
        let seen = mock.seen.lock().unwrap();
        assert_eq!(seen.registrations, 1);
        assert_eq!(seen.authorizations.len(), 1);
    }
    let stored = std::fs::read_to_string(&path).unwrap();
    assert!(stored.contains("access-SECRET-1"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn step_up_is_bounded() {
    let mock = oauth_mock::start().await;
    let c = client(&mock, oauth().max_step_ups(0).build());
    c.list_tools().await.unwrap();
    let err = c
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Transport(TransportError::Auth(_))),
        "{err:?}"
    );
    assert_eq!(mock.seen.lock().unwrap().authorizations.len(), 1);
}
