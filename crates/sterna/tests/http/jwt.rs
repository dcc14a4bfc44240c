//! The resource server with JWT access tokens, over real TCP: a sterna server behind
//! `AuthLayer<JwtValidator>`, the keys served by a tiny authorization server (`idp`).

use super::client::{call, post, post_with, send_to, set, start_on};
use super::idp::{Idp, SigningKey, now, unsigned};
use super::protected::{list_tools, policy, post_as, setup, test_server, www};
use http::StatusCode;
use serde_json::{Value, json};
use sterna::server::http::HttpConfig;
use sterna::server::http::auth::{AuthLayer, JwtValidator, ResourceMetadata};
use tokio::net::TcpListener;

#[tokio::test]
async fn a_valid_token_authenticates_and_handlers_see_the_grant() {
    let t = setup(|b| b).await;
    let token = t.token("alice", "mcp:read mcp:write");
    let r = post_as(t.s.addr, &call(1, "whoami", json!({})), &token).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let me: Value =
        serde_json::from_str(r.json()["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    let issuer = t.idp.issuer();
    assert_eq!(me["id"], format!("{issuer}#alice"));
    assert_eq!(me["issuer"], issuer);
    assert_eq!(me["subject"], "alice");
    assert_eq!(me["client_id"], "test-client");
    assert_eq!(me["scopes"], json!(["mcp:read", "mcp:write"]));
    assert!(me["jti"].as_str().unwrap().starts_with("alice-"));
    assert_eq!(
        t.idp.metadata_fetches(),
        1,
        "jwks_uri discovered from RFC 8414 metadata"
    );
    assert_eq!(t.idp.jwks_fetches(), 1);
    let again = post_as(t.s.addr, &list_tools(2), &token).await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(t.idp.jwks_fetches(), 1, "keys are cached");
    t.s.shutdown().await;
}

#[tokio::test]
async fn without_a_token_the_challenge_names_the_metadata_and_the_scope() {
    let t = setup(|b| b).await;
    let r = post(t.s.addr, &list_tools(1)).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        www(&r),
        format!(
            "Bearer realm=\"mcp\", scope=\"mcp:read\", resource_metadata=\"{}\"",
            t.metadata_url()
        )
    );
    t.s.shutdown().await;
}

/// Every way a token can be wrong: 401, `error="invalid_token"`, a description of the
/// category, the metadata URL.
#[tokio::test]
async fn refused_tokens_get_401_invalid_token() {
    let t = setup(|b| b).await;
    let (res, iss) = (t.resource.clone(), t.idp.issuer());
    let good = t.idp.claims(&res, "alice", "mcp:read");
    let with = |patch: Value| {
        let mut c = good.clone();
        for (k, v) in patch.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };
    let stranger = SigningKey::generate("k1"); // same kid, other key: bad signature
    let pem_like = serde_json::to_vec(&t.key.jwk).unwrap(); // the public key as an HMAC secret
    let hs256 = {
        let header = jsonwebtoken::Header {
            kid: Some("k1".into()),
            typ: Some("at+jwt".into()),
            ..jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256)
        };
        jsonwebtoken::encode(
            &header,
            &good,
            &jsonwebtoken::EncodingKey::from_secret(&pem_like).unwrap(),
        )
        .unwrap()
    };
    let none = unsigned(
        &json!({"alg": "none", "typ": "at+jwt", "kid": "k1"}),
        &good,
        "",
    );
    let mut no_sub = good.clone();
    no_sub.as_object_mut().unwrap().remove("sub");
    let cases: Vec<(&str, String, &str)> = vec![
        ("bad signature", stranger.sign(&good), "bad signature"),
        (
            "wrong issuer",
            t.key.sign(&with(json!({"iss": format!("{iss}/other")}))),
            "untrusted issuer",
        ),
        (
            "issuer with a trailing slash",
            t.key.sign(&with(json!({"iss": format!("{iss}/")}))),
            "untrusted issuer",
        ),
        (
            "wrong audience",
            t.key.sign(&with(json!({"aud": "http://127.0.0.1:1/mcp"}))),
            "not issued for this resource",
        ),
        (
            "audience list without us",
            t.key.sign(&with(json!({"aud": ["a", "b"]}))),
            "not issued for this resource",
        ),
        (
            "expired",
            t.key.sign(&with(json!({"exp": now() - 120}))),
            "expired",
        ),
        (
            "not yet valid",
            t.key.sign(&with(json!({"nbf": now() + 120}))),
            "not valid yet",
        ),
        (
            "issued in the future",
            t.key.sign(&with(json!({"iat": now() + 120}))),
            "issued in the future",
        ),
        (
            "no exp",
            t.key.sign(&with(json!({"exp": null}))),
            "claim exp",
        ),
        ("no sub", t.key.sign(&no_sub), "missing claim sub"),
        (
            "an ID token (typ JWT)",
            t.key.sign_with(&good, |h| h.typ = Some("JWT".into())),
            "typ",
        ),
        ("alg none", none, "algorithm not allowed"),
        (
            "HS256 keyed with the public key",
            hs256,
            "algorithm not allowed",
        ),
        (
            "unknown kid",
            t.key.sign_with(&good, |h| h.kid = Some("k9".into())),
            "unknown signing key",
        ),
        ("not a JWT", "abc.def".into(), "malformed"),
    ];
    for (what, token, description) in cases {
        let r = post_as(t.s.addr, &list_tools(1), &token).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{what}: {}", r.body);
        let challenge = www(&r);
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{what}: {challenge}"
        );
        assert!(challenge.contains(description), "{what}: {challenge}");
        assert!(
            challenge.contains(&format!("resource_metadata=\"{}\"", t.metadata_url())),
            "{what}"
        );
        assert_eq!(r.json()["error"], "invalid_token", "{what}: JSON body");
    }
    let ok = post_as(t.s.addr, &list_tools(1), &t.key.sign(&good)).await;
    assert_eq!(ok.status, StatusCode::OK, "the unpatched token passes");
    t.s.shutdown().await;
}

