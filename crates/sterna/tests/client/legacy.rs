//! One set of handlers for both eras: the handler that answers MRTR questions answers the
//! requests a 2025-11-25 server pushes; the 2025 wire errors for what the client cannot
//! answer; manual mode over pushed questions; `-32042`; server events.

use super::fixture::server;
use super::peer::{Peer, form, pair, text};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use sterna::client::{Call, Client, EraMode, Refusal, ServerEvent, Step};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult, ElicitUrlParams};
use sterna::types::mrtr::{InputRequest, InputResponse, InputResponses};
use sterna::types::sampling::{CreateMessageRequestParams, CreateMessageResult};

/// A form handler that records each message it was shown and picks us-east-1.
fn recording(seen: Arc<Mutex<Vec<String>>>) -> impl sterna::client::FormHandler {
    move |f: ElicitFormParams| {
        seen.lock().unwrap().push(f.message.clone());
        async move {
            ElicitResult::accept(
                json!({"region": "us-east-1", "name": "Ada"})
                    .as_object()
                    .unwrap()
                    .clone(),
            )
        }
    }
}

#[tokio::test]
async fn the_same_handler_answers_an_mrtr_question_and_a_pushed_request() {
    // sterna's own server speaks both eras: the client in Auto mode finds it modern
    // (MRTR); forced to 2025-11-25, the same server pushes the question instead.
    for (mode, legacy) in [(EraMode::Auto, false), (EraMode::Legacy, true)] {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let client = Client::builder("both-eras", "0")
            .on_elicit(recording(seen.clone()))
            .era(mode)
            .in_process(server().0);
        let r = client
            .call_tool("provision_database", json!({"name": "orders"}))
            .await
            .unwrap();
        assert_eq!(r.text_content(), "Created orders in us-east-1");
        assert_eq!(client.era().await.unwrap().is_legacy(), legacy);
        assert_eq!(
            *seen.lock().unwrap(),
            ["Which region for orders?"],
            "{mode:?}: the handler ran once"
        );
    }
}

fn full(t: sterna::client::transport::StreamTransport) -> Client {
    Client::builder("pushes", "0")
        .on_elicit(recording(Arc::default()))
        .on_sample(|_p: CreateMessageRequestParams| async {
            Err::<CreateMessageResult, _>(Refusal::new("not now"))
        })
        .time_budget(std::time::Duration::from_secs(20))
        .era(EraMode::Legacy)
        .build(t)
}

#[tokio::test]
async fn pushes_get_the_2025_answers_and_errors() {
    let (t, mut peer) = pair();
    let client = full(t);
    let server = tokio::spawn(async move {
        let init = peer.accept_initialize("2025-11-25").await;
        assert_eq!(
            init["capabilities"],
            json!({"elicitation": {"form": {}}, "sampling": {}})
        );
        let call = peer.expect("tools/call").await;
        let r = peer.push(json!(1), "ping", json!({})).await;
        assert_eq!(r["result"], json!({}));
        let r = peer
            .push(json!("f"), "elicitation/create", form("name"))
            .await;
        assert_eq!(r["result"]["action"], "accept");
        assert_eq!(r["result"]["content"]["name"], "Ada");
        // Form mode written out, and the 2025-06-18 form without `mode`, both work.
        let mut with_mode = form("name");
        with_mode["mode"] = json!("form");
        let r = peer.push(json!(2), "elicitation/create", with_mode).await;
        assert_eq!(r["result"]["action"], "accept");
        let url = json!({"mode": "url", "message": "Sign in", "url": "https://example.com", "elicitationId": "u1"});
        let r = peer.push(json!(3), "elicitation/create", url).await;
        assert_eq!(r["error"]["code"], -32602, "an undeclared mode: {r}");
        let r = peer.push(json!(4), "roots/list", json!({})).await;
        assert_eq!(r["error"]["code"], -32601, "no roots handler: {r}");
        let sample = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5});
        let r = peer
            .push(json!(5), "sampling/createMessage", sample.clone())
            .await;
        assert_eq!(r["error"]["code"], -1, "a refused sampling: {r}");
        let mut with_tools = sample;
        with_tools["tools"] = json!([{"name": "t", "inputSchema": {"type": "object"}}]);
        let r = peer
            .push(json!(6), "sampling/createMessage", with_tools)
            .await;
        assert_eq!(r["error"]["code"], -32602, "sampling.tools undeclared: {r}");
        let r = peer.push(json!(7), "tasks/list", json!({})).await;
        assert_eq!(r["error"]["code"], -32601);
        let r = peer
            .push(json!(8), "elicitation/create", json!({"message": 1}))
            .await;
        assert_eq!(r["error"]["code"], -32602, "malformed params: {r}");
        peer.result(&call["id"], text("done")).await;
    });
    let r = client.call_tool("x", json!({})).await.unwrap();
    assert_eq!(r.text_content(), "done");
    server.await.unwrap();
}

