//! The 2026-07-28 base protocol: `_meta`, versions, methods, lists, errors, transport.

use super::fixture::{nested_form_tool, server, server_with};
use super::wire::{Wire, caps_all, error_code, meta, result, text, validate_message};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use std::time::Duration;
use sterna::server::state::StateKeys;
use sterna::server::{BuildError, Server};
use sterna::server::{Context, NoArgs, Tool};

#[tokio::test]
async fn discover_describes_the_server() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let r = w
        .request("server/discover", json!({"_meta": meta(json!({}))}))
        .await;
    let d = result(&r);
    assert_eq!(
        d["supportedVersions"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]),
        "both eras: 2026-07-28 per request, the legacy revisions through initialize"
    );
    assert!(d["capabilities"]["tools"].is_object());
    assert!(d["capabilities"]["prompts"].is_object());
    assert!(d["capabilities"]["resources"].is_object());
    assert!(d["ttlMs"].is_u64() && d["cacheScope"].is_string());
    assert_eq!(
        d["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "fixture"
    );
}

#[tokio::test]
async fn request_meta_is_validated() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let v = "io.modelcontextprotocol/protocolVersion";
    let c = "io.modelcontextprotocol/clientCapabilities";
    for params in [
        json!({}),
        json!({"_meta": {}}),
        json!({"_meta": {v: "2026-07-28"}}),
        json!({"_meta": {c: {}}}),
        json!({"_meta": {v: 2026, c: {}}}),
        json!({"_meta": {v: "2026-07-28", c: []}}),
        json!({"_meta": "x"}),
        json!([]),
    ] {
        let r = w.request("server/discover", params.clone()).await;
        assert_eq!(error_code(&r), -32602, "{params}");
    }
    let id = w.next_id();
    w.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}))
        .await;
    assert_eq!(
        error_code(&w.response_to(&json!(id), "tools/list").await),
        -32602
    );
    // clientInfo is optional.
    let r = w
        .request(
            "server/discover",
            json!({"_meta": {v: "2026-07-28", c: {}}}),
        )
        .await;
    assert!(result(&r)["supportedVersions"].is_array());
}

#[tokio::test]
async fn unsupported_versions_get_minus_32022() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    for version in ["v999.0.0", "2025-11-25", "1900-01-01"] {
        let mut m = meta(json!({}));
        m["io.modelcontextprotocol/protocolVersion"] = json!(version);
        let r = w.request("tools/list", json!({"_meta": m})).await;
        assert_eq!(error_code(&r), -32022);
        assert_eq!(r["error"]["data"]["requested"], version);
        assert_eq!(r["error"]["data"]["supported"], json!(["2026-07-28"]));
    }
}

