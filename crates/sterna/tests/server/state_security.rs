//! requestState protection: sealing, binding, expiry, rotation, single use.

use super::fixture::{server, server_with};
use super::wire::{Wire, accept, error_code, input_required, text};
use base64::Engine;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use std::time::Duration;
use sterna::server::state::StateKeys;

fn answer() -> Value {
    json!({"pick_region": accept(json!({"region": "eu-west-1"}))})
}

async fn first_state(w: &mut Wire, name: &str) -> String {
    let r = w
        .call("provision_database", json!({"name": name}), json!({}))
        .await;
    input_required(&r).1.expect("state")
}

async fn retry(w: &mut Wire, name: &str, state: &str) -> Value {
    w.call(
        "provision_database",
        json!({"name": name}),
        json!({"inputResponses": answer(), "requestState": state}),
    )
    .await
}

fn assert_refused(r: &Value) {
    assert_eq!(error_code(r), -32602, "{r}");
    assert_eq!(
        r["error"]["message"], "Invalid or expired requestState",
        "the message leaks nothing"
    );
    assert!(r["error"].get("data").is_none());
}

#[tokio::test]
async fn tampered_and_truncated_states_are_refused() {
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    let s = first_state(&mut w, "orders").await;
    let mid = s.len() / 2;
    let flipped: String = s
        .char_indices()
        .map(|(i, ch)| {
            if i == mid {
                if ch == 'A' { 'B' } else { 'A' }
            } else {
                ch
            }
        })
        .collect();
    for bad in [
        flipped,
        s[..s.len() - 4].to_owned(),
        s[..10].to_owned(),
        format!("{s}-TAMPERED"),
        "hello".to_owned(),
        String::new(),
        "x".repeat(70 * 1024),
    ] {
        assert_refused(&retry(&mut w, "orders", &bad).await);
    }
    assert_eq!(
        c.provisioned.load(Ordering::SeqCst),
        0,
        "no handler code ran"
    );
    assert_eq!(
        text(&retry(&mut w, "orders", &s).await),
        "Created orders in eu-west-1"
    );
}

#[tokio::test]
async fn states_are_bound_to_principal_tool_and_arguments() {
    let (srv, _) = server();
    let mut alice = Wire::as_principal(&srv, "alice");
    let mut mallory = Wire::as_principal(&srv, "mallory");
    let mut anonymous = Wire::new(&srv);
    let s = first_state(&mut alice, "orders").await;
    assert_refused(&retry(&mut mallory, "orders", &s).await);
    assert_refused(&retry(&mut anonymous, "orders", &s).await);
    assert_refused(&retry(&mut alice, "users", &s).await);
    let other_tool = alice
        .call(
            "redeem",
            json!({"name": "orders"}),
            json!({"inputResponses": answer(), "requestState": s}),
        )
        .await;
    assert_refused(&other_tool);
    assert_eq!(
        text(&retry(&mut alice, "orders", &s).await),
        "Created orders in eu-west-1"
    );
}

#[tokio::test]
async fn expired_states_are_refused() {
    let (srv, _) = server_with(|b| b.state_ttl(Duration::ZERO).state_clock_skew(Duration::ZERO));
    let mut w = Wire::new(&srv);
    let s = first_state(&mut w, "orders").await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_refused(&retry(&mut w, "orders", &s).await);
}

#[tokio::test]
async fn keys_rotate_without_breaking_flows_in_flight() {
    let old = StateKeys::generate_base64();
    let new = StateKeys::generate_base64();
    let (before, _) = server_with(|b| b.state_keys(StateKeys::from_base64_list(&old).unwrap()));
    let (during, _) = server_with(|b| {
        b.state_keys(StateKeys::from_base64_list(&format!("{new},{old}")).unwrap())
    });
    let (after, _) = server_with(|b| b.state_keys(StateKeys::from_base64_list(&new).unwrap()));
    let (stranger, _) = server();
    let s = first_state(&mut Wire::new(&before), "orders").await;
    assert_refused(&retry(&mut Wire::new(&stranger), "orders", &s).await);
    assert_refused(&retry(&mut Wire::new(&after), "orders", &s).await);
    assert_eq!(
        text(&retry(&mut Wire::new(&during), "orders", &s).await),
        "Created orders in eu-west-1"
    );
    // A state the rotated replica seals opens on the new-key-only replica.
    let s2 = first_state(&mut Wire::new(&during), "orders").await;
    assert_eq!(
        text(&retry(&mut Wire::new(&after), "orders", &s2).await),
        "Created orders in eu-west-1"
    );
}

#[tokio::test]
async fn states_from_another_server_sharing_keys_are_refused() {
    let key = StateKeys::generate_base64();
    let (a, _) = server_with(|b| b.state_keys(StateKeys::from_base64_list(&key).unwrap()));
    let other = {
        let b = sterna::server::Server::builder("other-server", "1")
            .state_keys(StateKeys::from_base64_list(&key).unwrap());
        let b = b.tool(super::fixture::provision_tool());
        b.build().unwrap()
    };
    let s = first_state(&mut Wire::new(&a), "orders").await;
    assert_refused(&retry(&mut Wire::new(&other), "orders", &s).await);
}

