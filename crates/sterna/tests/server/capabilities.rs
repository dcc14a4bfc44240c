//! Capability gating: never ask what this request's client cannot answer.

use super::fixture::server;
use super::wire::{Wire, accept, error_code, input_required, result, text};
use serde_json::json;

#[tokio::test]
async fn required_questions_need_the_capability() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let cases = [
        (
            "needs_sampling",
            json!({"elicitation": {}}),
            json!({"sampling": {}}),
        ),
        (
            "needs_url",
            json!({"elicitation": {}}),
            json!({"elicitation": {"url": {}}}),
        ),
        ("provision_database", json!({}), json!({"elicitation": {}})),
        (
            "provision_database",
            json!({"elicitation": {"url": {}}}),
            json!({"elicitation": {}}),
        ),
        (
            "wizard",
            json!({"sampling": {}, "roots": {}}),
            json!({"elicitation": {}}),
        ),
    ];
    for (tool, caps, required) in cases {
        let r = w
            .call_with_caps(tool, json!({"name": "x"}), json!({}), caps.clone())
            .await;
        assert_eq!(error_code(&r), -32021, "{tool} with {caps}: {r}");
        assert_eq!(
            r["error"]["data"]["requiredCapabilities"], required,
            "{tool}"
        );
        assert_eq!(r["id"], w.next_id() - 1, "errors keep the request id");
    }
}

#[tokio::test]
async fn declared_capabilities_allow_the_question() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    // `elicitation: {}` means form mode.
    let r = w
        .call_with_caps(
            "provision_database",
            json!({"name": "x"}),
            json!({}),
            json!({"elicitation": {}}),
        )
        .await;
    assert_eq!(input_required(&r).0, ["pick_region"]);
    let r = w
        .call_with_caps(
            "needs_sampling",
            json!({}),
            json!({}),
            json!({"sampling": {}}),
        )
        .await;
    let (keys, _) = input_required(&r);
    assert_eq!(keys, ["sampling"]);
    assert_eq!(
        result(&r)["inputRequests"]["sampling"]["method"],
        "sampling/createMessage"
    );
}

#[tokio::test]
async fn optional_questions_are_skipped() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let r = w
        .call_with_caps("adaptive", json!({}), json!({}), json!({"sampling": {}}))
        .await;
    let (keys, _) = input_required(&r);
    assert_eq!(keys, ["sampling"], "only what the client declared");
    let r = w
        .call_with_caps("adaptive", json!({}), json!({}), json!({}))
        .await;
    assert_eq!(text(&r), "name=- greeting=- roots=-");
    let r = w.call("adaptive", json!({}), json!({})).await;
    assert_eq!(input_required(&r).0, ["roots", "sampling", "user_name"]);
    let r = w
        .answer(
            "adaptive",
            json!({}),
            json!({
                "user_name": accept(json!({"name": "Al"})),
                "sampling": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"},
                "roots": {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}
            }),
        )
        .await;
    assert_eq!(text(&r), "name=Al greeting=hi roots=1");
    // A root that is not file:// makes the roots answer invalid: asked again.
    let r = w
        .answer_with_caps(
            "adaptive",
            json!({}),
            json!({"roots": {"roots": [{"uri": "https://evil.example"}]}}),
            json!({"roots": {}}),
        )
        .await;
    assert_eq!(input_required(&r).0, ["roots"]);
}

#[tokio::test]
async fn capabilities_are_read_from_every_request_never_inferred() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let (_, s) = input_required(&w.call("wizard", json!({}), json!({})).await);
    // The retry declares nothing: the next question cannot be asked.
    let r = w
        .call_with_caps(
            "wizard",
            json!({}),
            json!({"inputResponses": {"user_name": accept(json!({"name": "A"}))}, "requestState": s}),
            json!({}),
        )
        .await;
    assert_eq!(error_code(&r), -32021);
}

#[tokio::test]
async fn low_level_questions_are_gated_too() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let r = w
        .call_with_caps("low_level", json!({}), json!({}), json!({"sampling": {}}))
        .await;
    assert_eq!(error_code(&r), -32021);
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}})
    );
}

/// Each request's `_meta` counts for what its own text says. The server keeps the `_meta`s
/// it decoded (a client sends the same one with every request), so a text seen before,
/// another text, the same value spelt another way and a broken text must each be read as
/// themselves, in any order and more of them than the server keeps.
#[tokio::test]
async fn each_meta_is_read_for_what_its_own_text_says() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let line = |id: i64, meta: serde_json::Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "needs_sampling", "arguments": {}, "_meta": meta}})
        .to_string()
    };
    // Every text the same length (the name makes up for the shorter capabilities), so
    // that texts share the server's slots and only their bytes tell them apart.
    let meta = |caps: serde_json::Value, version: String| {
        let name = format!("{:<1$}", "meta-test", 30 - caps.to_string().len());
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps,
            "io.modelcontextprotocol/clientInfo": {"name": name, "version": version},
        })
    };
    for round in 0..24 {
        // Two texts per client version, and a new version every other round: 12 distinct
        // texts with sampling, 12 without, each sent twice.
        let version = format!("{:02}", round / 2);
        let without = line(
            w.next_id(),
            meta(json!({"elicitation": {}}), version.clone()),
        );
        w.send_raw(&without).await;
        let r = w.recv().await;
        assert_eq!(error_code(&r), -32021, "round {round}, no sampling: {r}");

        let with = line(w.next_id(), meta(json!({"sampling": {}}), version.clone()));
        w.send_raw(&with).await;
        let r = w.recv().await;
        assert_eq!(input_required(&r).0, ["sampling"], "round {round}: {r}");

        // The same value spelt with an escape: another text, read as the same value.
        let escaped = line(w.next_id(), meta(json!({"sampling": {}}), version.clone()))
            .replace(r#""2026-07-28""#, r#""2026\u002d07-28""#);
        assert!(escaped.contains(r"\u002d"));
        w.send_raw(&escaped).await;
        let r = w.recv().await;
        assert_eq!(
            input_required(&r).0,
            ["sampling"],
            "round {round}, escaped: {r}"
        );

        // A broken text after good ones: refused for what it lacks, every time.
        let mut broken = meta(json!({"sampling": {}}), version);
        broken
            .as_object_mut()
            .unwrap()
            .remove("io.modelcontextprotocol/protocolVersion");
        let broken = line(w.next_id(), broken);
        w.send_raw(&broken).await;
        let r = w.recv().await;
        assert_eq!(error_code(&r), -32602, "round {round}, broken: {r}");
        let message = r["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("protocolVersion"), "{message}");
    }
}