#[tokio::test]
async fn unknown_and_removed_methods_get_minus_32601() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    for m in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "nope/nothing",
    ] {
        let r = w.request(m, json!({"_meta": meta(json!({}))})).await;
        assert_eq!(error_code(&r), -32601, "{m}");
    }
    // A legacy initialize (no _meta claim) opens a 2025-11-25 session: malformed (no
    // clientInfo) it is -32602, well formed it is answered with a legacy revision.
    w.send(
        &json!({"jsonrpc": "2.0", "id": "i1", "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}),
    )
    .await;
    assert_eq!(error_code(&w.recv().await), -32602);
    w.send(
        &json!({"jsonrpc": "2.0", "id": "i2", "method": "initialize",
                   "params": {"protocolVersion": "2026-07-28", "capabilities": {},
                              "clientInfo": {"name": "c", "version": "1"}}}),
    )
    .await;
    assert_eq!(w.recv().await["result"]["protocolVersion"], "2025-11-25");
    // Capabilities the server does not offer are unknown methods.
    let (bare, _) = server_with(|b| b);
    let only_tools = Server::builder("t", "1")
        .state_keys(StateKeys::ephemeral())
        .tool(
            Tool::new("x")
                .description("x")
                .handler(|_c: Context, _: NoArgs| async { "x" }),
        )
        .build()
        .unwrap();
    drop(bare);
    let mut w = Wire::new(&only_tools);
    for m in [
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/read",
        "completion/complete",
    ] {
        let r = w
            .request(
                m,
                json!({"_meta": meta(json!({})), "name": "x", "uri": "x"}),
            )
            .await;
        assert_eq!(error_code(&r), -32601, "{m}");
    }
    let d = w
        .request("server/discover", json!({"_meta": meta(json!({}))}))
        .await;
    assert!(result(&d)["capabilities"].get("prompts").is_none());
}

#[tokio::test]
async fn tools_list_is_deterministic_and_paginated() {
    let (srv, _) = server_with(|b| b.page_size(4));
    let mut w = Wire::new(&srv);
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..20 {
        let mut params = json!({"_meta": meta(json!({}))});
        if let Some(c) = &cursor {
            params["cursor"] = json!(c);
        }
        let r = w.request("tools/list", params).await;
        let page = result(&r);
        for t in page["tools"].as_array().unwrap() {
            assert!(t["description"].is_string());
            assert_eq!(t["inputSchema"]["type"], "object");
            names.push(t["name"].as_str().unwrap().to_owned());
        }
        match page["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(names.len(), 25);
    assert_eq!(names[0], "provision_database", "registration order");
    let r = w
        .request(
            "tools/list",
            json!({"_meta": meta(json!({})), "cursor": "bogus"}),
        )
        .await;
    assert_eq!(error_code(&r), -32602);
    let again = w
        .request("tools/list", json!({"_meta": meta(json!({}))}))
        .await;
    let first: Vec<&str> = result(&again)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(first, names[..4]);
}

#[tokio::test]
async fn tool_call_errors() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let r = w.call("no_such_tool", json!({}), json!({})).await;
    assert_eq!(error_code(&r), -32602);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no_such_tool")
    );
    // Arguments the tool cannot take are a tool execution error the model can read and
    // correct (SEP-1303, 2025-11-25 on): an `isError` result, not a protocol error.
    for (args, says) in [
        (json!({"a": "one", "b": 2}), "invalid type"),
        (json!({"a": 1}), "missing field `b`"),
    ] {
        let r = w.call("add", args.clone(), json!({})).await;
        assert_eq!(result(&r)["isError"], true, "{args}: {r}");
        let t = text(&r);
        assert!(
            t.starts_with("Invalid arguments") && t.contains(says),
            "{t}"
        );
        validate_message("tools/call", &r);
    }
    // Arguments that are no object fail the request's own schema: a protocol error.
    let r = w.call("add", json!([1, 2]), json!({})).await;
    assert_eq!(error_code(&r), -32602);
    assert_eq!(
        text(&w.call("add", json!({"a": 40, "b": 2}), json!({})).await),
        "42"
    );
    // A tool without arguments accepts a call without the `arguments` member.
    let r = w
        .request(
            "tools/call",
            json!({"name": "progress", "_meta": meta(json!({}))}),
        )
        .await;
    assert_eq!(text(&r), "finished");
    // Tool failures are results the model can read.
    let r = w.call("fails", json!({}), json!({})).await;
    assert_eq!(result(&r)["isError"], true);
    assert_eq!(text(&r), "disk full");
    // A panic is an internal error, and the server goes on.
    let r = w.call("panics", json!({}), json!({})).await;
    assert_eq!(error_code(&r), -32603);
    assert_eq!(
        text(&w.call("add", json!({"a": 1, "b": 1}), json!({})).await),
        "2"
    );
}

#[tokio::test]
async fn progress_and_logs_go_only_where_asked() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let r = w.call("progress", json!({}), json!({})).await;
    assert_eq!(text(&r), "finished");
    assert!(
        w.notifications.is_empty(),
        "no progressToken, no logLevel: no notifications"
    );
    let mut m = meta(json!({}));
    m["progressToken"] = json!("tok-1");
    m["io.modelcontextprotocol/logLevel"] = json!("info");
    let r = w
        .request(
            "tools/call",
            json!({"name": "progress", "arguments": {}, "_meta": m}),
        )
        .await;
    assert_eq!(text(&r), "finished");
    let progress: Vec<&Value> = w
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3);
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "tok-1")
    );
    assert_eq!(progress[2]["params"]["progress"], 3.0);
    assert_eq!(
        w.notifications
            .iter()
            .filter(|n| n["method"] == "notifications/message")
            .count(),
        1
    );
    w.notifications.clear();
    m["io.modelcontextprotocol/logLevel"] = json!("error");
    w.request(
        "tools/call",
        json!({"name": "progress", "arguments": {}, "_meta": m}),
    )
    .await;
    assert_eq!(
        w.notifications
            .iter()
            .filter(|n| n["method"] == "notifications/message")
            .count(),
        0
    );
}

