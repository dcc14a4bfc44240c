//! Stored-state mode as an attacker sees it: the reference is all the client holds, and
//! every way of bending it is refused before any handler code runs.

use super::fixture::server_with;
use super::wire::{Wire, accept, error_code, input_required, text};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use sterna::server::state::StateKeys;
use sterna::server::state::{MemoryStateStore, StateStore, StoreError, StoreStates};

/// A store the test can inspect and break: counts lookups, forgets, swaps or corrupts
/// entries, goes down.
#[derive(Debug, Default)]
struct Probe {
    map: Mutex<HashMap<[u8; 16], Vec<u8>>>,
    gets: AtomicUsize,
    down: AtomicBool,
}

impl Probe {
    fn ids(&self) -> Vec<[u8; 16]> {
        self.map.lock().unwrap().keys().copied().collect()
    }
}

impl StateStore for Probe {
    fn put(
        &self,
        id: [u8; 16],
        _: &sterna::server::QuotaKey,
        sealed: Vec<u8>,
        _: u64,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let r = if self.down.load(Ordering::SeqCst) {
            Err(StoreError::Unavailable("down for the test".into()))
        } else {
            self.map.lock().unwrap().insert(id, sealed);
            Ok(())
        };
        Box::pin(async move { r })
    }

    fn get(&self, id: [u8; 16]) -> BoxFuture<'_, Result<Option<Vec<u8>>, StoreError>> {
        self.gets.fetch_add(1, Ordering::SeqCst);
        let r = if self.down.load(Ordering::SeqCst) {
            Err(StoreError::Unavailable("down for the test".into()))
        } else {
            Ok(self.map.lock().unwrap().get(&id).cloned())
        };
        Box::pin(async move { r })
    }
}

fn stored(store: Arc<Probe>) -> (sterna::server::Server, Arc<super::fixture::Counters>) {
    server_with(move |b| b.state_store(store, StoreStates::Always))
}

fn answer() -> Value {
    json!({"pick_region": accept(json!({"region": "eu-west-1"}))})
}

async fn first(w: &mut Wire, tool: &str) -> String {
    let r = w.call(tool, json!({"name": "orders"}), json!({})).await;
    input_required(&r).1.expect("state")
}

async fn retry(w: &mut Wire, tool: &str, state: &str) -> Value {
    let answers = if tool == "redeem" {
        json!({"confirm": accept(json!({"ok": true}))})
    } else {
        answer()
    };
    w.call(
        tool,
        json!({"name": "orders"}),
        json!({"inputResponses": answers, "requestState": state}),
    )
    .await
}

fn assert_refused(r: &Value) {
    assert_eq!(error_code(r), -32602, "{r}");
    assert_eq!(r["error"]["message"], "Invalid or expired requestState");
}

#[tokio::test]
async fn a_stored_flow_completes_with_a_short_reference() {
    let store = Arc::new(Probe::default());
    let (srv, _) = stored(store.clone());
    let mut w = Wire::new(&srv);
    let s = first(&mut w, "provision_database").await;
    assert_eq!(s.len(), 71, "a fixed-size reference: {s}");
    assert_eq!(store.ids().len(), 1);
    let done = retry(&mut w, "provision_database", &s).await;
    assert_eq!(text(&done), "Created orders in eu-west-1");
    // Not single-use: the same retry may be sent again (a lost response).
    let again = retry(&mut w, "provision_database", &s).await;
    assert_eq!(text(&again), "Created orders in eu-west-1");
}