#[tokio::test]
async fn a_missing_scope_is_403_with_a_step_up_challenge() {
    let t = setup(|b| b).await;
    let read_only = t.token("alice", "mcp:read");
    let provision = call(1, "provision_database", json!({"name": "orders"}));
    let r = post_as(t.s.addr, &provision, &read_only).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let challenge = www(&r);
    assert!(
        challenge.starts_with("Bearer realm=\"mcp\", error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("scope=\"mcp:read mcp:write\""),
        "every scope of the operation: {challenge}"
    );
    assert!(challenge.contains(&format!("resource_metadata=\"{}\"", t.metadata_url())));
    assert_eq!(r.json()["error"], "insufficient_scope");
    let add = post_as(
        t.s.addr,
        &call(2, "add", json!({"a": 1, "b": 2})),
        &read_only,
    )
    .await;
    assert_eq!(add.status, StatusCode::OK, "other tools need only mcp:read");
    let none = post_as(t.s.addr, &list_tools(3), &t.token("alice", "")).await;
    assert_eq!(none.status, StatusCode::FORBIDDEN);
    assert!(www(&none).contains("scope=\"mcp:read\""));
    for scope in ["mcp:read mcp:write", "mcp:admin"] {
        let r = post_as(t.s.addr, &provision, &t.token("alice", scope)).await;
        assert_eq!(r.status, StatusCode::OK, "{scope}: {}", r.body);
        assert_eq!(r.json()["result"]["resultType"], "input_required");
    }
    t.s.shutdown().await;
}

/// The tool is read from the body, as the server will run it: naming a harmless tool in
/// `Mcp-Name` does not lend its requirements.
#[tokio::test]
async fn a_lying_mcp_name_cannot_borrow_another_tools_scopes() {
    let t = setup(|b| b).await;
    let read_only = t.token("alice", "mcp:read");
    let provision = call(1, "provision_database", json!({"name": "orders"}));
    let r = post_with(t.s.addr, &provision, |h| {
        set(h, "authorization", &format!("Bearer {read_only}"));
        set(h, "mcp-name", "add");
    })
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let writer = t.token("alice", "mcp:read mcp:write");
    let add = call(2, "add", json!({"a": 1, "b": 2}));
    let r = post_with(t.s.addr, &add, |h| {
        set(h, "authorization", &format!("Bearer {writer}"));
        set(h, "mcp-name", "provision_database");
    })
    .await;
    assert_eq!(
        r.code(),
        -32020,
        "and a header that disagrees with the body is refused"
    );
    t.s.shutdown().await;
}

#[tokio::test]
async fn the_metadata_document_is_served_without_a_token() {
    let t = setup(|b| b).await;
    let (addr, path) = (t.s.addr, "/.well-known/oauth-protected-resource/mcp");
    let get = |method: &'static str| send_to(addr, method, path, &[]);
    let r = get("GET").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.headers["access-control-allow-origin"], "*");
    assert_eq!(r.headers["content-type"], "application/json");
    assert_eq!(
        r.json(),
        json!({
            "resource": t.resource,
            "authorization_servers": [t.idp.issuer()],
            "scopes_supported": ["mcp:read", "mcp:write"],
            "bearer_methods_supported": ["header"],
            "resource_name": "sterna test server",
        })
    );
    assert_eq!(get("OPTIONS").await.status, StatusCode::NO_CONTENT);
    assert_eq!(get("HEAD").await.status, StatusCode::OK);
    assert_eq!(get("POST").await.status, StatusCode::METHOD_NOT_ALLOWED);
    let elsewhere = send_to(
        t.s.addr,
        "GET",
        "/.well-known/oauth-protected-resource",
        &[],
    )
    .await;
    assert_eq!(
        elsewhere.status,
        StatusCode::UNAUTHORIZED,
        "the root is not served by default"
    );
    t.s.shutdown().await;
}