#[tokio::test]
async fn cancellation_stops_the_handler_and_silences_the_request() {
    let (srv, c) = server();
    let mut w = Wire::new(&srv);
    let id = w.next_id();
    w.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "slow", "arguments": {}, "_meta": meta(json!({}))}})).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    w.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "user"}})).await;
    assert!(
        w.recv_within(Duration::from_millis(500)).await.is_none(),
        "nothing is sent for a cancelled request"
    );
    assert_eq!(
        c.slow_dropped.load(Ordering::SeqCst),
        1,
        "the handler was stopped"
    );
    assert_eq!(
        text(&w.call("add", json!({"a": 2, "b": 2}), json!({})).await),
        "4"
    );
}

#[tokio::test]
async fn malformed_messages_get_clear_errors() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    for (line, code) in [
        ("{not json", -32700),
        (
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}]",
            -32600,
        ),
        (
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"server/discover\"}",
            -32600,
        ),
        (
            "{\"jsonrpc\":\"1.0\",\"id\":5,\"method\":\"server/discover\"}",
            -32600,
        ),
        ("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"x\"}", -32600),
        ("\"just a string\"", -32600),
    ] {
        w.send_raw(line).await;
        let r = w.recv().await;
        validate_message("server/discover", &r);
        assert_eq!(error_code(&r), code, "{line}");
    }
    // The id of an invalid request is kept when it can be read.
    w.send_raw("{\"jsonrpc\":\"1.0\",\"id\":5,\"method\":\"x\"}")
        .await;
    assert_eq!(w.recv().await["id"], 5);
    // Notifications get no answer; a response from the client is ignored.
    w.send(&json!({"jsonrpc": "2.0", "method": "notifications/whatever"}))
        .await;
    w.send(&json!({"jsonrpc": "2.0", "id": 99, "result": {}}))
        .await;
    assert!(w.recv_within(Duration::from_millis(200)).await.is_none());
}

#[tokio::test]
async fn duplicate_ids_in_flight_are_refused() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let req = json!({"jsonrpc": "2.0", "id": "dup", "method": "tools/call", "params": {"name": "slow", "arguments": {}, "_meta": meta(json!({}))}});
    w.send(&req).await;
    w.send(&req).await;
    let r = w.recv().await;
    assert_eq!(r["id"], "dup");
    assert_eq!(error_code(&r), -32600);
}

#[tokio::test]
async fn resources_read_and_not_found() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let r = w
        .request(
            "resources/read",
            json!({"uri": "test://static", "_meta": meta(json!({}))}),
        )
        .await;
    let res = result(&r);
    assert_eq!(res["contents"][0]["text"], "static text");
    assert_eq!(res["contents"][0]["mimeType"], "text/plain");
    assert_eq!(res["ttlMs"], 60000);
    assert_eq!(res["cacheScope"], "public");
    let r = w
        .request(
            "resources/read",
            json!({"uri": "test://missing", "_meta": meta(json!({}))}),
        )
        .await;
    assert_eq!(error_code(&r), -32602);
    assert_eq!(r["error"]["data"]["uri"], "test://missing");
    let r = w
        .request(
            "resources/templates/list",
            json!({"_meta": meta(json!({}))}),
        )
        .await;
    assert_eq!(
        result(&r)["resourceTemplates"][0]["uriTemplate"],
        "test://secret/{id}"
    );
    let r = w
        .request(
            "prompts/get",
            json!({"name": "nope", "_meta": meta(caps_all())}),
        )
        .await;
    assert_eq!(error_code(&r), -32602);
}