#[tokio::test]
async fn forged_references_never_reach_the_store() {
    let store = Arc::new(Probe::default());
    let (srv, c) = stored(store.clone());
    let mut w = Wire::new(&srv);
    let s = first(&mut w, "provision_database").await;
    let raw = URL_SAFE_NO_PAD.decode(&s).unwrap();
    let mut forged = Vec::new();
    for i in 0..raw.len() {
        let mut t = raw.clone();
        t[i] ^= 0x20;
        forged.push(URL_SAFE_NO_PAD.encode(&t));
    }
    // A guessed id with a random MAC; another server's genuine reference (another key).
    let mut guessed = raw.clone();
    guessed[5..21].copy_from_slice(&[0xab; 16]);
    forged.push(URL_SAFE_NO_PAD.encode(&guessed));
    let (other, _) =
        server_with(|b| b.state_store(Arc::new(Probe::default()), StoreStates::Always));
    forged.push(first(&mut Wire::new(&other), "provision_database").await);
    // Truncated, extended, oversized, not base64.
    forged.extend([
        s[..s.len() - 1].to_owned(),
        s[..40].to_owned(),
        format!("{s}AA"),
        "A".repeat(70 * 1024),
        format!("{}!", &s[..70]),
    ]);
    let before = store.gets.load(Ordering::SeqCst);
    for bad in &forged {
        assert_refused(&retry(&mut w, "provision_database", bad).await);
    }
    assert_eq!(
        store.gets.load(Ordering::SeqCst),
        before,
        "no lookup for a bad MAC"
    );
    assert_eq!(
        c.provisioned.load(Ordering::SeqCst),
        0,
        "no handler code ran"
    );
}

