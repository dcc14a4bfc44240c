//! The issuer's keys: rotation picked up by a refresh, and a flood of unknown `kid`s that
//! cannot make the resource server refetch without bound (the JWKS fetches are counted).

use super::idp::{SigningKey, now};
use super::protected::{list_tools, post_as, setup, www};
use base64::Engine;
use http::StatusCode;

#[tokio::test]
async fn rotated_keys_are_picked_up_by_a_refresh() {
    let t = setup(|b| b.jwks_refresh_interval(std::time::Duration::ZERO)).await;
    let r = post_as(t.s.addr, &list_tools(1), &t.token("alice", "mcp:read")).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(t.idp.jwks_fetches(), 1);
    // The issuer rotates: k2 replaces k1.
    let k2 = SigningKey::generate("k2");
    t.idp.publish(&[&k2]);
    let new = k2.sign(&t.idp.claims(&t.resource, "alice", "mcp:read"));
    let r = post_as(t.s.addr, &list_tools(2), &new).await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "unknown kid → refresh → accepted: {}",
        r.body
    );
    assert_eq!(t.idp.jwks_fetches(), 2);
    let r = post_as(t.s.addr, &list_tools(3), &new).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(t.idp.jwks_fetches(), 2, "the new set is cached");
    let old = post_as(t.s.addr, &list_tools(4), &t.token("alice", "mcp:read")).await;
    assert_eq!(old.status, StatusCode::UNAUTHORIZED, "k1 was withdrawn");
    assert!(www(&old).contains("unknown signing key"));
    t.s.shutdown().await;
}

fn random_kid(i: usize) -> String {
    let mut bytes = [0u8; 12];
    bytes[..8].copy_from_slice(&(i as u64 ^ now()).to_le_bytes());
    format!(
        "attacker-{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

/// Random `kid`s cost the issuer at most one fetch per refresh interval (default 30 s),
/// concurrent misses share one fetch.
#[tokio::test]
async fn a_flood_of_unknown_kids_does_not_refetch_without_bound() {
    let t = setup(|b| b).await;
    let claims = t.idp.claims(&t.resource, "mallory", "mcp:read");
    let forged: Vec<String> = (0..64)
        .map(|i| t.key.sign_with(&claims, |h| h.kid = Some(random_kid(i))))
        .collect();
    let body = list_tools(1);
    // First contact is a concurrent flood: one fetch for all of them.
    let replies =
        futures_util::future::join_all(forged.iter().map(|tok| post_as(t.s.addr, &body, tok)))
            .await;
    assert!(replies.iter().all(|r| r.status == StatusCode::UNAUTHORIZED));
    assert_eq!(t.idp.jwks_fetches(), 1, "single flight");
    assert_eq!(t.idp.metadata_fetches(), 1, "discovery too");
    // Then 200 more, in waves: still no refetch within the interval.
    for wave in 0..4 {
        let forged: Vec<String> = (0..50)
            .map(|i| {
                t.key
                    .sign_with(&claims, |h| h.kid = Some(random_kid(1000 * (wave + 1) + i)))
            })
            .collect();
        let replies =
            futures_util::future::join_all(forged.iter().map(|tok| post_as(t.s.addr, &body, tok)))
                .await;
        assert!(replies.iter().all(|r| r.status == StatusCode::UNAUTHORIZED));
    }
    assert_eq!(t.idp.jwks_fetches(), 1, "264 unknown kids, one JWKS fetch");
    let r = post_as(t.s.addr, &list_tools(2), &t.token("alice", "mcp:read")).await;
    assert_eq!(r.status, StatusCode::OK, "legitimate tokens still pass");
    t.s.shutdown().await;
}
