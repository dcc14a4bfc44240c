//! The resource server with token introspection (RFC 7662) instead of JWTs.

use super::client::{call, start_on};
use super::idp::{Idp, RS_CLIENT, now};
use super::protected::{list_tools, policy, post_as, test_server, www};
use http::StatusCode;
use serde_json::{Value, json};
use sterna::server::http::HttpConfig;
use sterna::server::http::auth::{AuthLayer, Introspection};
use tokio::net::TcpListener;

#[tokio::test]
async fn introspection_validates_opaque_tokens_and_caches_answers() {
    let idp = Idp::start().await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resource = format!("http://{}/mcp", listener.local_addr().unwrap());
    let introspection = Introspection::builder(&resource, idp.issuer())
        .client_credentials(RS_CLIENT.0, RS_CLIENT.1)
        .build()
        .unwrap();
    let auth = AuthLayer::new(introspection).scopes(policy());
    let s = start_on(listener, test_server(), HttpConfig::default(), Some(auth));
    let active = |sub: &str, patch: Value| {
        let mut a = json!({"active": true, "iss": idp.issuer(), "aud": [resource, "other"], "sub": sub,
            "scope": "mcp:read", "client_id": "c", "exp": now() + 300, "token_type": "Bearer"});
        for (k, v) in patch.as_object().unwrap() {
            a[k] = v.clone();
        }
        a
    };
    idp.introspect_as("opaque-alice", active("alice", json!({})));
    idp.introspect_as(
        "opaque-other-audience",
        active("x", json!({"aud": "http://127.0.0.1:1/mcp"})),
    );
    idp.introspect_as("opaque-expired", active("x", json!({"exp": now() - 100})));
    idp.introspect_as(
        "opaque-other-issuer",
        active("x", json!({"iss": "http://127.0.0.1:1"})),
    );
    idp.introspect_as("opaque-no-subject", active("x", json!({"sub": null})));

    let r = post_as(s.addr, &call(1, "whoami", json!({})), "opaque-alice").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let me: Value =
        serde_json::from_str(r.json()["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(me["id"], format!("{}#alice", idp.issuer()));
    assert_eq!(me["scopes"], json!(["mcp:read"]));
    assert_eq!(
        idp.metadata_fetches(),
        1,
        "endpoint discovered from the metadata"
    );
    assert_eq!(idp.introspections(), 1);
    let r = post_as(s.addr, &list_tools(2), "opaque-alice").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(idp.introspections(), 1, "the answer is cached");
    let r = post_as(
        s.addr,
        &call(3, "provision_database", json!({"name": "x"})),
        "opaque-alice",
    )
    .await;
    assert_eq!(
        r.status,
        StatusCode::FORBIDDEN,
        "scopes from the answer are enforced"
    );
    assert!(www(&r).contains("scope=\"mcp:read mcp:write\""));

    for (token, why) in [
        ("opaque-unknown", "unknown or inactive"),
        ("opaque-other-audience", "not issued for this resource"),
        ("opaque-expired", "expired"),
        ("opaque-other-issuer", "untrusted issuer"),
        ("opaque-no-subject", "claim sub"),
    ] {
        let r = post_as(s.addr, &list_tools(4), token).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{token}");
        assert!(www(&r).contains(why), "{token}: {}", www(&r));
    }
    let before = idp.introspections();
    let r = post_as(s.addr, &list_tools(5), "opaque-unknown").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(idp.introspections(), before, "refusals are cached too");
    s.shutdown().await;
}

#[tokio::test]
async fn introspection_refused_by_the_server_is_503() {
    let idp = Idp::start().await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resource = format!("http://{}/mcp", listener.local_addr().unwrap());
    let introspection = Introspection::builder(&resource, idp.issuer())
        .endpoint(format!("{}/introspect", idp.issuer()))
        .client_credentials(RS_CLIENT.0, "wrong")
        .build()
        .unwrap();
    let s = start_on(
        listener,
        test_server(),
        HttpConfig::default(),
        Some(AuthLayer::new(introspection)),
    );
    let r = post_as(s.addr, &list_tools(1), "opaque-alice").await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        idp.metadata_fetches(),
        0,
        "a configured endpoint needs no discovery"
    );
    s.shutdown().await;
}

/// A flood of random tokens (each one introspected, each refused) does not push out the
/// answers cached for real tokens: a legitimate token is still answered from the cache.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_tokens_do_not_flush_cached_grants() {
    const FLOOD: usize = 20_000;
    const WORKERS: usize = 8;
    let idp = Idp::start().await;
    let resource = "http://127.0.0.1:1/mcp".to_owned();
    let introspection = Introspection::builder(&resource, idp.issuer())
        .endpoint(format!("{}/introspect", idp.issuer()))
        .client_credentials(RS_CLIENT.0, RS_CLIENT.1)
        .build()
        .unwrap();
    idp.introspect_as(
        "opaque-alice",
        json!({"active": true, "iss": idp.issuer(), "aud": resource, "sub": "alice",
            "scope": "mcp:read", "exp": now() + 600}),
    );
    assert!(introspection.validate("opaque-alice").await.is_ok());
    assert_eq!(idp.introspections(), 1);
    let mut workers = tokio::task::JoinSet::new();
    for w in 0..WORKERS {
        let introspection = introspection.clone();
        workers.spawn(async move {
            for i in (w..FLOOD).step_by(WORKERS) {
                let token = format!("random-{i}-{w}");
                assert!(introspection.validate(&token).await.is_err(), "{token}");
            }
        });
    }
    while let Some(done) = workers.join_next().await {
        done.unwrap();
    }
    assert_eq!(idp.introspections(), 1 + FLOOD);
    let grant = introspection.validate("opaque-alice").await.unwrap();
    assert_eq!(grant.subject(), "alice");
    assert_eq!(
        idp.introspections(),
        1 + FLOOD,
        "alice's answer came from the cache"
    );
}