/// The principal is `<iss>#<sub>`: a state issued to one is refused for another, also
/// for the same `sub` from a second trusted issuer.
#[tokio::test]
async fn request_state_is_bound_to_the_token_principal() {
    let idp_a = Idp::start().await;
    let idp_b = Idp::start().await;
    let (ka, kb) = (SigningKey::generate("a1"), SigningKey::generate("b1"));
    idp_a.publish(&[&ka]);
    idp_b.publish(&[&kb]);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resource = format!("http://{}/mcp", listener.local_addr().unwrap());
    let jwt = JwtValidator::builder(&resource)
        .issuer_with_jwks(idp_a.issuer(), idp_a.jwks_uri())
        .issuer_with_jwks(idp_b.issuer(), idp_b.jwks_uri())
        .build()
        .unwrap();
    let auth = AuthLayer::new(jwt).scopes(policy());
    let s = start_on(listener, test_server(), HttpConfig::default(), Some(auth));
    let scope = "mcp:read mcp:write";
    let alice = ka.sign(&idp_a.claims(&resource, "alice", scope));
    let bob = ka.sign(&idp_a.claims(&resource, "bob", scope));
    let other_alice = kb.sign(&idp_b.claims(&resource, "alice", scope));
    let r1 = post_as(
        s.addr,
        &call(1, "provision_database", json!({"name": "orders"})),
        &alice,
    )
    .await;
    let mut retry = call(2, "provision_database", json!({"name": "orders"}));
    retry["params"]["inputResponses"] =
        json!({"pick_region": {"action": "accept", "content": {"region": "eu-west-1"}}});
    retry["params"]["requestState"] = r1.json()["result"]["requestState"].clone();
    assert_eq!(
        post_as(s.addr, &retry, &bob).await.code(),
        -32602,
        "bob cannot finish alice's flow"
    );
    assert_eq!(
        post_as(s.addr, &retry, &other_alice).await.code(),
        -32602,
        "nor can another issuer's alice"
    );
    let done = post_as(s.addr, &retry, &alice).await;
    assert_eq!(
        done.json()["result"]["content"][0]["text"],
        "Created orders in eu-west-1"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn an_unreachable_issuer_is_503_not_401() {
    let dead = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", dead.local_addr().unwrap());
    drop(dead);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resource = format!("http://{}/mcp", listener.local_addr().unwrap());
    let jwt = JwtValidator::builder(&resource)
        .issuer(&issuer)
        .build()
        .unwrap();
    let s = start_on(
        listener,
        test_server(),
        HttpConfig::default(),
        Some(AuthLayer::new(jwt)),
    );
    let key = SigningKey::generate("k1");
    let token = key.sign(&json!({"iss": issuer, "aud": resource, "sub": "a", "exp": now() + 60}));
    for _ in 0..3 {
        let r = post_as(s.addr, &list_tools(1), &token).await;
        assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    }
    s.shutdown().await;
}

/// The layer and the metadata service mount in axum like any tower pieces.
#[tokio::test]
async fn the_layer_and_the_metadata_mount_in_axum() {
    use tower_layer::Layer;
    let idp = Idp::start().await;
    let key = SigningKey::generate("k1");
    idp.publish(&[&key]);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let resource = format!("http://{addr}/mcp");
    let jwt = JwtValidator::builder(&resource)
        .issuer(idp.issuer())
        .build()
        .unwrap();
    let meta = ResourceMetadata::new(&resource, idp.issuer()).unwrap();
    let auth = AuthLayer::new(jwt)
        .resource_metadata(meta.clone())
        .scopes(policy());
    let mcp = sterna::server::http::McpService::new(test_server(), HttpConfig::default());
    let app = axum::Router::new()
        .route_service("/mcp", auth.layer(mcp))
        .route_service(meta.path(), meta.service());
    let handle = tokio::spawn(async move { axum::serve(listener, app).await });
    let r = post(addr, &list_tools(1)).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(www(&r).contains(&meta.url()));
    let doc = send_to(addr, "GET", meta.path(), &[]).await;
    assert_eq!(doc.json()["resource"], resource);
    let token = key.sign(&idp.claims(&resource, "alice", "mcp:read mcp:write"));
    let r = post_as(
        addr,
        &call(2, "provision_database", json!({"name": "x"})),
        &token,
    )
    .await;
    assert_eq!(r.json()["result"]["resultType"], "input_required");
    handle.abort();
}
