//! 2025-11-25 sessions opened with a DPoP-bound token: every request of the session needs
//! a fresh proof (POST, GET, DELETE alike), and the session stays bound to the key: the
//! same user with a token bound to another key, or with a bearer token, cannot use it.

use super::super::legacy::{Stream, send};
use super::{ProofKey, Protected, protected};
use http::StatusCode;
use serde_json::{Value, json};
use sterna::server::http::auth::Dpop;

/// `Authorization: DPoP` and a fresh proof for `method`.
fn proven(s: &Protected, method: &str, token: &str, key: &ProofKey) -> [(String, String); 2] {
    [
        ("authorization".into(), format!("DPoP {token}")),
        ("dpop".into(), key.proof(method, &s.resource, token)),
    ]
}

async fn send_as(
    s: &Protected,
    method: &str,
    session: Option<&str>,
    headers: &[(String, String)],
    body: Option<&Value>,
) -> Stream {
    let extra: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    send(s.addr(), method, session, &extra, body).await
}

fn ping(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

async fn open(s: &Protected, token: &str, key: &ProofKey) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "dpop-session-test", "version": "1"}}});
    let h = proven(s, "POST", token, key);
    let r = send_as(s, "POST", None, &h, Some(&init)).await;
    assert_eq!(r.status, StatusCode::OK);
    let session = r.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let h = proven(s, "POST", token, key);
    let r = send_as(s, "POST", Some(&session), &h, Some(&note)).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    session
}

#[tokio::test]
async fn a_bound_session_needs_a_fresh_proof_by_its_key_on_every_request() {
    let s = protected(Dpop::allowed).await;
    let key = ProofKey::generate();
    let token = s.bound_token("alice", "mcp:read", &key);
    let session = open(&s, &token, &key).await;
    let sid = Some(session.as_str());

    let h = proven(&s, "POST", &token, &key);
    let r = send_as(&s, "POST", sid, &h, Some(&ping(1))).await;
    assert_eq!(r.json().await["id"], 1);
    let r = send_as(&s, "POST", sid, &h, Some(&ping(2))).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "the same proof twice");
    let no_proof = [h[0].clone()];
    let r = send_as(&s, "POST", sid, &no_proof, Some(&ping(3))).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "no proof");

    // Alice again, with a token bound to another key (properly proven), or a bearer
    // token: the session is not hers under that key.
    let other = ProofKey::generate();
    let rebound = s.bound_token("alice", "mcp:read", &other);
    let h = proven(&s, "POST", &rebound, &other);
    let r = send_as(&s, "POST", sid, &h, Some(&ping(4))).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "another key");
    let bearer = [(
        "authorization".to_owned(),
        format!("Bearer {}", s.bearer_token("alice", "mcp:read")),
    )];
    let r = send_as(&s, "POST", sid, &bearer, Some(&ping(5))).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "a bearer token");

    // GET and DELETE are proven too, each for its own method.
    let wrong = proven(&s, "POST", &token, &key);
    let r = send_as(&s, "GET", sid, &wrong, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "a POST proof on GET");
    let r = send_as(&s, "GET", sid, &proven(&s, "GET", &token, &key), None).await;
    assert_eq!(r.status, StatusCode::OK);
    drop(r);
    let h = proven(&s, "DELETE", &token, &key);
    let r = send_as(&s, "DELETE", sid, &h, None).await;
    assert_eq!(r.status, StatusCode::OK);
}
