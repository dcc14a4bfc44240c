//! MRTR flows: rounds, keys, answers, re-asks, declines.

use super::fixture::server;
use super::wire::{Wire, accept, error_code, input_required, result, text};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

#[tokio::test]
async fn seed_flow_completes_in_two_rounds() {
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    let r1 = w
        .call("provision_database", json!({"name": "orders"}), json!({}))
        .await;
    assert_eq!(r1["id"], 1);
    let (keys, state) = input_required(&r1);
    assert_eq!(keys, ["pick_region"]);
    let q = &result(&r1)["inputRequests"]["pick_region"];
    assert_eq!(q["method"], "elicitation/create");
    assert_eq!(q["params"]["mode"], "form");
    assert_eq!(q["params"]["message"], "Which region for orders?");
    assert_eq!(
        q["params"]["requestedSchema"]["required"],
        json!(["region"])
    );
    let state = state.expect("a sealed state");
    assert!(state.len() < 200, "state is {} bytes", state.len());

    let r2 = w
        .call(
            "provision_database",
            json!({"name": "orders"}),
            json!({"inputResponses": {"pick_region": accept(json!({"region": "eu-west-1"}))}, "requestState": state}),
        )
        .await;
    assert_eq!(r2["id"], 2, "the retry uses a new id");
    assert_eq!(text(&r2), "Created orders in eu-west-1");
    assert!(result(&r2).get("isError").is_none());
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn declarative_body_side_effects_happen_exactly_once_per_flow() {
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    let args = json!({"name": "orders"});
    let (_, s1) = input_required(&w.call("provision_database", args.clone(), json!({})).await);
    // An invalid answer (not one of the options) is asked again: the body does not run.
    let r2 = w
        .call(
            "provision_database",
            args.clone(),
            json!({"inputResponses": {"pick_region": accept(json!({"region": "mars-1"}))}, "requestState": s1}),
        )
        .await;
    let (keys, s2) = input_required(&r2);
    assert_eq!(keys, ["pick_region"]);
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 0);
    let r3 = w
        .call(
            "provision_database",
            args.clone(),
            json!({"inputResponses": {"pick_region": accept(json!({"region": "us-east-1"}))}, "requestState": s2}),
        )
        .await;
    assert_eq!(text(&r3), "Created orders in us-east-1");
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 1);

    // Two stages over three rounds: the body is entered once.
    let (k1, s1) = input_required(&w.call("staged", json!({}), json!({})).await);
    assert_eq!(k1, ["user_name"]);
    let r2 = w
        .call("staged", json!({}), json!({"inputResponses": {"user_name": accept(json!({"name": "Alice"}))}, "requestState": s1}))
        .await;
    let (k2, s2) = input_required(&r2);
    assert_eq!(k2, ["color"]);
    assert_eq!(
        result(&r2)["inputRequests"]["color"]["params"]["message"],
        "Favourite colour, Alice?"
    );
    assert_eq!(c.staged_body.load(Ordering::SeqCst), 0);
    let r3 = w
        .call("staged", json!({}), json!({"inputResponses": {"color": accept(json!({"color": "blue"}))}, "requestState": s2}))
        .await;
    assert_eq!(text(&r3), "Alice likes blue");
    assert_eq!(c.staged_body.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn three_rounds_with_a_new_state_each_round() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let (k1, s1) = input_required(&w.call("wizard", json!({}), json!({})).await);
    assert_eq!(k1, ["user_name"]);
    let s1 = s1.unwrap();
    let (k2, s2) = input_required(
        &w.call("wizard", json!({}), json!({"inputResponses": {"user_name": accept(json!({"name": "Alice"}))}, "requestState": s1}))
            .await,
    );
    assert_eq!(k2, ["color"]);
    let s2 = s2.unwrap();
    assert_ne!(s1, s2);
    // Only the latest round's answers are sent: earlier ones ride in the state.
    let (k3, s3) = input_required(
        &w.call("wizard", json!({}), json!({"inputResponses": {"color": accept(json!({"color": "blue"}))}, "requestState": s2}))
            .await,
    );
    assert_eq!(k3, ["confirm"]);
    let s3 = s3.unwrap();
    assert!(s3 != s1 && s3 != s2);
    let r4 = w
        .call(
            "wizard",
            json!({}),
            json!({"inputResponses": {"confirm": accept(json!({"ok": true}))}, "requestState": s3}),
        )
        .await;
    assert_eq!(text(&r4), "Alice likes blue (saved: true)");
}

