//! 2025-11-25 clients over the stream transport: `initialize`, a session that follows the
//! negotiated revision, and the same handlers asking through pushed requests.

use super::fixture::server;
use super::wire::{Wire, caps_all, meta};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

/// Nothing a legacy client receives may carry 2026-only members.
fn assert_legacy(msg: &Value) {
    let text = msg.to_string();
    for banned in [
        "resultType",
        "inputRequests",
        "requestState",
        "ttlMs",
        "cacheScope",
    ] {
        assert!(
            !text.contains(banned),
            "{banned} reached a legacy client: {msg}"
        );
    }
}

async fn legacy_recv(w: &mut Wire) -> Value {
    let m = w.recv().await;
    assert_legacy(&m);
    m
}

async fn initialize(w: &mut Wire, caps: Value) -> Value {
    w.send(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": caps,
        "clientInfo": {"name": "legacy-test", "version": "1"}}}),
    )
    .await;
    let r = legacy_recv(w).await;
    w.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    r
}

#[tokio::test]
async fn initialize_negotiates_a_legacy_revision() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let r = initialize(&mut w, json!({"elicitation": {}})).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(r["result"]["serverInfo"]["name"], "fixture");
    assert!(r["result"]["capabilities"]["tools"].is_object());
    assert!(r["result"]["capabilities"]["logging"].is_object());
    w.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await;
    assert_eq!(
        legacy_recv(&mut w).await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    w.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    let r = legacy_recv(&mut w).await;
    assert!(r["result"]["tools"].as_array().unwrap().len() > 5);
    // A 2026 request on the same connection is still served statelessly.
    let r = w
        .request("server/discover", json!({"_meta": meta(json!({}))}))
        .await;
    assert_eq!(r["result"]["resultType"], "complete");
}

#[tokio::test]
async fn a_declarative_handler_asks_through_a_pushed_request() {
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    initialize(&mut w, json!({"elicitation": {}})).await;
    w.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                   "params": {"name": "provision_database", "arguments": {"name": "orders"}}}))
        .await;
    let push = legacy_recv(&mut w).await;
    assert_eq!(push["method"], "elicitation/create");
    assert_eq!(
        push["params"]["requestedSchema"]["properties"]["region"]["type"],
        "string"
    );
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 0);
    w.send(&json!({"jsonrpc": "2.0", "id": push["id"], "result":
                   {"action": "accept", "content": {"region": "eu-west-1"}}}))
        .await;
    let r = legacy_recv(&mut w).await;
    assert_eq!(r["id"], 7);
    assert_eq!(
        r["result"]["content"][0]["text"],
        "Created orders in eu-west-1"
    );
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_undeclared_capability_is_a_tool_error_not_a_2026_code() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    initialize(&mut w, json!({})).await;
    w.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "needs_sampling", "arguments": {}}}))
        .await;
    let r = legacy_recv(&mut w).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let _ = caps_all();
}
