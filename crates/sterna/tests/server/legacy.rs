//! 2025-11-25 clients over the stream transport: `initialize`, a session that follows the
//! negotiated revision, and the same handlers asking through pushed requests.

use super::fixture::{server, server_with};
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

/// A form whose fields are not in alphabetical order.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Shipment {
    zone: String,
    amount: i64,
    label: String,
}

/// Regression: the push loop turned each question into a `serde_json::Value`, which sorts
/// keys, so a 2025 client saw the form's fields in alphabetical order instead of the
/// order the type declares them in (as a 2026-07-28 client sees them).
#[tokio::test]
async fn pushed_forms_keep_their_fields_in_declaration_order() {
    use sterna::server::mrtr::form;
    use sterna::server::{Context, NoArgs, Tool};
    let (srv, _) = server_with(|b| {
        b.tool(
            Tool::new("ship")
                .description("asks a shipment form")
                .ask(|_: &NoArgs| form::<Shipment>("Where to?"))
                .run(
                    |_c: Context, _: NoArgs, s: sterna::server::mrtr::Elicitation<Shipment>| async move {
                        s.accepted()
                            .map(|s| format!("{} {} {}", s.zone, s.amount, s.label))
                            .unwrap_or_default()
                    },
                ),
        )
    });
    let mut w = Wire::new(&srv);
    initialize(&mut w, json!({"elicitation": {}})).await;
    w.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                   "params": {"name": "ship", "arguments": {}}}))
        .await;
    let raw = w.recv_raw().await;
    let at = |field: &str| {
        raw.find(&format!("\"{field}\":{{"))
            .unwrap_or_else(|| panic!("{field} in {raw}"))
    };
    assert!(
        at("zone") < at("amount") && at("amount") < at("label"),
        "{raw}"
    );
    let push: Value = serde_json::from_str(&raw).unwrap();
    assert_legacy(&push);
    w.send(
        &json!({"jsonrpc": "2.0", "id": push["id"], "result": {"action": "accept",
                   "content": {"zone": "eu", "amount": 3, "label": "box"}}}),
    )
    .await;
    let r = legacy_recv(&mut w).await;
    assert_eq!(r["result"]["content"][0]["text"], "eu 3 box");
}

/// Calls `tool` in the session and answers each pushed question with `answer(push)`;
/// returns the final response and the pushes seen.
async fn drive(
    w: &mut Wire,
    id: i64,
    tool: &str,
    args: Value,
    mut answer: impl FnMut(&Value) -> Value,
) -> (Value, Vec<Value>) {
    w.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": tool, "arguments": args}}))
        .await;
    let mut pushes = Vec::new();
    loop {
        let m = legacy_recv(w).await;
        if m["id"] == id && m.get("method").is_none() {
            return (m, pushes);
        }
        if m.get("method").is_some() && m.get("id").is_some() {
            let reply = json!({"jsonrpc": "2.0", "id": m["id"], "result": answer(&m)});
            pushes.push(m);
            w.send(&reply).await;
        }
    }
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

async fn session(caps: Value) -> (Wire, std::sync::Arc<super::fixture::Counters>) {
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    initialize(&mut w, caps).await;
    (w, c)
}

#[tokio::test]
async fn an_imperative_handler_asks_three_times_and_runs_its_side_effect_once() {
    let (mut w, c) = session(json!({"elicitation": {}})).await;
    let (r, pushes) = drive(&mut w, 1, "wizard", json!({}), |p| {
        let msg = p["params"]["message"].as_str().unwrap();
        if msg.starts_with("Your name") {
            accept(json!({"name": "Ada"}))
        } else if msg.starts_with("Favourite colour") {
            accept(json!({"color": "teal"}))
        } else {
            accept(json!({"ok": true}))
        }
    })
    .await;
    assert_eq!(pushes.len(), 3);
    assert_eq!(pushes[1]["params"]["message"], "Favourite colour, Ada?");
    assert_eq!(
        r["result"]["content"][0]["text"],
        "Ada likes teal (saved: true)"
    );
    assert_eq!(c.wizard_done.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_low_level_handler_gets_its_answer_and_its_own_state_back() {
    let (mut w, _) = session(json!({"elicitation": {}})).await;
    let (r, pushes) = drive(&mut w, 1, "low_level", json!({}), |_| {
        accept(json!({"ok": "yes"}))
    })
    .await;
    assert_eq!(pushes.len(), 1);
    assert_eq!(
        r["result"]["content"][0]["text"],
        r#"state=my-own-state-42 answer={"ok":"yes"}"#
    );
}

#[tokio::test]
async fn declines_invalid_answers_and_side_effects() {
    let (mut w, c) = session(json!({"elicitation": {}})).await;
    // A decline reaches the handler; the declarative body's side effect does not run.
    let (r, _) = drive(
        &mut w,
        1,
        "decline_aware",
        json!({}),
        |_| json!({"action": "decline"}),
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "declined");
    let (r, _) = drive(
        &mut w,
        2,
        "provision_database",
        json!({"name": "x"}),
        |_| json!({"action": "decline"}),
    )
    .await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 0);
    // An invalid answer is asked again, then a valid one completes.
    let mut n = 0;
    let (r, pushes) = drive(&mut w, 3, "dated", json!({}), |_| {
        n += 1;
        let at = if n == 1 {
            format!("a{}", "é".repeat(10))
        } else {
            "2026-07-28T10:00:00Z".into()
        };
        accept(json!({"at": at}))
    })
    .await;
    assert_eq!(pushes.len(), 2);
    assert_eq!(r["result"]["content"][0]["text"], "at 2026-07-28T10:00:00Z");
    // Single use holds on the legacy path too.
    let (r, _) = drive(&mut w, 4, "redeem", json!({}), |_| {
        accept(json!({"ok": true}))
    })
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "redeemed #1");
    assert_eq!(c.redeemed.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn gating_uses_the_capabilities_of_initialize() {
    let (mut w, _) = session(json!({"sampling": {}})).await;
    let (r, pushes) = drive(
        &mut w,
        1,
        "needs_sampling",
        json!({}),
        |_| json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}),
    )
    .await;
    assert_eq!(pushes[0]["method"], "sampling/createMessage");
    assert_eq!(r["result"]["content"][0]["text"], "hi");
    // Only what was declared is asked: the adaptive tool skips form and roots.
    let (r, pushes) = drive(
        &mut w,
        2,
        "adaptive",
        json!({}),
        |_| json!({"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"}),
    )
    .await;
    assert_eq!(pushes.len(), 1);
    assert_eq!(
        r["result"]["content"][0]["text"],
        "name=- greeting=yo roots=-"
    );
    // No elicitation declared: a form question is a tool error.
    let (r, pushes) = drive(&mut w, 3, "wizard", json!({}), |_| json!({})).await;
    assert!(pushes.is_empty());
    assert_eq!(r["result"]["isError"], true);
}

#[tokio::test]
async fn url_elicitations_carry_an_id_and_their_completion() {
    let (mut w, _) = session(json!({"elicitation": {"url": {}}})).await;
    w.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "needs_url", "arguments": {}}}))
        .await;
    let push = legacy_recv(&mut w).await;
    assert_eq!(push["params"]["mode"], "url");
    let eid = push["params"]["elicitationId"].as_str().unwrap().to_owned();
    w.send(&json!({"jsonrpc": "2.0", "id": push["id"], "result": {"action": "accept"}}))
        .await;
    let done = legacy_recv(&mut w).await;
    assert_eq!(done["method"], "notifications/elicitation/complete");
    assert_eq!(done["params"]["elicitationId"], eid);
    let r = legacy_recv(&mut w).await;
    assert_eq!(r["id"], 1);
}

