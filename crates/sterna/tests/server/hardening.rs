//! Attacks on the request path: panics on behalf of one request, unsolicited answers,
//! single-use under every kind of retry, states that outgrow the server's own limit.

use super::fixture::{server, server_with};
use super::wire::{Wire, accept, caps_all, error_code, input_required, meta, result, text};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

/// One ASCII letter then ten `é`: byte 10 falls inside a character.
fn hostile_date_time() -> String {
    format!("a{}", "é".repeat(10))
}

#[tokio::test]
async fn a_multibyte_date_time_answer_is_asked_again_not_a_dead_request() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let (keys, s) = input_required(&w.call("dated", json!({}), json!({})).await);
    assert_eq!(keys, ["when"]);
    let r = w
        .call(
            "dated",
            json!({}),
            json!({"inputResponses": {"when": accept(json!({"at": hostile_date_time()}))}, "requestState": s}),
        )
        .await;
    let (keys, s) = input_required(&r);
    assert_eq!(keys, ["when"], "an invalid answer is asked again");
    let r = w
        .call(
            "dated",
            json!({}),
            json!({"inputResponses": {"when": accept(json!({"at": "2026-07-28T10:00:00Z"}))}, "requestState": s}),
        )
        .await;
    assert_eq!(text(&r), "at 2026-07-28T10:00:00Z");
}

#[tokio::test]
async fn a_panic_in_an_ask_closure_costs_only_its_request() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let boom = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "ask_panics", "arguments": {"boom": true}, "_meta": meta(caps_all())}})
    };
    w.send(&boom(77)).await;
    let r = w.response_to(&json!(77), "tools/call").await;
    assert_eq!(error_code(&r), -32603);
    // The id was released: the same id is usable again at once.
    let r = w
        .request_with_id(
            77,
            "tools/call",
            json!({"name": "ask_panics", "arguments": {}, "_meta": meta(caps_all())}),
        )
        .await;
    let (keys, _) = input_required(&r);
    assert_eq!(keys, ["confirm"]);
    // A panic in a second-stage question: same.
    let (_, s) = input_required(&w.call("then_ask_panics", json!({}), json!({})).await);
    let r = w
        .call(
            "then_ask_panics",
            json!({}),
            json!({"inputResponses": {"confirm": accept(json!({"ok": true}))}, "requestState": s}),
        )
        .await;
    assert_eq!(error_code(&r), -32603);
    // Many in a row, then the connection still serves.
    for id in 100..120 {
        w.send(&boom(id)).await;
    }
    for id in 100..120 {
        assert_eq!(
            error_code(&w.response_to(&json!(id), "tools/call").await),
            -32603
        );
    }
    assert_eq!(
        text(&w.call("add", json!({"a": 2, "b": 2}), json!({})).await),
        "4"
    );
}

#[tokio::test]
async fn answers_given_before_being_asked_are_ignored() {
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    // Both answers on a first call, without a state: both questions are asked.
    let r = w
        .call(
            "two_questions",
            json!({}),
            json!({"inputResponses": {"user_name": accept(json!({"name": "Bo"})), "color": accept(json!({"color": "tan"}))}}),
        )
        .await;
    let (keys, _) = input_required(&r);
    assert_eq!(keys, ["color", "user_name"]);
    // A declarative body with side effects does not run on a pre-supplied answer.
    let r = w
        .call(
            "provision_database",
            json!({"name": "orders"}),
            json!({"inputResponses": {"pick_region": accept(json!({"region": "eu-west-1"}))}}),
        )
        .await;
    input_required(&r);
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 0);
    // Imperative and low-level handlers do not see them either.
    let r = w
        .call(
            "wizard",
            json!({}),
            json!({"inputResponses": {"user_name": accept(json!({"name": "Al"}))}}),
        )
        .await;
    assert_eq!(input_required(&r).0, ["user_name"]);
    let r = w
        .call(
            "low_level",
            json!({}),
            json!({"inputResponses": {"confirm": accept(json!({"ok": "yes"}))}}),
        )
        .await;
    assert_eq!(input_required(&r).0, ["confirm"]);
}

