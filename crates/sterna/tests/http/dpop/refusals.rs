//! Each check of RFC 9449 §4.3 and §7, one request each: a refused proof or binding gets
//! `401` with a `DPoP` challenge, next to the same request done right.

use super::super::client::{post, post_with, send_to, set};
use super::super::idp::{now, unsigned};
use super::super::protected::{list_tools, post_as};
use super::{ProofKey, Protected, ath, challenges, claims, protected, random};
use http::StatusCode;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use sterna::server::http::auth::{Dpop, DpopBuilder, DpopNonces};

async fn required() -> Protected {
    protected(Dpop::required).await
}

/// `401` whose first challenge is `DPoP` with this `error`, saying `why`.
fn assert_refused(r: &super::super::client::Reply, error: &str, why: &str) {
    assert_dpop_refusal(r, error, why);
    let body: Value = serde_json::from_str(&r.body).unwrap();
    let description = body["error_description"].as_str().unwrap();
    assert!(description.contains(why), "{why}: {description}");
}

/// `401` whose first challenge is `DPoP` with this `error`.
fn assert_dpop_refusal(r: &super::super::client::Reply, error: &str, what: &str) {
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{what}: {}", r.body);
    let first = &challenges(r)[0];
    assert!(first.starts_with("DPoP "), "{what}: {first}");
    assert!(
        first.contains(&format!("error=\"{error}\"")),
        "{what}: {first}"
    );
    assert!(first.contains("algs=\""), "{what}: {first}");
}

#[tokio::test]
async fn a_proof_made_right_passes() {
    let s = required().await;
    let key = ProofKey::generate();
    let token = s.bound_token("alice", "mcp:read", &key);
    let r = s
        .post_dpop(
            &list_tools(1),
            &token,
            &key.proof("POST", &s.resource, &token),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // Equivalent spellings of the URL are the same htu (RFC 3986 normalization).
    let upper = s.resource.replace("http://", "HTTP://") + "?ignored=1";
    let r = s
        .post_dpop(&list_tools(2), &token, &key.proof("POST", &upper, &token))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

#[tokio::test]
async fn no_credentials_get_a_dpop_challenge_and_the_metadata_says_dpop() {
    let s = required().await;
    let r = post(s.addr(), &list_tools(1)).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let all = challenges(&r);
    assert_eq!(all.len(), 1, "DPoP only: {all:?}");
    assert!(all[0].starts_with("DPoP realm=\"mcp\""), "{all:?}");
    assert!(all[0].contains("resource_metadata=\""), "{all:?}");
    assert!(all[0].contains("algs=\"RS256 "), "{all:?}");
    let path = "/.well-known/oauth-protected-resource/mcp";
    let doc: Value = serde_json::from_str(&send_to(s.addr(), "GET", path, &[]).await.body).unwrap();
    assert_eq!(doc["dpop_bound_access_tokens_required"], true);
    assert!(
        doc["dpop_signing_alg_values_supported"]
            .as_array()
            .unwrap()
            .contains(&json!("ES256"))
    );
}

#[tokio::test]
async fn missing_proof_other_url_other_method_old_iat_wrong_ath() {
    let s = required().await;
    let key = ProofKey::generate();
    let token = s.bound_token("alice", "mcp:read", &key);
    let r = post_with(s.addr(), &list_tools(1), |h| {
        set(h, "authorization", &format!("DPoP {token}"));
    })
    .await;
    assert_refused(&r, "invalid_dpop_proof", "no DPoP proof");
    let other = format!("http://{}/other", s.addr());
    let cases = [
        ("(htu)", claims("POST", &other, &token)),
        ("(htm)", claims("GET", &s.resource, &token)),
        ("(ath)", claims("POST", &s.resource, "a-different-token")),
        (
            "(iat)",
            json!({"jti": random(), "htm": "POST", "htu": s.resource, "iat": now() - 120, "ath": ath(&token)}),
        ),
        (
            "(iat)",
            json!({"jti": random(), "htm": "POST", "htu": s.resource, "iat": now() + 120, "ath": ath(&token)}),
        ),
        (
            "missing claim ath",
            json!({"jti": random(), "htm": "POST", "htu": s.resource, "iat": now()}),
        ),
        (
            "missing claim jti",
            json!({"htm": "POST", "htu": s.resource, "iat": now(), "ath": ath(&token)}),
        ),
    ];
    for (why, claims) in cases {
        let r = s
            .post_dpop(&list_tools(1), &token, &key.sign(&claims))
            .await;
        assert_refused(&r, "invalid_dpop_proof", why);
    }
}

#[tokio::test]
async fn a_replayed_proof_is_refused() {
    let s = required().await;
    let key = ProofKey::generate();
    let token = s.bound_token("alice", "mcp:read", &key);
    let proof = key.proof("POST", &s.resource, &token);
    let r = s.post_dpop(&list_tools(1), &token, &proof).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = s.post_dpop(&list_tools(2), &token, &proof).await;
    assert_refused(&r, "invalid_dpop_proof", "already used");
}

#[tokio::test]
async fn a_key_other_than_the_bound_one_is_refused() {
    let s = required().await;
    let (bound, thief) = (ProofKey::generate(), ProofKey::generate());
    let token = s.bound_token("alice", "mcp:read", &bound);
    let r = s
        .post_dpop(
            &list_tools(1),
            &token,
            &thief.proof("POST", &s.resource, &token),
        )
        .await;
    assert_refused(&r, "invalid_token", "does not match the token's binding");
    // An unbound token cannot be presented with the DPoP scheme either.
    let unbound = s.bearer_token("alice", "mcp:read");
    let r = s
        .post_dpop(
            &list_tools(1),
            &unbound,
            &thief.proof("POST", &s.resource, &unbound),
        )
        .await;
    assert_refused(&r, "invalid_token", "not bound to a DPoP key");
}

#[tokio::test]
async fn bound_tokens_are_never_bearer_tokens() {
    let modes: [fn(String) -> DpopBuilder; 2] = [Dpop::required, Dpop::allowed];
    for dpop in modes {
        let s = protected(dpop).await;
        let key = ProofKey::generate();
        let token = s.bound_token("alice", "mcp:read", &key);
        let r = post_as(s.addr(), &list_tools(1), &token).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.body);
        assert!(challenges(&r)[0].contains("error=\"invalid_token\""));
        assert!(
            r.body.contains("bearer token") || r.body.contains("scheme not accepted"),
            "{}",
            r.body
        );
        // Sent as bearer with a valid proof alongside, it is still refused.
        let r = post_with(s.addr(), &list_tools(2), |h| {
            set(h, "authorization", &format!("Bearer {token}"));
            set(h, "dpop", &key.proof("POST", &s.resource, &token));
        })
        .await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.body);
    }
}