#[tokio::test]
async fn sealed_states_do_not_reveal_answers() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let (_, s1) = input_required(&w.call("two_questions", json!({}), json!({})).await);
    let (_, s2) = input_required(
        &w.call(
            "two_questions",
            json!({}),
            json!({"inputResponses": {"user_name": accept(json!({"name": "Zebediah"}))}, "requestState": s1}),
        )
        .await,
    );
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s2.unwrap())
        .unwrap();
    assert!(
        !raw.windows(8).any(|w| w == b"Zebediah"),
        "answers travel encrypted"
    );
}

#[tokio::test]
async fn single_use_states_complete_once() {
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    let ok = json!({"confirm": accept(json!({"ok": true}))});
    let (_, s) = input_required(&w.call("redeem", json!({}), json!({})).await);
    let r = w
        .call(
            "redeem",
            json!({}),
            json!({"inputResponses": ok, "requestState": s}),
        )
        .await;
    assert_eq!(text(&r), "redeemed #1");
    assert_refused(
        &w.call(
            "redeem",
            json!({}),
            json!({"inputResponses": ok, "requestState": s}),
        )
        .await,
    );
    assert_eq!(c.redeemed.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn single_use_holds_under_32_concurrent_retries() {
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    let (_, s) = input_required(&w.call("redeem", json!({}), json!({})).await);
    let meta = super::wire::meta(super::wire::caps_all());
    let mut ids = Vec::new();
    for _ in 0..32 {
        let id = w.next_id();
        ids.push(id);
        w.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "redeem", "arguments": {}, "_meta": meta,
                "inputResponses": {"confirm": accept(json!({"ok": true}))}, "requestState": s
            }}),
        )
        .await;
    }
    let (mut completed, mut refused) = (0, 0);
    for id in ids {
        let r = w.response_to(&json!(id), "tools/call").await;
        if r.get("error").is_some() {
            assert_refused(&r);
            refused += 1;
        } else {
            assert_eq!(text(&r), "redeemed #1");
            completed += 1;
        }
    }
    assert_eq!((completed, refused), (1, 31));
    assert_eq!(c.redeemed.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_full_replay_store_refuses_new_states_and_forgets_none() {
    // 16 shards of one entry each: full after a handful of states (the client's share
    // raised to the whole store, so the store is what fills).
    let store = sterna::server::state::MemoryReplayStore::with_capacity(16).per_principal(16);
    let store = std::sync::Arc::new(store);
    let (srv, c) = server_with(|b| b.replay_store(store));
    let mut w = Wire::new(&srv);
    let ok = json!({"confirm": accept(json!({"ok": true}))});
    let (mut consumed, mut full) = (Vec::new(), None);
    for _ in 0..200 {
        let (_, s) = input_required(&w.call("redeem", json!({}), json!({})).await);
        let r = w
            .call(
                "redeem",
                json!({}),
                json!({"inputResponses": ok, "requestState": s}),
            )
            .await;
        if r.get("error").is_some() {
            full = Some(r);
            break;
        }
        consumed.push(s);
    }
    let full = full.expect("the store filled up");
    assert_eq!(error_code(&full), -32603, "{full}");
    let msg = full["error"]["message"].as_str().unwrap();
    assert!(msg.contains("replay store is full"), "{msg}");
    // Every state consumed before is still refused: nothing was forgotten to make room.
    assert!(!consumed.is_empty());
    for s in &consumed {
        assert_refused(
            &w.call(
                "redeem",
                json!({}),
                json!({"inputResponses": ok, "requestState": s}),
            )
            .await,
        );
    }
    assert_eq!(c.redeemed.load(Ordering::SeqCst), consumed.len());
}

/// Completes `redeem` (a single-use tool) once as `w`'s client: the final answer.
async fn redeem_once(w: &mut Wire) -> Value {
    let (_, s) = input_required(&w.call("redeem", json!({}), json!({})).await);
    let ok = json!({"confirm": accept(json!({"ok": true}))});
    w.call(
        "redeem",
        json!({}),
        json!({"inputResponses": ok, "requestState": s}),
    )
    .await
}

#[tokio::test]
async fn one_client_redeeming_fast_fills_its_share_never_the_replay_store() {
    // Room for 640 consumed states: by default one client may hold a tenth of them.
    let store = sterna::server::state::MemoryReplayStore::with_capacity(640);
    let (srv, c) = server_with(|b| b.replay_store(std::sync::Arc::new(store)));
    let mut mallory = Wire::as_principal(&srv, "mallory");
    let mut refused = None;
    for _ in 0..640 {
        let r = redeem_once(&mut mallory).await;
        if r.get("error").is_some() {
            refused = Some(r);
            break;
        }
    }
    let refused = refused.expect("one client is refused before the store is full");
    assert_eq!(error_code(&refused), -32603, "{refused}");
    assert_eq!(
        refused["error"]["data"]["limit"], "per_principal",
        "{refused}"
    );
    assert_eq!(refused["error"]["data"]["max"], 64, "{refused}");
    assert_eq!(c.redeemed.load(Ordering::SeqCst), 64);
    // Another client still redeems.
    let mut alice = Wire::as_principal(&srv, "alice");
    let r = redeem_once(&mut alice).await;
    assert_eq!(text(&r), "redeemed #65", "{r}");
}
