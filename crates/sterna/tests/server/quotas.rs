//! Fair shares of the in-memory task and state stores: one principal filling its share
//! is refused with an error naming the limit, and every other principal goes on.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::sync::Arc;
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::state::{MemoryStateStore, StoreStates};
use sterna::server::tasks::TaskSupport;
use sterna::server::{Context, NoArgs, Principal, RequestEnv, Tool};
use sterna::server::{HandlerError, Server};
use sterna::types::jsonrpc::RequestId;

#[derive(Deserialize, JsonSchema)]
struct Sure {
    ok: bool,
}

fn server() -> Server {
    Server::builder("quotas", "1")
        .state_keys(StateKeys::ephemeral())
        .state_store(Arc::new(MemoryStateStore::default()), StoreStates::Always)
        .tool(
            Tool::new("later")
                .task(TaskSupport::Required)
                .handler(|_: Context, _: NoArgs| async { "done" }),
        )
        .tool(
            Tool::new("confirm")
                .ask(|_: &NoArgs| form::<Sure>("Sure?").key("ok"))
                .run(|_: Context, _: NoArgs, ok: Elicitation<Sure>| async move {
                    Ok::<_, HandlerError>(format!("ok={}", ok.required()?.ok))
                }),
        )
        .build()
        .unwrap()
}

fn env(who: &str) -> RequestEnv {
    RequestEnv::new().principal(Principal::new(who))
}

pub async fn call(srv: &Server, who: &str, tool: &str, extra: Value) -> Result<Value, Value> {
    let mut params = json!({"name": tool, "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    }});
    if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    let raw = RawValue::from_string(params.to_string()).unwrap();
    let r = srv
        .handle(RequestId::Number(1), "tools/call", Some(&raw), env(who))
        .await
        .unwrap();
    match r.body {
        Ok(v) => Ok(serde_json::from_str(v.get()).unwrap()),
        Err(e) => Err(serde_json::to_value(&e).unwrap()),
    }
}

fn assert_share(e: &Value) {
    assert_eq!(e["code"], -32603, "{e}");
    assert_eq!(e["data"]["limit"], "per_principal", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("per_principal"),
        "{e}"
    );
}

#[tokio::test]
async fn one_principal_filling_its_tasks_leaves_the_others_theirs() {
    let srv = server();
    for _ in 0..100 {
        let t = call(&srv, "flood", "later", json!({})).await.unwrap();
        assert_eq!(t["resultType"], "task", "{t}");
    }
    let refused = call(&srv, "flood", "later", json!({})).await.unwrap_err();
    assert_share(&refused);
    let t = call(&srv, "calm", "later", json!({})).await.unwrap();
    assert_eq!(t["resultType"], "task", "{t}");
}

#[tokio::test]
async fn one_principal_filling_its_stored_states_leaves_the_others_theirs() {
    let srv = server();
    for _ in 0..1000 {
        let r = call(&srv, "flood", "confirm", json!({})).await.unwrap();
        assert_eq!(r["resultType"], "input_required", "{r}");
    }
    let refused = call(&srv, "flood", "confirm", json!({})).await.unwrap_err();
    assert_share(&refused);
    // Another principal runs its whole flow: first leg, then the retry with the answer.
    let first = call(&srv, "calm", "confirm", json!({})).await.unwrap();
    let state = first["requestState"].as_str().unwrap();
    let retry = json!({
        "requestState": state,
        "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}},
    });
    let done = call(&srv, "calm", "confirm", retry).await.unwrap();
    assert_eq!(done["content"][0]["text"], "ok=true", "{done}");
}