#[tokio::test]
async fn list_changes_reach_an_initialized_session() {
    let (mut w, _) = session(json!({})).await;
    w.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "announce", "arguments": {}}}))
        .await;
    let mut seen = Vec::new();
    for _ in 0..2 {
        seen.push(legacy_recv(&mut w).await);
    }
    assert!(
        seen.iter()
            .any(|m| m["method"] == "notifications/tools/list_changed")
    );
    assert!(seen.iter().any(|m| m["id"] == 1));
}

/// Each kind of question, pushed as the session's revision says: a form with `mode` from
/// 2025-11-25 on and without it before (older clients knew no other mode), sampling with
/// its params, `roots/list` with none.
#[tokio::test]
async fn each_kind_of_question_is_pushed_as_the_sessions_revision_writes_it() {
    for (version, mode) in [("2025-11-25", json!("form")), ("2025-06-18", Value::Null)] {
        let (srv, _) = server();
        let mut w = Wire::new(&srv);
        w.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version,
            "capabilities": {"elicitation": {}, "sampling": {}, "roots": {}},
            "clientInfo": {"name": "legacy-test", "version": "1"}}}),
        )
        .await;
        let r = legacy_recv(&mut w).await;
        assert_eq!(r["result"]["protocolVersion"], version);
        w.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        let (r, pushes) = drive(&mut w, 1, "adaptive", json!({}), |p| match p["method"]
            .as_str()
        {
            Some("elicitation/create") => accept(json!({"name": "Ada"})),
            Some("sampling/createMessage") => {
                json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"})
            }
            _ => json!({"roots": [{"uri": "file:///src"}]}),
        })
        .await;
        // A round's questions are pushed together, in the order of their keys.
        let pushed = |m: &str| pushes.iter().find(|p| p["method"] == m).unwrap().clone();
        assert_eq!(pushes.len(), 3, "{version}: {pushes:?}");
        let form = &pushed("elicitation/create")["params"];
        assert_eq!(
            form.get("mode").cloned().unwrap_or(Value::Null),
            mode,
            "{version}: {form}"
        );
        assert_eq!(form["message"], "Your name?");
        assert_eq!(
            form["requestedSchema"]["properties"]["name"]["type"],
            "string"
        );
        let sampling = pushed("sampling/createMessage");
        assert_eq!(sampling["params"]["maxTokens"], 20, "{version}");
        let roots = pushed("roots/list");
        assert!(roots.get("params").is_none(), "{version}: {roots}");

        assert_eq!(
            r["result"]["content"][0]["text"], "name=Ada greeting=hi roots=1",
            "{version}"
        );
    }
}
