//! 2025-11-25 sessions belong to the principal that opened them: another principal
//! naming the session (`Mcp-Session-Id`) is refused on POST, on GET (the session's own
//! stream), on GET with `Last-Event-ID` (a replay of the owner's stream) and on DELETE,
//! and its answer to a question pushed to the owner never reaches the owner's handler.
//! Each refusal is checked next to the owner doing the same thing successfully.

use super::client::start;
use super::fixture::server;
use super::legacy::{Stream, send};
use http::StatusCode;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use sterna::http::{AuthLayer, BearerTokens, HttpConfig};

const ALICE: (&str, &str) = ("authorization", "Bearer alice-token");
const BOB: (&str, &str) = ("authorization", "Bearer bob-token");

fn auth() -> AuthLayer {
    let tokens = BearerTokens::new()
        .with("alice-token", "alice")
        .with("bob-token", "bob");
    AuthLayer::new(tokens).allow_anonymous()
}

/// Opens a session as the caller `who` (an `authorization` header, or none).
async fn initialize_as(addr: SocketAddr, who: &[(&str, &str)]) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "principals-test", "version": "1"}}});
    let r = send(addr, "POST", None, who, Some(&init)).await;
    assert_eq!(r.status, StatusCode::OK);
    let session = r.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = send(addr, "POST", Some(&session), who, Some(&note)).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    session
}

fn ping(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

/// The session's `-32001 Session not found`, the same answer as for a session that does
/// not exist (nothing tells the intruder it does).
async fn assert_not_found(r: Stream, what: &str) {
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{what}");
    let v = r.json().await;
    assert_eq!(v["error"]["code"], -32001, "{what}: {v}");
}

#[tokio::test]
async fn another_principal_cannot_post_get_or_delete_in_a_session() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), Some(auth())).await;
    let session = initialize_as(s.addr, &[ALICE]).await;
    for (who, name) in [(&[BOB][..], "bob"), (&[][..], "anonymous")] {
        let r = send(s.addr, "POST", Some(&session), who, Some(&ping(1))).await;
        assert_not_found(r, &format!("POST as {name}")).await;
        let r = send(s.addr, "GET", Some(&session), who, None).await;
        assert_not_found(r, &format!("GET as {name}")).await;
        let r = send(s.addr, "DELETE", Some(&session), who, None).await;
        assert_not_found(r, &format!("DELETE as {name}")).await;
    }
    // The session is untouched: alice still uses it, opens its stream, then ends it.
    let r = send(s.addr, "POST", Some(&session), &[ALICE], Some(&ping(2))).await;
    assert_eq!(
        r.json().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    let r = send(s.addr, "GET", Some(&session), &[ALICE], None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.headers["content-type"], "text/event-stream");
    drop(r);
    let r = send(s.addr, "DELETE", Some(&session), &[ALICE], None).await;
    assert_eq!(r.status, StatusCode::OK);
    s.shutdown().await;
}

/// Bob replays alice's stream with its `Last-Event-ID`, and answers the question pushed
/// to her (in her session, and in his own): refused or ignored; alice's handler goes on
/// with her answer only.
#[tokio::test]
async fn another_principal_cannot_replay_a_stream_or_answer_its_pushes() {
    let (srv, c) = server();
    let s = start(srv, HttpConfig::default(), Some(auth())).await;
    let session = initialize_as(s.addr, &[ALICE]).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "provision_database", "arguments": {"name": "orders"}}});
    let mut stream = send(s.addr, "POST", Some(&session), &[ALICE], Some(&call)).await;
    assert_eq!(stream.headers["content-type"], "text/event-stream");
    let push_event = loop {
        let e = stream.next().await.expect("a push");
        if e.data.is_some() {
            break e;
        }
    };
    let push = push_event.data.unwrap();
    assert_eq!(push["method"], "elicitation/create");
    let last = push_event.id.unwrap();

    let replay = [("last-event-id", last.as_str()), BOB];
    let r = send(s.addr, "GET", Some(&session), &replay, None).await;
    assert_not_found(r, "bob replaying alice's stream").await;

    let forged = json!({"jsonrpc": "2.0", "id": push["id"],
        "result": {"action": "accept", "content": {"region": "ap-south-1"}}});
    let r = send(s.addr, "POST", Some(&session), &[BOB], Some(&forged)).await;
    assert_not_found(r, "bob answering in alice's session").await;
    let bobs = initialize_as(s.addr, &[BOB]).await;
    let r = send(s.addr, "POST", Some(&bobs), &[BOB], Some(&forged)).await;
    // 2025-11-25: a response the server cannot accept gets an HTTP error status.
    assert_eq!(
        r.status,
        StatusCode::BAD_REQUEST,
        "a stray answer is refused"
    );
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 0, "still waiting");

    // Alice's own answer completes her call: the region is hers, not bob's.
    let answer = json!({"jsonrpc": "2.0", "id": push["id"],
        "result": {"action": "accept", "content": {"region": "eu-west-1"}}});
    let r = send(s.addr, "POST", Some(&session), &[ALICE], Some(&answer)).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    let done = stream.message().await;
    assert_eq!(done["id"], 7);
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Created orders in eu-west-1"
    );
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 1);
    // And alice, not bob, may replay her stream.
    let replay = [("last-event-id", last.as_str()), ALICE];
    let mut resumed = send(s.addr, "GET", Some(&session), &replay, None).await;
    assert_eq!(resumed.status, StatusCode::OK);
    assert_eq!(resumed.message().await["id"], 7);
    s.shutdown().await;
}