#[tokio::test]
async fn a_server_pushing_without_end_gets_refusals_beyond_the_cap() {
    let (t, mut peer) = pair();
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let shown = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (g, n) = (gate.clone(), shown.clone());
    let client = Client::builder("flooded", "0")
        .on_elicit(move |_f: ElicitFormParams| {
            let (g, n) = (g.clone(), n.clone());
            async move {
                n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let _ = g.acquire().await;
                ElicitResult::decline()
            }
        })
        .time_budget(Duration::from_secs(20))
        .era(EraMode::Legacy)
        .build(t);
    let server = tokio::spawn(async move {
        peer.accept_initialize("2025-11-25").await;
        let call = peer.expect("tools/call").await;
        let total = 1000;
        for i in 0..total {
            peer.send(&json!({"jsonrpc": "2.0", "id": i, "method": "elicitation/create", "params": form("name")}))
                .await;
        }
        // Pings are answered whatever waits.
        let ping = json!({"jsonrpc": "2.0", "id": "p", "method": "ping", "params": {}});
        peer.send(&ping).await;
        let mut refused = 0;
        let mut pinged = false;
        while refused < total - 32 || !pinged {
            let r = peer.recv().await.expect("the client answers");
            if r["id"] == "p" {
                pinged = true;
                continue;
            }
            assert_eq!(r["error"]["code"], -32603, "{r}");
            assert!(
                r["error"]["message"].as_str().unwrap().contains("32"),
                "{r}"
            );
            refused += 1;
        }
        (peer, call)
    });
    let call = tokio::spawn(async move { client.call_tool("x", json!({})).await });
    let (mut peer, call_req) = tokio::time::timeout(Duration::from_secs(20), server)
        .await
        .expect("refusals within 20 s")
        .unwrap();
    assert_eq!(shown.load(std::sync::atomic::Ordering::SeqCst), 32);
    // Once the handlers answer, the 32 questions get their answers.
    gate.add_permits(1000);
    for _ in 0..32 {
        let r = peer.recv().await.unwrap();
        assert_eq!(r["result"]["action"], "decline", "{r}");
    }
    peer.result(&call_req["id"], text("done")).await;
    assert_eq!(call.await.unwrap().unwrap().text_content(), "done");
}

