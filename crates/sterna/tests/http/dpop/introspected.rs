//! An introspected token's `cnf` (RFC 9449 §6.2) binds it like a JWT's: accepted with a
//! proof by its key, refused as a bearer token or with another key.

use super::super::client::{post_with, set, start_on};
use super::super::idp::{Idp, RS_CLIENT, now};
use super::super::protected::{list_tools, policy, post_as, test_server};
use super::ProofKey;
use http::StatusCode;
use serde_json::json;
use sterna::server::http::HttpConfig;
use sterna::server::http::auth::{AuthLayer, Dpop, Introspection};
use tokio::net::TcpListener;

#[tokio::test]
async fn an_introspected_binding_needs_its_key() {
    let idp = Idp::start().await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resource = format!("http://{}/mcp", listener.local_addr().unwrap());
    let introspection = Introspection::builder(&resource, idp.issuer())
        .client_credentials(RS_CLIENT.0, RS_CLIENT.1)
        .build()
        .unwrap();
    let auth = AuthLayer::new(introspection)
        .scopes(policy())
        .dpop(Dpop::allowed(resource.clone()).build().unwrap());
    let s = start_on(listener, test_server(), HttpConfig::default(), Some(auth));
    let key = ProofKey::generate();
    idp.introspect_as(
        "opaque-bound",
        json!({"active": true, "iss": idp.issuer(), "aud": resource, "sub": "alice",
            "scope": "mcp:read", "exp": now() + 300, "token_type": "DPoP",
            "cnf": {"jkt": key.jkt()}}),
    );
    let dpop = |proof: String| {
        move |h: &mut Vec<(String, String)>| {
            set(h, "authorization", "DPoP opaque-bound");
            set(h, "dpop", &proof);
        }
    };
    let proof = key.proof("POST", &resource, "opaque-bound");
    let r = post_with(s.addr, &list_tools(1), dpop(proof)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = post_as(s.addr, &list_tools(2), "opaque-bound").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "as a bearer token");
    let thief = ProofKey::generate().proof("POST", &resource, "opaque-bound");
    let r = post_with(s.addr, &list_tools(3), dpop(thief)).await;
    assert_eq!(
        r.status,
        StatusCode::UNAUTHORIZED,
        "another key: {}",
        r.body
    );
    assert!(r.body.contains("binding"), "{}", r.body);
}