#[tokio::test]
async fn a_genuine_reference_to_a_missing_or_swapped_payload_is_refused() {
    let store = Arc::new(Probe::default());
    let (srv, c) = stored(store.clone());
    let mut w = Wire::new(&srv);
    let a = first(&mut w, "provision_database").await;
    let a_id = store.ids()[0];
    let b = first(&mut w, "provision_database").await;
    let b_id = *store.ids().iter().find(|i| **i != a_id).unwrap();
    // Swapped payloads (an attacker who can write to the store): each is bound to its id.
    {
        let mut m = store.map.lock().unwrap();
        let pa = m.remove(&a_id).unwrap();
        let pb = m.remove(&b_id).unwrap();
        m.insert(a_id, pb);
        m.insert(b_id, pa);
    }
    assert_refused(&retry(&mut w, "provision_database", &a).await);
    assert_refused(&retry(&mut w, "provision_database", &b).await);
    // Corrupted, and gone (deleted, or expired out of the store).
    store.map.lock().unwrap().get_mut(&a_id).unwrap()[40] ^= 1;
    assert_refused(&retry(&mut w, "provision_database", &a).await);
    store.map.lock().unwrap().clear();
    assert_refused(&retry(&mut w, "provision_database", &b).await);
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn stored_states_stay_bound_to_principal_arguments_and_expiry() {
    let store = Arc::new(Probe::default());
    let (srv, _) = stored(store.clone());
    let mut alice = Wire::as_principal(&srv, "alice");
    let mut mallory = Wire::as_principal(&srv, "mallory");
    let s = first(&mut alice, "provision_database").await;
    assert_refused(&retry(&mut mallory, "provision_database", &s).await);
    let other_args = alice
        .call(
            "provision_database",
            json!({"name": "users"}),
            json!({"inputResponses": answer(), "requestState": s}),
        )
        .await;
    assert_refused(&other_args);
    assert_eq!(
        text(&retry(&mut alice, "provision_database", &s).await),
        "Created orders in eu-west-1"
    );
    // Expired: the store still holds it (a store that forgets late), the state says no.
    let (short, _) = server_with(|b| {
        b.state_store(store.clone(), StoreStates::Always)
            .state_ttl(std::time::Duration::ZERO)
            .state_clock_skew(std::time::Duration::ZERO)
    });
    let mut w = Wire::new(&short);
    let s = first(&mut w, "provision_database").await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_refused(&retry(&mut w, "provision_database", &s).await);
}

#[tokio::test]
async fn a_stored_single_use_state_is_accepted_once() {
    let (srv, c) =
        server_with(|b| b.state_store(Arc::new(MemoryStateStore::default()), StoreStates::Always));
    let mut w = Wire::new(&srv);
    let s = first(&mut w, "redeem").await;
    assert_eq!(s.len(), 71);
    assert_eq!(text(&retry(&mut w, "redeem", &s).await), "redeemed #1");
    assert_refused(&retry(&mut w, "redeem", &s).await);
    assert_eq!(c.redeemed.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn references_need_a_store_and_inline_states_still_open() {
    let keys = StateKeys::generate_base64();
    let with = |b: sterna::server::ServerBuilder<StateKeys>| {
        b.state_keys(StateKeys::from_base64_list(&keys).unwrap())
    };
    let store = Arc::new(Probe::default());
    let (inline, _) = server_with(with);
    let (stored_srv, _) = server_with(|b| with(b).state_store(store.clone(), StoreStates::Never));
    let (always, _) = server_with(|b| with(b).state_store(store.clone(), StoreStates::Always));
    // A reference sent to a replica without a store: refused, not trusted.
    let reference = first(&mut Wire::new(&always), "provision_database").await;
    assert_refused(&retry(&mut Wire::new(&inline), "provision_database", &reference).await);
    // `Never` issues inline states but still opens references (switching modes breaks
    // no flow in flight), and a stored-mode replica opens inline states.
    let s = first(&mut Wire::new(&stored_srv), "provision_database").await;
    assert!(s.len() > 71, "inline: {s}");
    let done = retry(&mut Wire::new(&always), "provision_database", &s).await;
    assert_eq!(text(&done), "Created orders in eu-west-1");
    let done = retry(
        &mut Wire::new(&stored_srv),
        "provision_database",
        &reference,
    )
    .await;
    assert_eq!(text(&done), "Created orders in eu-west-1");
}

#[tokio::test]
async fn only_large_states_are_stored_above_the_threshold() {
    let store = Arc::new(Probe::default());
    let (srv, c) = server_with(|b| b.state_store(store.clone(), StoreStates::Above(1024)));
    let mut w = Wire::new(&srv);
    let small = first(&mut w, "provision_database").await;
    assert!(small.len() > 71 && small.len() <= 1024, "{}", small.len());
    assert!(store.ids().is_empty());
    // The wizard carries its first answer: a large name makes a large state.
    let r = w.call("wizard", json!({}), json!({})).await;
    let (keys, s1) = input_required(&r);
    let name = "n".repeat(20_000);
    let answers = json!({ &keys[0]: accept(json!({"name": name})) });
    let r = w
        .call(
            "wizard",
            json!({}),
            json!({"inputResponses": answers, "requestState": s1}),
        )
        .await;
    let (keys, s2) = input_required(&r);
    let s2 = s2.unwrap();
    assert_eq!(s2.len(), 71, "stored");
    assert_eq!(store.ids().len(), 1);
    let answers = json!({ &keys[0]: accept(json!({"color": "red"})) });
    let r = w
        .call(
            "wizard",
            json!({}),
            json!({"inputResponses": answers, "requestState": s2}),
        )
        .await;
    let (keys, s3) = input_required(&r);
    let answers = json!({ &keys[0]: accept(json!({"ok": true})) });
    let r = w
        .call(
            "wizard",
            json!({}),
            json!({"inputResponses": answers, "requestState": s3}),
        )
        .await;
    assert!(text(&r).ends_with("likes red (saved: true)"), "{r}");
    assert_eq!(c.wizard_done.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_store_outage_fails_cleanly_and_recovers() {
    let store = Arc::new(Probe::default());
    let (srv, c) = stored(store.clone());
    let mut w = Wire::new(&srv);
    let s = first(&mut w, "provision_database").await;
    store.down.store(true, Ordering::SeqCst);
    for r in [
        w.call("provision_database", json!({"name": "orders"}), json!({}))
            .await,
        retry(&mut w, "provision_database", &s).await,
    ] {
        assert_eq!(error_code(&r), -32603, "{r}");
        let msg = r["error"]["message"].as_str().unwrap();
        assert!(msg.contains("state store cannot be reached"), "{msg}");
    }
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 0);
    store.down.store(false, Ordering::SeqCst);
    let done = retry(&mut w, "provision_database", &s).await;
    assert_eq!(text(&done), "Created orders in eu-west-1");
}
