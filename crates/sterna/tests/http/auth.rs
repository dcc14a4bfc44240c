//! Authentication and principal binding over HTTP.

use super::client::{call, post, post_with, set, start};
use super::fixture::server;
use http::StatusCode;
use serde_json::json;
use sterna::server::http::{AuthLayer, BearerTokens, HttpConfig};

fn tokens() -> BearerTokens {
    BearerTokens::new()
        .with("alice-token", "alice")
        .with("bob-token", "bob")
}

#[tokio::test]
async fn required_authentication() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), Some(AuthLayer::new(tokens()))).await;
    let body = call(1, "add", json!({"a": 1, "b": 2}));
    let r = post(s.addr, &body).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.headers["www-authenticate"], "Bearer realm=\"mcp\"");
    let r = post_with(s.addr, &body, |h| set(h, "authorization", "Bearer wrong")).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(
        r.headers["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("invalid_token")
    );
    let r = post_with(s.addr, &body, |h| {
        set(h, "authorization", "Bearer alice-token")
    })
    .await;
    assert_eq!(r.status, StatusCode::OK);
    s.shutdown().await;
}

#[tokio::test]
async fn states_are_bound_to_the_authenticated_principal() {
    let (srv, _) = server();
    let s = start(
        srv,
        HttpConfig::default(),
        Some(AuthLayer::new(tokens()).allow_anonymous()),
    )
    .await;
    let as_alice = |h: &mut Vec<(String, String)>| set(h, "authorization", "Bearer alice-token");
    let r1 = post_with(
        s.addr,
        &call(1, "provision_database", json!({"name": "orders"})),
        as_alice,
    )
    .await;
    let state = r1.json()["result"]["requestState"].clone();
    let mut retry = call(2, "provision_database", json!({"name": "orders"}));
    retry["params"]["inputResponses"] =
        json!({"pick_region": {"action": "accept", "content": {"region": "eu-west-1"}}});
    retry["params"]["requestState"] = state;
    let r = post_with(s.addr, &retry, |h| {
        set(h, "authorization", "Bearer bob-token")
    })
    .await;
    assert_eq!(r.code(), -32602, "bob cannot finish alice's flow");
    let r = post(s.addr, &retry).await;
    assert_eq!(r.code(), -32602, "nor can an anonymous caller");
    let r = post_with(s.addr, &retry, as_alice).await;
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "Created orders in eu-west-1"
    );
    s.shutdown().await;
}