#[tokio::test]
async fn manual_mode_surfaces_pushed_questions_and_answers_them_on_resume() {
    let (t, mut peer) = pair();
    let client = full(t);
    let server = tokio::spawn(async move {
        peer.accept_initialize("2025-11-25").await;
        let call = peer.expect("tools/call").await;
        assert!(call["params"].get("inputResponses").is_none());
        // Two questions pushed together make one round.
        for (id, field) in [("q-a", "name"), ("q-b", "color")] {
            peer.send(&json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": form(field)}))
                .await;
        }
        let mut answers = Vec::new();
        for _ in 0..2 {
            answers.push(peer.recv().await.unwrap());
        }
        answers.sort_by_key(|a| a["id"].as_str().unwrap().to_owned());
        assert_eq!(answers[0]["result"]["content"], json!({"name": "Grace"}));
        assert_eq!(
            answers[1]["result"],
            json!({"action": "cancel"}),
            "left unanswered"
        );
        peer.result(&call["id"], text("manual done")).await;
    });
    let Step::InputRequired(pending) = client.start(Call::tool("x", json!({}))).await.unwrap()
    else {
        panic!("the pushes should surface");
    };
    assert_eq!(pending.round(), 1);
    assert!(!pending.is_portable());
    assert!(!pending.has_state());
    let keys: Vec<&String> = pending.requests().keys().collect();
    assert_eq!(keys, ["q-a", "q-b"]);
    assert!(matches!(pending.requests()["q-a"], InputRequest::Elicit(_)));
    let err = serde_json::to_string(&pending).unwrap_err();
    assert!(err.to_string().contains("cannot be serialized"), "{err}");
    let mut answers = InputResponses::new();
    answers.insert(
        "q-a".into(),
        InputResponse::Elicit(ElicitResult::accept(
            json!({"name": "Grace"}).as_object().unwrap().clone(),
        )),
    );
    let Step::Complete(r) = client.resume(pending, answers).await.unwrap() else {
        panic!("the call should complete");
    };
    assert_eq!(r.text_content(), "manual done");
    server.await.unwrap();
}

#[tokio::test]
async fn a_dropped_pending_call_cancels_and_answers_its_questions() {
    let (t, mut peer) = pair();
    let client = full(t);
    let server = tokio::spawn(async move {
        peer.accept_initialize("2025-11-25").await;
        let call = peer.expect("tools/call").await;
        peer.send(&json!({"jsonrpc": "2.0", "id": 9, "method": "elicitation/create", "params": form("name")}))
            .await;
        let mut got = [peer.recv().await.unwrap(), peer.recv().await.unwrap()];
        got.sort_by_key(|m| m.get("method").is_some());
        assert_eq!(got[0]["result"], json!({"action": "cancel"}));
        assert_eq!(got[1]["method"], "notifications/cancelled");
        assert_eq!(got[1]["params"]["requestId"], call["id"]);
    });
    let step = client.start(Call::tool("x", json!({}))).await.unwrap();
    assert!(matches!(step, Step::InputRequired(_)));
    drop(step);
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .unwrap()
        .unwrap();
}

async fn url_required(peer: &mut Peer) -> Value {
    let call = peer.expect("tools/call").await;
    peer.send(
        &json!({"jsonrpc": "2.0", "id": call["id"], "error": {"code": -32042,
        "message": "This request requires more information.",
        "data": {"elicitations": [{"mode": "url", "elicitationId": "auth-1",
            "url": "https://example.com/connect", "message": "Connect your account"}]}}}),
    )
    .await;
    call
}

#[tokio::test]
async fn url_elicitation_required_is_shown_awaited_and_retried() {
    let (t, mut peer) = pair();
    let shown = Arc::new(Mutex::new(Vec::new()));
    let s = shown.clone();
    let events = Arc::new(Mutex::new(Vec::new()));
    let e = events.clone();
    let client = Client::builder("url", "0")
        .on_elicit_url(move |u: ElicitUrlParams| {
            s.lock().unwrap().push(u.url.clone());
            async { ElicitResult::accept(Default::default()) }
        })
        .on_event(move |ev| e.lock().unwrap().push(ev))
        .time_budget(std::time::Duration::from_secs(20))
        .era(EraMode::Legacy)
        .build(t);
    let server = tokio::spawn(async move {
        let init = peer.accept_initialize("2025-11-25").await;
        assert_eq!(init["capabilities"], json!({"elicitation": {"url": {}}}));
        let first = url_required(&mut peer).await;
        peer.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
            "params": {"elicitationId": "auth-1"}}),
        )
        .await;
        let again = peer.expect("tools/call").await;
        assert_ne!(again["id"], first["id"]);
        peer.result(&again["id"], text("connected")).await;
    });
    let r = client.call_tool("x", json!({})).await.unwrap();
    assert_eq!(r.text_content(), "connected");
    assert_eq!(*shown.lock().unwrap(), ["https://example.com/connect"]);
    assert!(
        events
            .lock()
            .unwrap()
            .contains(&ServerEvent::ElicitationComplete {
                elicitation_id: "auth-1".into()
            })
    );
    server.await.unwrap();
}