#[test]
fn bad_registrations_fail_at_build() {
    let b = || Server::builder("s", "1").state_keys(StateKeys::ephemeral());
    let e = b().tool(nested_form_tool()).build().unwrap_err();
    assert!(
        matches!(&e, BuildError::Invalid { name, reason } if name == "nested" && reason.to_string().contains("flat")),
        "{e}"
    );
    let t = || Tool::new("same").handler(|_c: Context, _: NoArgs| async { "x" });
    assert!(matches!(
        b().tool(t()).tool(t()).build(),
        Err(BuildError::Duplicate { .. })
    ));
    let bad = Tool::new("bad name!").handler(|_c: Context, _: NoArgs| async { "x" });
    assert!(matches!(
        b().tool(bad).build(),
        Err(BuildError::InvalidName(_))
    ));
    let scalar = Tool::new("scalar").handler(|_c: Context, _: String| async { "x" });
    assert!(matches!(
        b().tool(scalar).build(),
        Err(BuildError::Invalid { .. })
    ));
}

#[tokio::test]
async fn completion_of_prompt_arguments() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let r = w
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "with_completion"}, "argument": {"name": "language", "value": "ru"}, "_meta": meta(json!({}))}),
        )
        .await;
    assert_eq!(result(&r)["completion"]["values"], json!(["rust", "ruby"]));
    let r = w
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "with_completion"}, "argument": {"name": "other", "value": ""}, "_meta": meta(json!({}))}),
        )
        .await;
    assert_eq!(result(&r)["completion"]["values"], json!([]));
    let r = w
        .request(
            "completion/complete",
            json!({"ref": {"type": "bogus"}, "_meta": meta(json!({}))}),
        )
        .await;
    assert_eq!(error_code(&r), -32602);
    let r = w
        .request("prompts/list", json!({"_meta": meta(json!({}))}))
        .await;
    let p = &result(&r)["prompts"][0];
    assert_eq!(p["name"], "with_completion");
    assert_eq!(p["arguments"][0]["name"], "language");
    assert_eq!(p["arguments"][0]["required"], true);
    assert_eq!(p["arguments"][0]["description"], "A programming language.");
    let d = w
        .request("server/discover", json!({"_meta": meta(json!({}))}))
        .await;
    assert!(result(&d)["capabilities"]["completions"].is_object());
}