#[tokio::test]
async fn a_changed_question_is_asked_again_not_served_a_stale_answer() {
    // A rolling upgrade changes a question between rounds: an answer is pinned to the
    // exact question it answered, so it is neither taken fresh nor carried over.
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    c.question_version.store(1, Ordering::SeqCst);
    let (_, s1) = input_required(&w.call("rolling", json!({}), json!({})).await);
    c.question_version.store(2, Ordering::SeqCst);
    let r = w
        .call(
            "rolling",
            json!({}),
            json!({"inputResponses": {"confirm": accept(json!({"ok": true}))}, "requestState": s1}),
        )
        .await;
    let (keys, s2) = input_required(&r);
    assert_eq!(keys, ["confirm"], "the fresh answer was for v1's question");
    assert_eq!(
        result(&r)["inputRequests"]["confirm"]["params"]["message"],
        "Deploy v2?"
    );
    let (keys, s3) = input_required(
        &w.call(
            "rolling",
            json!({}),
            json!({"inputResponses": {"confirm": accept(json!({"ok": true}))}, "requestState": s2}),
        )
        .await,
    );
    assert_eq!(keys, ["color"]);
    // Upgraded again before the last answer: the carried v2 answer is not reused.
    c.question_version.store(3, Ordering::SeqCst);
    let r = w
        .call("rolling", json!({}), json!({"inputResponses": {"color": accept(json!({"color": "blue"}))}, "requestState": s3}))
        .await;
    let (keys, s4) = input_required(&r);
    assert_eq!(keys, ["confirm"]);
    assert_eq!(
        result(&r)["inputRequests"]["confirm"]["params"]["message"],
        "Deploy v3?"
    );
    // The colour answered in the round that re-asked the first question was for a
    // question really asked: it is kept, and the flow completes.
    let r = w
        .call("rolling", json!({}), json!({"inputResponses": {"confirm": accept(json!({"ok": false}))}, "requestState": s4}))
        .await;
    assert_eq!(text(&r), "v3 ok=false blue");
}

#[tokio::test]
async fn two_independent_questions_in_one_round() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let (keys, s1) = input_required(&w.call("two_questions", json!({}), json!({})).await);
    assert_eq!(keys, ["color", "user_name"]);
    // Answer one: only the other is asked again; the first rides in the state.
    let (keys, s2) = input_required(
        &w.call("two_questions", json!({}), json!({"inputResponses": {"user_name": accept(json!({"name": "Alice"}))}, "requestState": s1}))
            .await,
    );
    assert_eq!(keys, ["color"]);
    let r = w
        .call("two_questions", json!({}), json!({"inputResponses": {"color": accept(json!({"color": "red"}))}, "requestState": s2}))
        .await;
    assert_eq!(text(&r), "Alice likes red");
    // Both at once, in the round that asked both, complete directly.
    let r = w
        .answer(
            "two_questions",
            json!({}),
            json!({"user_name": accept(json!({"name": "Bo"})), "color": accept(json!({"color": "tan"}))}),
        )
        .await;
    assert_eq!(text(&r), "Bo likes tan");
}

#[tokio::test]
async fn missing_answer_is_asked_again_and_unknown_keys_are_ignored() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let args = json!({"name": "orders"});
    let r = w
        .call(
            "provision_database",
            args.clone(),
            json!({"inputResponses": {"wrong_key": accept(json!({"data": "x"}))}}),
        )
        .await;
    assert_eq!(input_required(&r).0, ["pick_region"]);
    let (_, s) = input_required(&w.call("provision_database", args.clone(), json!({})).await);
    let r = w
        .call(
            "provision_database",
            args,
            json!({
                "inputResponses": {
                    "pick_region": accept(json!({"region": "eu-west-1"})),
                    "unknown_extra_key": {"action": "accept", "content": {"x": 1}},
                    "another_unexpected": {"whatever": true}
                },
                "requestState": s
            }),
        )
        .await;
    assert_eq!(text(&r), "Created orders in eu-west-1");
}

