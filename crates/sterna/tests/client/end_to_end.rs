//! sterna client ↔ sterna server, in process and over HTTP.

use super::fixture::server;
use serde_json::json;
use std::sync::atomic::Ordering;
use sterna::client::{Call, Client, ClientError, Step};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};
use sterna::types::roots::Root;
use sterna::types::sampling::{CreateMessageRequestParams, CreateMessageResult};

fn answering(
    region: &'static str,
) -> impl Fn(ElicitFormParams) -> std::future::Ready<ElicitResult> + Send + Sync + 'static {
    move |form: ElicitFormParams| {
        let mut content = serde_json::Map::new();
        for (name, _) in &form.requested_schema.properties {
            let v = match name.as_str() {
                "region" => json!(region),
                "ok" => json!(true),
                "name" => json!("Ada"),
                "color" => json!("teal"),
                _ => json!("x"),
            };
            content.insert(name.clone(), v);
        }
        std::future::ready(ElicitResult::accept(content))
    }
}

fn full_client() -> sterna::client::ClientBuilder {
    Client::builder("e2e", "0")
        .on_elicit(answering("eu-west-1"))
        .on_sample(|_p: CreateMessageRequestParams| async {
            Ok(CreateMessageResult::text("m", "hello"))
        })
        .roots(vec![Root::new("file:///work", "work")])
}

#[tokio::test]
async fn in_process_flows_complete() {
    let (srv, c) = server();
    let client = full_client().in_process(srv);
    let r = client
        .call_tool("provision_database", json!({"name": "orders"}))
        .await
        .unwrap();
    assert_eq!(r.text_content(), "Created orders in eu-west-1");
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 1);
    assert_eq!(
        client.call_tool("wizard", ()).await.unwrap().text_content(),
        "Ada likes teal (saved: true)"
    );
    assert_eq!(
        client
            .call_tool("two_questions", ())
            .await
            .unwrap()
            .text_content(),
        "Ada likes teal"
    );
    assert_eq!(
        client
            .call_tool("adaptive", ())
            .await
            .unwrap()
            .text_content(),
        "name=Ada greeting=hello roots=1"
    );
    let p = client.get_prompt("greeting", ()).await.unwrap();
    assert_eq!(p.messages.len(), 1);
    let r = client.read_resource("test://secret/9").await.unwrap();
    assert_eq!(r.ttl_ms, Some(0));
    // Capabilities follow the handlers: a client without sampling gets -32021.
    let bare = Client::builder("bare", "0")
        .on_elicit(answering("x"))
        .in_process(server().0);
    match bare.call_tool("needs_sampling", ()).await {
        Err(ClientError::Server(e)) => assert_eq!(e.code.code(), -32021),
        other => panic!("{other:?}"),
    }
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "mirrored"));
    client.close().await;
}

#[tokio::test]
async fn over_http_with_mirrored_headers_and_a_resumed_flow() {
    let (srv, _) = server();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(sterna::http::HttpServer::new(srv).serve_with_shutdown(
        listener,
        async {
            let _ = stopped.await;
        },
    ));
    let client = full_client().connect_http(&url).unwrap();
    // The server checks Mcp-Param-* against the body: the client mirrors them (learning
    // the annotations from tools/list first), encoding what needs it.
    let r = client
        .call_tool(
            "mirrored",
            json!({"region": " eu west é ", "limit": 3, "verbose": false}),
        )
        .await
        .unwrap();
    assert_eq!(r.text_content(), " eu west é  Some(3) Some(false)");
    let r = client
        .call_tool("provision_database", json!({"name": "orders"}))
        .await
        .unwrap();
    assert_eq!(r.text_content(), "Created orders in eu-west-1");
    // Manual mode across two clients: start on one, resume on another.
    let a = full_client().connect_http(&url).unwrap();
    let Step::InputRequired(p) = a
        .start(Call::tool("provision_database", json!({"name": "users"})))
        .await
        .unwrap()
    else {
        panic!()
    };
    let saved = serde_json::to_vec(&p).unwrap();
    let b = Client::builder("other", "0")
        .on_elicit(answering("us-east-1"))
        .connect_http(&url)
        .unwrap();
    let p: sterna::client::Pending<sterna::types::tools::CallToolResult> =
        serde_json::from_slice(&saved).unwrap();
    let answers = b.fulfil(p.requests()).await.unwrap();
    let Step::Complete(r) = b.resume(p, answers).await.unwrap() else {
        panic!()
    };
    assert_eq!(r.text_content(), "Created users in us-east-1");
    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}