#[tokio::test]
async fn answers_to_questions_the_state_does_not_carry_are_ignored() {
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    // Round 1 asks only the name; the colour (a later stage) is answered early.
    let (keys, s1) = input_required(&w.call("staged", json!({}), json!({})).await);
    assert_eq!(keys, ["user_name"]);
    let r = w
        .call(
            "staged",
            json!({}),
            json!({"inputResponses": {
                "user_name": accept(json!({"name": "Alice"})),
                "color": accept(json!({"color": "smuggled"})),
            }, "requestState": s1}),
        )
        .await;
    let (keys, s2) = input_required(&r);
    assert_eq!(keys, ["color"], "the early colour is not used");
    // …nor carried into the next round.
    let r = w
        .call(
            "staged",
            json!({}),
            json!({"inputResponses": {}, "requestState": s2}),
        )
        .await;
    let (keys, s3) = input_required(&r);
    assert_eq!(keys, ["color"]);
    let r = w
        .call(
            "staged",
            json!({}),
            json!({"inputResponses": {"color": accept(json!({"color": "red"}))}, "requestState": s3}),
        )
        .await;
    assert_eq!(text(&r), "Alice likes red");
    assert_eq!(c.staged_body.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_tool_may_opt_in_to_prefilled_answers() {
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    let r = w
        .call(
            "prefillable",
            json!({}),
            json!({"inputResponses": {"user_name": accept(json!({"name": "Ada"})), "extra": {"x": 1}}}),
        )
        .await;
    assert_eq!(text(&r), "hello Ada");
    // Still validated: a bad pre-filled answer is asked for.
    let r = w
        .call(
            "prefillable",
            json!({}),
            json!({"inputResponses": {"user_name": accept(json!({"name": 5}))}}),
        )
        .await;
    assert_eq!(input_required(&r).0, ["user_name"]);
    assert_eq!(c.prefilled.load(Ordering::SeqCst), 1);
    // A single-use tool cannot opt in.
    let built = sterna::server::Server::builder("x", "1")
        .state_keys(sterna::server::state::StateKeys::ephemeral())
        .tool(
            sterna::server::Tool::new("t")
                .single_use()
                .accept_unsolicited_answers()
                .handler(|_c: sterna::server::Context, _: sterna::server::NoArgs| async { "x" }),
        )
        .build();
    assert!(matches!(
        built,
        Err(sterna::server::BuildError::Conflicting { .. })
    ));
}

#[tokio::test]
async fn a_single_use_body_runs_once_whatever_the_client_sends() {
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    let yes = json!({"confirm": accept(json!({"ok": true}))});
    // Without a state, an answer does not redeem anything.
    for _ in 0..5 {
        let r = w
            .call("redeem", json!({}), json!({"inputResponses": yes}))
            .await;
        input_required(&r);
    }
    assert_eq!(c.redeemed.load(Ordering::SeqCst), 0);
    // One flow, its state replayed 64 times concurrently, mixed with state-less calls
    // and a state from another flow that is never answered.
    let (_, s) = input_required(&w.call("redeem", json!({}), json!({})).await);
    let mut ids = Vec::new();
    for i in 0..96 {
        let id = json!(10_000 + i);
        let params = if i % 3 == 2 {
            json!({"name": "redeem", "arguments": {}, "inputResponses": yes, "_meta": meta(caps_all())})
        } else {
            json!({"name": "redeem", "arguments": {}, "inputResponses": yes, "requestState": s, "_meta": meta(caps_all())})
        };
        w.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
        ids.push(id);
    }
    let mut completed = 0;
    for id in &ids {
        let r = w.response_to(id, "tools/call").await;
        if r.get("error").is_some() {
            assert_eq!(error_code(&r), -32602);
        } else if result(&r)["resultType"] == "complete" {
            assert_eq!(text(&r), "redeemed #1");
            completed += 1;
        }
    }
    assert_eq!(completed, 1);
    // Replayed later: refused.
    let r = w
        .call(
            "redeem",
            json!({}),
            json!({"inputResponses": yes, "requestState": s}),
        )
        .await;
    assert_eq!(error_code(&r), -32602);
    assert_eq!(c.redeemed.load(Ordering::SeqCst), 1);
}

/// Every `requestState` in a response, with its length.
fn state_len(resp: &Value) -> Option<usize> {
    resp["result"]["requestState"].as_str().map(str::len)
}

#[tokio::test]
async fn a_state_never_outgrows_the_servers_own_limit() {
    let limit = 4096;
    let (srv, _) = server_with(|b| b.max_state_len(limit));
    let mut w = Wire::new(&srv);
    let long = "x".repeat(1500);
    let mut s = input_required(&w.call("essay", json!({}), json!({})).await).1;
    let mut last = Value::Null;
    for part in 1..=3 {
        let key = format!("part{part}");
        last = w
            .call(
                "essay",
                json!({}),
                json!({"inputResponses": {key: accept(json!({"text": long}))}, "requestState": s}),
            )
            .await;
        if last.get("error").is_some() {
            break;
        }
        let len = state_len(&last);
        assert!(
            len.is_none_or(|l| l <= limit),
            "the server emitted a state it would refuse: {len:?} > {limit}"
        );
        s = input_required(&last).1;
    }
    // Three answers of 1500 characters cannot fit in 4 KiB: the request fails clearly on
    // the server side instead of handing out a state that is refused on the retry.
    assert_eq!(error_code(&last), -32603, "{last}");
    let msg = last["error"]["message"].as_str().unwrap();
    assert!(msg.contains("do not fit in requestState"), "{msg}");
    // With room, the same flow completes.
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let mut s = input_required(&w.call("essay", json!({}), json!({})).await).1;
    for part in 1..=3 {
        let key = format!("part{part}");
        let r = w
            .call(
                "essay",
                json!({}),
                json!({"inputResponses": {key: accept(json!({"text": long}))}, "requestState": s}),
            )
            .await;
        if part == 3 {
            assert_eq!(text(&r), "4500 chars");
        } else {
            s = input_required(&r).1;
        }
    }
}

#[tokio::test]
async fn completion_handlers_that_panic_or_ask() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let complete = |arg: &str| {
        json!({"ref": {"type": "ref/prompt", "name": "completion_hazards"},
               "argument": {"name": arg, "value": "x"}, "_meta": meta(caps_all())})
    };
    for arg in ["sync_panic", "async_panic", "asks"] {
        let r = w.request("completion/complete", complete(arg)).await;
        assert_eq!(error_code(&r), -32603, "{arg}: {r}");
    }
    let r = w
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "with_completion"},
                   "argument": {"name": "language", "value": "ru"}, "_meta": meta(json!({}))}),
        )
        .await;
    assert_eq!(result(&r)["completion"]["values"], json!(["rust", "ruby"]));
}