/// The server reads usual requests in one pass and everything else in two; both must
/// give the same answer to every message, valid or not.
#[tokio::test]
async fn one_pass_and_two_pass_readers_agree() {
    use sterna::server::RequestEnv;
    use sterna::types::jsonrpc::{Incoming, RawMessage};
    let (srv, _) = server();
    let m = meta(caps_all()).to_string();
    let bad_meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;
    let old_meta = r#"{"io.modelcontextprotocol/protocolVersion":"2024-11-05","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let params = [
        format!(r#"{{"name":"add","arguments":{{"a":1,"b":2}},"_meta":{m}}}"#),
        format!(r#"{{"_meta":{m},"name":"add","arguments":{{"a":1,"b":"x"}}}}"#),
        format!(r#"{{"name":"add","arguments":{{"a":1,"b":2}},"_meta":{bad_meta}}}"#),
        format!(r#"{{"name":"add","arguments":{{"a":1,"b":2}},"_meta":{old_meta}}}"#),
        format!(r#"{{"name":5,"_meta":{m}}}"#),
        r#"{"name":"add","_meta":[]}"#.to_owned(),
        format!(r#"{{"name":"nope","_meta":{m}}}"#),
        format!(r#"{{"name":"greeting","arguments":{{"name":"Ada"}},"_meta":{m}}}"#),
        format!(r#"{{"uri":"test://static","_meta":{m}}}"#),
        format!(r#"{{"uri":"test://missing","_meta":{m}}}"#),
        format!(r#"{{"cursor":"bogus","_meta":{m}}}"#),
        format!(r#"{{"_meta":{m}}}"#),
        format!(r#"{{"name":"add","inputResponses":[],"_meta":{m}}}"#),
        format!(r#"{{"name":"add","arguments":{{"a":1,"b":2}},"_meta":{m},"_meta":{m}}}"#),
        r#"{"name":"add"}"#.to_owned(),
        "[]".to_owned(),
        "null".to_owned(),
    ];
    let methods = [
        "tools/call",
        "prompts/get",
        "resources/read",
        "tools/list",
        "server/discover",
        "completion/complete",
        "no/such/method",
        "ping",
    ];
    let mut compared = 0;
    for method in methods {
        for p in &params {
            let line = format!(r#"{{"jsonrpc":"2.0","id":3,"method":"{method}","params":{p}}}"#);
            let one = srv.handle_message(line.as_bytes(), RequestEnv::new()).await;
            let Ok(Incoming::Request { id, method, params }) = RawMessage::parse(line.as_bytes())
            else {
                panic!("not a request: {line}");
            };
            let two = srv.handle(id, &method, params, RequestEnv::new()).await;
            // Sealed states differ by their random nonce; everything else is equal.
            let answer = |r: Option<sterna::server::Response>| {
                let mut v: Value = serde_json::from_slice(&r.unwrap().to_bytes()).unwrap();
                if let Some(s) = v["result"].get_mut("requestState") {
                    *s = json!("sealed");
                }
                v
            };
            assert_eq!(answer(one), answer(two), "{line}");
            compared += 1;
        }
    }
    assert_eq!(compared, methods.len() * params.len());
}

/// Params that cannot be read name what is wrong with them: a `_meta` given twice, or
/// one nested too deep to read, is not reported as missing.
#[tokio::test]
async fn unreadable_params_say_why_not_that_meta_is_missing() {
    let (srv, _) = server();
    let mut w = Wire::new(&srv);
    let m = meta(json!({})).to_string();
    let twice = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{m},"_meta":{m}}}}}"#
    );
    // Deep values the server ignores cost nothing (skipped without recursion); one it
    // must read, inside `_meta`, is refused for its depth.
    let deep_meta = format!(r#"{{"deep":{}{}}}"#, "[".repeat(1000), "]".repeat(1000));
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{"_meta":{deep_meta}}}}}"#
    );
    for (line, says) in [
        (twice, "duplicate field `_meta`"),
        (deep, "recursion limit"),
    ] {
        w.send_raw(&line).await;
        let r = w.recv().await;
        assert_eq!(error_code(&r), -32602, "{r}");
        let message = r["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{message}");
        assert!(!message.contains("Missing"), "{message}");
    }
}

/// On a stream (stdio), a line too long or not UTF-8 is refused (`-32700`) and skipped,
/// and the session goes on: either used to end the whole stream (the line reader
/// returned its end after its first error).
#[tokio::test]
async fn a_bad_line_on_a_stream_is_refused_and_the_stream_goes_on() {
    use sterna::server::transport::{StreamOptions, duplex};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (srv, _) = server();
    let options = StreamOptions {
        max_line: 4096,
        ..StreamOptions::default()
    };
    let (r, mut w) = tokio::io::split(duplex(srv.clone(), options));
    let mut lines = BufReader::new(r).lines();
    let long = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{{\"p\":\"{}\"}}}}\n",
        "a".repeat(8000)
    );
    let discover = json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover",
        "params": {"_meta": meta(json!({}))}});
    for bytes in [
        long.as_bytes(),
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\xff\"}\n",
        format!("{discover}\n").as_bytes(),
    ] {
        w.write_all(bytes).await.unwrap();
    }
    w.flush().await.unwrap();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await;
        let line = line.expect("an answer within 10 s").unwrap();
        serde_json::from_str(&line.expect("the stream goes on")).unwrap()
    };
    for says in ["too long", "not UTF-8"] {
        let r = next().await;
        assert_eq!(error_code(&r), -32700, "{r}");
        assert!(
            r["error"]["message"].as_str().unwrap().contains(says),
            "{r}"
        );
    }
    let r = next().await;
    assert_eq!(r["id"], 3);
    assert!(r["result"]["supportedVersions"].is_array(), "{r}");
}