#[tokio::test]
async fn answers_of_the_wrong_shape_are_asked_again() {
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    for bad in [
        json!({"action": "accept", "content": {"region": 5}}),
        json!({"action": "accept"}),
        json!({"action": "maybe"}),
        json!({"roots": []}),
        json!({"action": "accept", "content": {}}),
    ] {
        let r = w
            .call(
                "provision_database",
                json!({"name": "x"}),
                json!({"inputResponses": {"pick_region": bad}}),
            )
            .await;
        assert_eq!(input_required(&r).0, ["pick_region"]);
    }
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn input_responses_that_are_not_a_map_of_objects_are_invalid_params() {
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    for bad in [
        json!(null),
        json!([]),
        json!("x"),
        json!({"pick_region": 12345}),
        json!({"pick_region": null}),
    ] {
        let r = w
            .call(
                "provision_database",
                json!({"name": "x"}),
                json!({"inputResponses": bad}),
            )
            .await;
        assert_eq!(error_code(&r), -32602, "{r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("inputResponses")
        );
    }
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn decline_and_cancel_reach_the_handler() {
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    let r = w
        .answer(
            "decline_aware",
            json!({}),
            json!({"user_name": {"action": "decline"}}),
        )
        .await;
    assert_eq!(text(&r), "declined");
    let r = w
        .answer(
            "decline_aware",
            json!({}),
            json!({"user_name": {"action": "cancel"}}),
        )
        .await;
    assert_eq!(text(&r), "cancelled");
    let r = w
        .answer(
            "decline_aware",
            json!({}),
            json!({"user_name": accept(json!({"name": "Ann"}))}),
        )
        .await;
    assert_eq!(text(&r), "accepted Ann");
    // `required()` turns a decline into a tool error the model can read.
    let r = w
        .answer(
            "provision_database",
            json!({"name": "x"}),
            json!({"pick_region": {"action": "decline"}}),
        )
        .await;
    assert_eq!(result(&r)["isError"], true);
    assert!(text(&r).contains("declined"));
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn low_level_results_are_sealed_and_their_state_comes_back() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let (keys, state) = input_required(&w.call("low_level", json!({}), json!({})).await);
    assert_eq!(keys, ["confirm"]);
    let state = state.unwrap();
    assert_ne!(state, "my-own-state-42", "the handler's state is sealed");
    assert!(!state.contains("my-own-state"));
    let r = w
        .call("low_level", json!({}), json!({"inputResponses": {"confirm": accept(json!({"ok": "yes"}))}, "requestState": state}))
        .await;
    assert_eq!(text(&r), r#"state=my-own-state-42 answer={"ok":"yes"}"#);
}

#[tokio::test]
async fn prompts_and_resources_ask_too() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let meta = super::wire::meta(super::wire::caps_all());
    let r = w
        .request("prompts/get", json!({"name": "greeting", "_meta": meta}))
        .await;
    let (keys, s) = input_required(&r);
    assert_eq!(keys, ["user_context"]);
    let r = w
        .request(
            "prompts/get",
            json!({"name": "greeting", "_meta": meta, "inputResponses": {"user_context": accept(json!({"name": "Ada"}))}, "requestState": s}),
        )
        .await;
    assert_eq!(
        result(&r)["messages"][0]["content"]["text"],
        "Write a greeting for Ada"
    );

    let r = w
        .request(
            "resources/read",
            json!({"uri": "test://secret/7", "_meta": meta}),
        )
        .await;
    let (keys, s) = input_required(&r);
    assert_eq!(keys, ["confirm"]);
    let r = w
        .request(
            "resources/read",
            json!({"uri": "test://secret/7", "_meta": meta, "inputResponses": {"confirm": accept(json!({"ok": true}))}, "requestState": s}),
        )
        .await;
    let res = result(&r);
    assert_eq!(res["contents"][0]["text"], "secret 7 revealed=true");
    assert_eq!(res["contents"][0]["uri"], "test://secret/7");
    // A result reached through MRTR must not be cached.
    assert_eq!(res["ttlMs"], 0);
    assert_eq!(res["cacheScope"], "private");
    let _: Value = r;
}

#[tokio::test]
async fn handlers_keep_typed_state_across_rounds() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let (keys, s) = input_required(&w.call("typed_state", json!({}), json!({})).await);
    assert_eq!(keys, ["confirm"]);
    let r = w
        .call(
            "typed_state",
            json!({}),
            json!({"inputResponses": {"confirm": accept(json!({"ok": true}))}, "requestState": s}),
        )
        .await;
    assert_eq!(text(&r), "ticket T-77 from round 1 (ok=true) now round 2");
}

#[tokio::test]
async fn url_elicitation_consent() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let r = w.call("needs_url", json!({}), json!({})).await;
    let (keys, s) = input_required(&r);
    assert_eq!(keys, ["url"]);
    let q = &result(&r)["inputRequests"]["url"]["params"];
    assert_eq!(q["mode"], "url");
    assert_eq!(q["url"], "https://example.com/connect");
    assert!(q.get("elicitationId").is_none(), "removed in 2026-07-28");
    let r = w
        .call(
            "needs_url",
            json!({}),
            json!({"inputResponses": {"url": {"action": "accept"}}, "requestState": s}),
        )
        .await;
    assert_eq!(text(&r), "Accepted(())");
}

#[tokio::test]
async fn two_forms_of_one_type_without_keys_are_numbered_and_answered_apart() {
    use super::fixture::Color;
    use sterna::server::mrtr::{Elicitation, form};
    use sterna::server::{Context, NoArgs, Tool};
    let (srv, _) = super::fixture::server_with(|b| {
        b.tool(
            Tool::new("two_colors")
                .ask(|_: &NoArgs| (form::<Color>("Walls?"), form::<Color>("Doors?")))
                .run(
                    |_: Context, _: NoArgs, (a, b): (Elicitation<Color>, Elicitation<Color>)| async move {
                        match (a, b) {
                            (Elicitation::Accepted(a), Elicitation::Accepted(b)) => {
                                format!("{} walls, {} doors", a.color, b.color)
                            }
                            _ => "declined".to_owned(),
                        }
                    },
                ),
        )
    });
    let mut w = Wire::new(&srv);
    let (keys, s) = input_required(&w.call("two_colors", json!({}), json!({})).await);
    assert_eq!(keys, ["color", "color_2"]);
    let r = w
        .call(
            "two_colors",
            json!({}),
            json!({"inputResponses": {"color": accept(json!({"color": "white"})), "color_2": accept(json!({"color": "red"}))}, "requestState": s}),
        )
        .await;
    assert_eq!(text(&r), "white walls, red doors");
}