#[tokio::test]
async fn tool_enabled_sampling_needs_sampling_tools() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let r = w
        .call_with_caps(
            "sample_with_tools",
            json!({}),
            json!({}),
            json!({"sampling": {}}),
        )
        .await;
    assert_eq!(error_code(&r), -32021);
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {"tools": {}}})
    );
    let r = w
        .call_with_caps(
            "sample_with_tools",
            json!({}),
            json!({}),
            json!({"sampling": {"tools": {}}}),
        )
        .await;
    assert_eq!(input_required(&r).0, ["sampling"]);
}

#[tokio::test]
async fn subscriptions_listen_over_stdio() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let listen_id = json!(900);
    w.send(&json!({"jsonrpc": "2.0", "id": listen_id, "method": "subscriptions/listen",
                   "params": {"notifications": {"toolsListChanged": true, "promptsListChanged": true}, "_meta": meta(json!({}))}}))
        .await;
    let ack = w.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        listen_id
    );
    assert_eq!(
        text(&w.call("announce", json!({}), json!({})).await),
        "announced"
    );
    let change = w
        .notifications
        .iter()
        .find(|n| n["method"] == "notifications/tools/list_changed")
        .cloned();
    let change = match change {
        Some(c) => c,
        None => w.recv().await,
    };
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert_eq!(
        change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        listen_id
    );
    // Cancelling the subscription ends it: nothing more is sent for it.
    w.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": listen_id}}))
        .await;
    w.notifications.clear();
    assert_eq!(
        text(&w.call("announce", json!({}), json!({})).await),
        "announced"
    );
    assert!(
        w.recv_within(std::time::Duration::from_millis(200))
            .await
            .is_none()
    );
    assert!(
        w.notifications.is_empty(),
        "a cancelled subscription got {:?}",
        w.notifications
    );
}