#[tokio::test]
async fn bearer_tokens_pass_only_where_dpop_is_merely_allowed() {
    let s = protected(Dpop::required).await;
    let r = post_as(s.addr(), &list_tools(1), &s.bearer_token("bob", "mcp:read")).await;
    assert_refused(&r, "invalid_token", "scheme not accepted");
    let s = protected(Dpop::allowed).await;
    let r = post_as(s.addr(), &list_tools(1), &s.bearer_token("bob", "mcp:read")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = post(s.addr(), &list_tools(2)).await;
    let all = challenges(&r);
    assert!(
        all[0].starts_with("Bearer ") && all[1].starts_with("DPoP "),
        "{all:?}"
    );
    let key = ProofKey::generate();
    let token = s.bound_token("alice", "mcp:read", &key);
    let r = s
        .post_dpop(
            &list_tools(3),
            &token,
            &key.proof("POST", &s.resource, &token),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

#[tokio::test]
async fn alg_none_hmac_private_keys_and_wrong_typ_are_refused() {
    let s = required().await;
    let key = ProofKey::generate();
    let token = s.bound_token("alice", "mcp:read", &key);
    let c = claims("POST", &s.resource, &token);
    let jwk = serde_json::to_value(&key.jwk).unwrap();
    let none = unsigned(
        &json!({"typ": "dpop+jwt", "alg": "none", "jwk": jwk}),
        &c,
        "",
    );
    let mut hs = Header::new(Algorithm::HS256);
    hs.typ = Some("dpop+jwt".into());
    hs.jwk = Some(key.jwk.clone());
    let hmac =
        jsonwebtoken::encode(&hs, &c, &EncodingKey::from_secret(b"shared").unwrap()).unwrap();
    let mut private = jwk.clone();
    private["d"] = json!(random());
    let leaked = unsigned(
        &json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": private}),
        &c,
        "c2ln",
    );
    let cases = [
        ("algorithm not allowed", none),
        ("algorithm not allowed", hmac),
        ("private key", leaked),
        ("(typ)", key.sign_with(&c, |h| h.typ = Some("JWT".into()))),
        ("(jwk)", key.sign_with(&c, |h| h.jwk = None)),
        ("malformed proof", "abc".to_owned()),
    ];
    for (why, proof) in cases {
        let r = s.post_dpop(&list_tools(1), &token, &proof).await;
        assert_refused(&r, "invalid_dpop_proof", why);
    }
    // A proof signed by a key other than its jwk.
    let other = ProofKey::generate();
    let forged = other.sign_with(&c, |h| h.jwk = Some(key.jwk.clone()));
    let r = s.post_dpop(&list_tools(1), &token, &forged).await;
    assert_refused(&r, "invalid_dpop_proof", "bad signature");
}

#[tokio::test]
async fn a_nonce_challenge_answered_with_the_nonce_passes() {
    let s = protected(|r| Dpop::required(r).nonces(DpopNonces::random())).await;
    let key = ProofKey::generate();
    let token = s.bound_token("alice", "mcp:read", &key);
    let r = s
        .post_dpop(
            &list_tools(1),
            &token,
            &key.proof("POST", &s.resource, &token),
        )
        .await;
    assert_refused(&r, "use_dpop_nonce", "nonce is required");
    let nonce = r.headers["dpop-nonce"].to_str().unwrap().to_owned();
    let mut stale = claims("POST", &s.resource, &token);
    stale["nonce"] = json!("made-up");
    let r = s.post_dpop(&list_tools(2), &token, &key.sign(&stale)).await;
    assert_refused(&r, "use_dpop_nonce", "nonce is required");
    let mut answered = claims("POST", &s.resource, &token);
    answered["nonce"] = json!(nonce);
    let r = s
        .post_dpop(&list_tools(3), &token, &key.sign(&answered))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(
        r.headers.contains_key("dpop-nonce"),
        "answers carry the nonce"
    );
}
