//! Each rule of the MRTR driver, against a scripted server.

use super::scripted::{Scripted, ask, done};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use sterna::client::{Call, Client, ClientError, GaveUp, Pending, Refusal, Step};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};
use sterna::types::sampling::{CreateMessageRequestParams, CreateMessageResult};
use sterna::types::tools::CallToolResult;
use tokio::sync::Barrier;

fn accept_ok()
-> impl Fn(ElicitFormParams) -> std::future::Ready<ElicitResult> + Send + Sync + 'static {
    |_| {
        std::future::ready(ElicitResult::accept(
            json!({"ok": true}).as_object().unwrap().clone(),
        ))
    }
}

fn client(t: &Scripted) -> Client {
    Client::builder("driver-test", "0")
        .on_elicit(accept_ok())
        .state_only_backoff(Duration::from_millis(20), Duration::from_millis(80))
        .build(t.clone())
}

#[tokio::test]
async fn every_round_has_a_new_id_and_echoes_the_state_exactly() {
    // A state with characters a careless client might normalize.
    let weird = "  A+/=é\u{2028}\\\"x  ";
    let t = Scripted::new(move |req, n| match n {
        0 => ask("q1", Some(weird)),
        1 => ask("q2", Some("second state")),
        _ => {
            assert!(
                req["params"]["inputResponses"].get("q1").is_none(),
                "only this round's answers"
            );
            done("ok")
        }
    });
    let r = client(&t).call_tool("x", json!({"a": 1})).await.unwrap();
    assert_eq!(r.text_content(), "ok");
    let reqs = t.requests();
    assert_eq!(reqs.len(), 3);
    let ids: Vec<&Value> = reqs.iter().map(|r| &r["id"]).collect();
    assert!(
        ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2],
        "{ids:?}"
    );
    assert!(reqs[0]["params"].get("requestState").is_none());
    assert!(reqs[0]["params"].get("inputResponses").is_none());
    assert_eq!(reqs[1]["params"]["requestState"].as_str().unwrap(), weird);
    assert_eq!(
        reqs[1]["params"]["inputResponses"]["q1"]["content"]["ok"],
        true
    );
    assert_eq!(reqs[2]["params"]["requestState"], "second state");
    for r in &reqs {
        assert_eq!(r["params"]["name"], "x");
        assert_eq!(
            r["params"]["arguments"],
            json!({"a": 1}),
            "the original params on every round"
        );
        assert_eq!(
            r["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            r["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            json!({"elicitation": {"form": {}}})
        );
        assert_eq!(
            r["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]["name"],
            "driver-test"
        );
    }
}

#[tokio::test]
async fn no_state_is_sent_when_none_was_received() {
    let t = Scripted::new(|_, n| if n == 0 { ask("q", None) } else { done("ok") });
    client(&t).call_tool("x", ()).await.unwrap();
    let reqs = t.requests();
    assert!(
        reqs[1]["params"].get("requestState").is_none(),
        "absent, not null: {}",
        reqs[1]
    );
    assert!(
        reqs[0]["params"].get("arguments").is_none(),
        "no arguments member for ()"
    );
}

#[tokio::test]
async fn mrtr_fields_never_leak_into_a_parallel_call() {
    let gate = Arc::new(Barrier::new(2));
    let t = Scripted::new(|req, _| {
        if req["params"]["name"] == "slow" && req["params"].get("requestState").is_none() {
            ask("q", Some("S-slow"))
        } else {
            done("ok")
        }
    });
    let g = gate.clone();
    let c = Client::builder("t", "0")
        .on_elicit(move |_f: ElicitFormParams| {
            let g = g.clone();
            async move {
                // Hold the answer until the unrelated call went out.
                g.wait().await;
                ElicitResult::accept(json!({"ok": true}).as_object().unwrap().clone())
            }
        })
        .build(t.clone());
    let c2 = c.clone();
    let slow = tokio::spawn(async move { c2.call_tool("slow", ()).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    c.call_tool("unrelated", ()).await.unwrap();
    gate.wait().await;
    slow.await.unwrap().unwrap();
    for r in t.requests() {
        if r["params"]["name"] == "unrelated" {
            assert!(
                r["params"].get("requestState").is_none()
                    && r["params"].get("inputResponses").is_none(),
                "{r}"
            );
        }
    }
}

#[tokio::test]
async fn the_round_cap_stops_an_endless_server() {
    let t = Scripted::new(|_, n| ask("q", Some(&format!("s{n}"))));
    let c = Client::builder("t", "0")
        .on_elicit(accept_ok())
        .max_rounds(4)
        .build(t.clone());
    match c.call_tool("x", ()).await {
        Err(ClientError::GaveUp(GaveUp::Rounds(4))) => {}
        other => panic!("expected the round cap: {other:?}"),
    }
    assert_eq!(t.requests().len(), 4);
}

#[tokio::test]
async fn the_time_budget_stops_a_slow_flow() {
    let t = Scripted::new(|_, n| {
        if n == 0 {
            ask("q", Some("s"))
        } else {
            done("ok")
        }
    });
    let c = Client::builder("t", "0")
        .on_elicit(|_f: ElicitFormParams| async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            ElicitResult::cancel()
        })
        .time_budget(Duration::from_millis(300))
        .build(t.clone());
    let started = Instant::now();
    match c.call_tool("x", ()).await {
        Err(ClientError::GaveUp(GaveUp::TimeBudget(_))) => {}
        other => panic!("expected the time budget: {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn state_only_rounds_back_off() {
    let t = Scripted::new(|_, n| match n {
        0..=3 => json!({"resultType": "input_required", "requestState": format!("busy{n}")}),
        _ => done("ok"),
    });
    let started = Instant::now();
    let r = client(&t).call_tool("x", ()).await.unwrap();
    assert_eq!(r.text_content(), "ok");
    // 20 + 40 + 80 + 80 ms (doubling, capped at 80).
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_millis(215), "{elapsed:?}");
    let reqs = t.requests();
    assert_eq!(reqs.len(), 5);
    assert!(
        reqs[1]["params"].get("inputResponses").is_none(),
        "nothing to answer in a state-only round"
    );
    assert_eq!(reqs[4]["params"]["requestState"], "busy3");
}

#[tokio::test]
async fn independent_questions_are_fulfilled_concurrently() {
    let t = Scripted::new(|_, n| {
        if n == 0 {
            json!({"resultType": "input_required", "requestState": "s", "inputRequests": {
                "a": {"method": "elicitation/create", "params": {"message": "a?", "requestedSchema": {"type": "object", "properties": {}}}},
                "b": {"method": "elicitation/create", "params": {"message": "b?", "requestedSchema": {"type": "object", "properties": {}}}},
                "c": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}
            }})
        } else {
            done("ok")
        }
    });
    // Each handler waits for all three: only concurrent fulfilment can finish.
    let gate = Arc::new(Barrier::new(3));
    let (g1, g2) = (gate.clone(), gate.clone());
    let c = Client::builder("t", "0")
        .on_elicit(move |_f: ElicitFormParams| {
            let g = g1.clone();
            async move {
                g.wait().await;
                ElicitResult::decline()
            }
        })
        .on_sample(move |_p: CreateMessageRequestParams| {
            let g = g2.clone();
            async move {
                g.wait().await;
                Ok::<_, Refusal>(CreateMessageResult::text("m", "hi"))
            }
        })
        .time_budget(Duration::from_secs(5))
        .build(t.clone());
    c.call_tool("x", ()).await.unwrap();
    let retry = &t.requests()[1];
    assert_eq!(retry["params"]["inputResponses"]["a"]["action"], "decline");
    assert_eq!(retry["params"]["inputResponses"]["c"]["model"], "m");
}

#[tokio::test]
async fn refused_sampling_abandons_the_call() {
    let t = Scripted::new(
        |_, _| json!({"resultType": "input_required", "inputRequests": {"s": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}}}),
    );
    let c = Client::builder("t", "0")
        .on_sample(|_p: CreateMessageRequestParams| async {
            Err::<CreateMessageResult, _>(Refusal::new("no model here"))
        })
        .build(t.clone());
    assert!(matches!(
        c.call_tool("x", ()).await,
        Err(ClientError::Refused(_))
    ));
    assert_eq!(t.requests().len(), 1, "no retry after a refusal");
}

#[tokio::test]
async fn questions_never_declared_are_protocol_violations() {
    let t = Scripted::new(
        |_, _| json!({"resultType": "input_required", "inputRequests": {"r": {"method": "roots/list"}}}),
    );
    let c = client(&t);
    assert!(matches!(
        c.call_tool("x", ()).await,
        Err(ClientError::Protocol(_))
    ));
    let t = Scripted::new(|_, _| json!({"resultType": "input_required"}));
    assert!(matches!(
        client(&t).call_tool("x", ()).await,
        Err(ClientError::Protocol(_))
    ));
}

#[tokio::test]
async fn a_round_with_more_questions_than_the_cap_is_refused_unanswered() {
    let many = |n: usize| {
        let q = json!({"method": "elicitation/create", "params": {"mode": "form", "message": "?",
            "requestedSchema": {"type": "object", "properties": {}}}});
        let asks: serde_json::Map<String, Value> =
            (0..n).map(|i| (format!("q{i}"), q.clone())).collect();
        json!({"resultType": "input_required", "inputRequests": asks, "requestState": "s"})
    };
    let asked = Arc::new(AtomicUsize::new(0));
    let seen = asked.clone();
    let t = Scripted::new(move |_, _| many(100_000));
    let c = Client::builder("t", "0")
        .on_elicit(move |_| {
            seen.fetch_add(1, Ordering::SeqCst);
            std::future::ready(ElicitResult::decline())
        })
        .build(t.clone());
    match c.call_tool("x", ()).await {
        Err(ClientError::Protocol(v)) => {
            let msg = v.to_string();
            assert!(msg.contains("100000") && msg.contains("64"), "{msg}");
        }
        other => panic!("expected a protocol violation: {other:?}"),
    }
    assert_eq!(asked.load(Ordering::SeqCst), 0, "no question was answered");
    assert_eq!(t.requests().len(), 1, "no retry");
    // Up to the cap (configurable) a round is answered as usual.
    let t = Scripted::new(move |_, n| if n == 0 { many(8) } else { done("ok") });
    let c = Client::builder("t", "0")
        .on_elicit(accept_ok())
        .max_input_requests(8)
        .build(t.clone());
    assert!(c.call_tool("x", ()).await.is_ok());
}

#[tokio::test]
async fn a_task_asking_more_questions_than_the_cap_is_refused_and_cancelled() {
    let q = json!({"method": "elicitation/create", "params": {"mode": "form", "message": "?",
        "requestedSchema": {"type": "object", "properties": {}}}});
    let asks: serde_json::Map<String, Value> =
        (0..1000).map(|i| (format!("q{i}"), q.clone())).collect();
    let task = json!({"taskId": "t1", "createdAt": "2026-12-06T00:00:00Z",
        "lastUpdatedAt": "2026-12-06T00:00:00Z", "pollIntervalMs": 10, "ttlMs": 60000});
    let t = Scripted::new(move |msg, _| {
        let mut r = task.clone();
        match msg["method"].as_str() {
            Some("tools/call") => {
                r["resultType"] = json!("task");
                r["status"] = json!("working");
            }
            Some("tasks/get") => {
                r["resultType"] = json!("complete");
                r["status"] = json!("input_required");
                r["inputRequests"] = Value::Object(asks.clone());
            }
            _ => r = json!({"resultType": "complete"}),
        }
        r
    });
    let c = Client::builder("t", "0")
        .on_elicit(accept_ok())
        .tasks(true)
        .build(t.clone());
    match c.call_tool("x", ()).await {
        Err(ClientError::Protocol(v)) => assert!(v.to_string().contains("1000"), "{v}"),
        other => panic!("expected a protocol violation: {other:?}"),
    }
    // The task is cancelled (on a task of its own, so looked for a little while).
    let methods = || -> Vec<Value> { t.requests().iter().map(|r| r["method"].clone()).collect() };
    for _ in 0..100 {
        if methods().contains(&json!("tasks/cancel")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let methods = methods();
    assert!(
        methods.contains(&json!("tasks/cancel")),
        "the task is cancelled: {methods:?}"
    );
    assert!(
        !methods.contains(&json!("tasks/update")),
        "nothing answered: {methods:?}"
    );
}

#[tokio::test]
async fn result_types_absent_means_complete_unknown_is_an_error() {
    let t = Scripted::new(|_, _| json!({"content": [{"type": "text", "text": "legacy"}]}));
    assert_eq!(
        client(&t).call_tool("x", ()).await.unwrap().text_content(),
        "legacy"
    );
    let t = Scripted::new(|_, _| json!({"resultType": "task", "taskId": "1"}));
    assert!(matches!(
        client(&t).call_tool("x", ()).await,
        Err(ClientError::Protocol(_))
    ));
}

#[tokio::test]
async fn server_errors_are_typed() {
    let t = Scripted::new(|_, _| json!({"error": {"code": -32602, "message": "Unknown tool: x"}}));
    match client(&t).call_tool("x", ()).await {
        Err(ClientError::Server(e)) => assert_eq!(e.code.code(), -32602),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn unsupported_version_picks_a_common_one_and_retries() {
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let t = Scripted::new(move |_, n| {
        s.fetch_add(1, Ordering::SeqCst);
        if n == 0 {
            json!({"error": {"code": -32022, "message": "Unsupported protocol version", "data": {"supported": ["2026-07-28"], "requested": "x"}}})
        } else {
            done("ok")
        }
    });
    assert_eq!(
        client(&t).call_tool("x", ()).await.unwrap().text_content(),
        "ok"
    );
    assert_eq!(seen.load(Ordering::SeqCst), 2);
    let t = Scripted::new(
        |_, _| json!({"error": {"code": -32022, "message": "no", "data": {"supported": ["2025-11-25"], "requested": "2026-07-28"}}}),
    );
    assert!(matches!(
        client(&t).call_tool("x", ()).await,
        Err(ClientError::Incompatible { .. })
    ));
}

#[tokio::test]
async fn a_pending_call_survives_serialization_into_a_fresh_client() {
    let t = Scripted::new(|req, _| {
        if req["params"].get("requestState").is_some() {
            done(&format!("resumed with {}", req["params"]["requestState"]))
        } else {
            ask("q", Some("opaque-state-1"))
        }
    });
    let first = client(&t);
    let Step::InputRequired(pending) = first
        .start(Call::tool("x", json!({"k": "v"})))
        .await
        .unwrap()
    else {
        panic!("expected input_required");
    };
    assert_eq!(pending.requests().keys().collect::<Vec<_>>(), ["q"]);
    let saved = serde_json::to_string(&pending).unwrap();
    assert!(!saved.contains("null"));
    drop(first);
    // Later, elsewhere: a fresh client with no memory of the call.
    let restored: Pending<CallToolResult> = serde_json::from_str(&saved).unwrap();
    let fresh = client(&t);
    let answers = fresh.fulfil(restored.requests()).await.unwrap();
    let Step::Complete(r) = fresh.resume(restored, answers).await.unwrap() else {
        panic!()
    };
    assert_eq!(r.text_content(), "resumed with \"opaque-state-1\"");
    let last = t.requests().pop().unwrap();
    assert_eq!(last["params"]["arguments"], json!({"k": "v"}));
}

#[tokio::test]
async fn a_broken_response_stream_is_reissued_with_a_new_id() {
    let t = Scripted::new(|_, n| {
        if n == 0 {
            json!({"__broken": true})
        } else {
            done("ok")
        }
    });
    assert_eq!(
        client(&t).call_tool("x", ()).await.unwrap().text_content(),
        "ok"
    );
    let reqs = t.requests();
    assert_eq!(reqs.len(), 2);
    assert_ne!(reqs[0]["id"], reqs[1]["id"]);
    // Not forever: a stream that keeps breaking is a transport error.
    let t = Scripted::new(|_, _| json!({"__broken": true}));
    assert!(matches!(
        client(&t).call_tool("x", ()).await,
        Err(ClientError::Transport(_))
    ));
    assert_eq!(t.requests().len(), 3);
}

#[tokio::test]
async fn a_header_mismatch_refreshes_the_tool_list_and_retries_once() {
    let tools = json!({"resultType": "complete", "tools": [
        {"name": "q", "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}},
        {"name": "bad", "inputSchema": {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}}
    ]});
    let calls = Arc::new(AtomicUsize::new(0));
    let c2 = calls.clone();
    let t = Scripted::new(move |req, _| match req["method"].as_str().unwrap() {
        "tools/list" => tools.clone(),
        _ => {
            if c2.fetch_add(1, Ordering::SeqCst) == 0 {
                json!({"error": {"code": -32020, "message": "Header mismatch"}})
            } else {
                done("ok")
            }
        }
    })
    .with_headers();
    let c = client(&t);
    assert_eq!(
        c.call_tool("q", json!({"region": "eu"}))
            .await
            .unwrap()
            .text_content(),
        "ok"
    );
    let log: Vec<_> = t
        .log
        .lock()
        .unwrap()
        .iter()
        .map(|(o, _)| o.clone())
        .collect();
    let methods: Vec<&str> = log.iter().map(|o| o.method.as_str()).collect();
    assert_eq!(
        methods,
        ["tools/list", "tools/call", "tools/list", "tools/call"]
    );
    assert_eq!(log[3].params, vec![("Region".to_owned(), "eu".to_owned())]);
    assert_eq!(log[3].name.as_deref(), Some("q"));
    // Tools whose annotations are invalid are left out of the client's view.
    let names: Vec<String> = c
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["q"]);
}
