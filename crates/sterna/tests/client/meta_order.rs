//! `Call::meta` (progress and log messages on request), and form fields reaching the
//! client in the order the server declared them.

use super::fixture::{server, server_with};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use sterna::client::{Call, Client};
use sterna::server::HandlerError;
use sterna::server::NoArgs;
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::{Context, Tool};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};

#[tokio::test]
async fn call_meta_asks_for_progress_and_log_messages() {
    let (srv, _) = server();
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let s = seen.clone();
    let client = Client::builder("meta", "0")
        .on_notification(move |m: &[u8]| {
            s.lock().unwrap().push(serde_json::from_slice(m).unwrap());
        })
        .in_process(srv);
    let plain = client.run(Call::tool("progress", ())).await.unwrap();
    assert_eq!(plain.text_content(), "finished");
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing asked, nothing sent"
    );
    let call = Call::tool("progress", ())
        .meta("progressToken", "t-1")
        .meta("io.modelcontextprotocol/logLevel", "info")
        .meta("io.modelcontextprotocol/protocolVersion", "1999-01-01");
    assert_eq!(client.run(call).await.unwrap().text_content(), "finished");
    let seen = seen.lock().unwrap();
    let progress: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3, "{seen:?}");
    assert_eq!(progress[2]["params"]["progressToken"], "t-1");
    assert_eq!(progress[2]["params"]["progress"], json!(3.0));
    assert!(
        seen.iter()
            .any(|m| m["method"] == "notifications/message" && m["params"]["data"] == "done"),
        "{seen:?}"
    );
}

#[derive(Deserialize, JsonSchema)]
struct SignUp {
    name: String,
    email: String,
    age: u8,
}

#[tokio::test]
async fn form_fields_reach_the_client_in_declaration_order() {
    let (srv, _) = server_with(|b| {
        b.tool(
            Tool::new("sign_up")
                .ask(|_: &NoArgs| form::<SignUp>("Sign up"))
                .run(
                    |_ctx: Context, _: NoArgs, f: Elicitation<SignUp>| async move {
                        let f = f.required()?;
                        Ok::<_, HandlerError>(format!("{} {} {}", f.name, f.email, f.age))
                    },
                ),
        )
    });
    let order: Arc<Mutex<Vec<String>>> = Arc::default();
    let o = order.clone();
    let client = Client::builder("order", "0")
        .on_elicit(move |f: ElicitFormParams| {
            let names = f.requested_schema.properties.iter().map(|(k, _)| k.clone());
            o.lock().unwrap().extend(names);
            let content = json!({"name": "Ada", "email": "ada@example.org", "age": 36});
            std::future::ready(ElicitResult::accept(content.as_object().unwrap().clone()))
        })
        .in_process(srv);
    let r = client.call_tool("sign_up", ()).await.unwrap();
    assert_eq!(r.text_content(), "Ada ada@example.org 36");
    assert_eq!(*order.lock().unwrap(), ["name", "email", "age"]);
}