#[tokio::test]
async fn url_elicitation_required_in_manual_mode() {
    let (t, mut peer) = pair();
    let client = Client::builder("url", "0")
        .on_elicit_url(|_u: ElicitUrlParams| async { ElicitResult::decline() })
        .time_budget(std::time::Duration::from_secs(20))
        .era(EraMode::Legacy)
        .build(t);
    let server = tokio::spawn(async move {
        peer.accept_initialize("2025-11-25").await;
        url_required(&mut peer).await;
        peer.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
            "params": {"elicitationId": "auth-1"}}),
        )
        .await;
        let again = peer.expect("tools/call").await;
        peer.result(&again["id"], text("connected")).await;
    });
    let Step::InputRequired(p) = client.start(Call::tool("x", json!({}))).await.unwrap() else {
        panic!("the URL should surface");
    };
    let InputRequest::Elicit(sterna::types::elicitation::ElicitRequestParams::Url(u)) =
        &p.requests()["auth-1"]
    else {
        panic!("a URL question keyed by its elicitationId");
    };
    assert_eq!(u.url, "https://example.com/connect");
    let mut answers = InputResponses::new();
    answers.insert(
        "auth-1".into(),
        InputResponse::Elicit(ElicitResult::accept(Default::default())),
    );
    let Step::Complete(r) = client.resume(p, answers).await.unwrap() else {
        panic!("sent again after the completion");
    };
    assert_eq!(r.text_content(), "connected");
    server.await.unwrap();
}

#[tokio::test]
async fn change_notifications_reach_the_callback_and_the_receivers() {
    let (t, mut peer) = pair();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let client = Client::builder("events", "0")
        .on_event(move |ev| s.lock().unwrap().push(ev))
        .time_budget(std::time::Duration::from_secs(20))
        .era(EraMode::Legacy)
        .build(t);
    let server = tokio::spawn(async move {
        peer.accept_initialize("2025-11-25").await;
        let sub = peer.expect("resources/subscribe").await;
        assert_eq!(sub["params"], json!({"uri": "file:///a"}));
        peer.result(&sub["id"], json!({})).await;
        for m in [
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///a"}}),
        ] {
            peer.send(&m).await;
        }
        let read = peer.expect("resources/read").await;
        peer.error(&read["id"], -32002, "Resource not found").await;
    });
    let mut rx = client.events();
    client.subscribe_resource("file:///a").await.unwrap();
    assert_eq!(rx.recv().await.unwrap(), ServerEvent::ToolsChanged);
    assert_eq!(
        rx.recv().await.unwrap(),
        ServerEvent::ResourceUpdated {
            uri: "file:///a".into()
        }
    );
    let err = client.read_resource("file:///missing").await.unwrap_err();
    assert!(err.is_resource_not_found(), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 2);
    server.await.unwrap();
}

#[tokio::test]
async fn both_eras_against_sterna_over_http() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(
        sterna::server::http::HttpServer::new(server().0).serve_with_shutdown(listener, async {
            let _ = stopped.await;
        }),
    );
    for (mode, legacy) in [(EraMode::Auto, false), (EraMode::Legacy, true)] {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let client = Client::builder("both-eras-http", "0")
            .on_elicit(recording(seen.clone()))
            .era(mode)
            .time_budget(Duration::from_secs(20))
            .connect_http(&url)
            .unwrap();
        let r = client
            .call_tool("provision_database", json!({"name": "orders"}))
            .await
            .unwrap();
        assert_eq!(r.text_content(), "Created orders in us-east-1", "{mode:?}");
        assert_eq!(client.era().await.unwrap().is_legacy(), legacy);
        assert_eq!(*seen.lock().unwrap(), ["Which region for orders?"]);
        // Manual mode on the same session.
        let Step::InputRequired(p) = client
            .start(Call::tool("provision_database", json!({"name": "users"})))
            .await
            .unwrap()
        else {
            panic!("{mode:?}: a question");
        };
        assert_eq!(p.is_portable(), !legacy);
        let answers = client.fulfil(p.requests()).await.unwrap();
        let Step::Complete(r) = client.resume(p, answers).await.unwrap() else {
            panic!("{mode:?}: done");
        };
        assert_eq!(r.text_content(), "Created users in us-east-1");
        client.close().await;
    }
    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}
