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
    let serving = tokio::spawn(
        sterna::server::http::HttpServer::new(srv).serve_with_shutdown(listener, async {
            let _ = stopped.await;
        }),
    );
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

#[tokio::test]
async fn oversized_answers_from_a_hostile_server_are_refused() {
    use bytes::Bytes;
    use http_body_util::Full;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let svc = service_fn(|_req: hyper::Request<hyper::body::Incoming>| async {
                    let body = format!(
                        r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
                        "x".repeat(100_000)
                    );
                    Ok::<_, std::convert::Infallible>(
                        hyper::Response::builder()
                            .header("content-type", "application/json")
                            .body(Full::new(Bytes::from(body)))
                            .unwrap(),
                    )
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), svc)
                    .await;
            });
        }
    });
    let transport = sterna::client::transport::HttpTransport::new(&url)
        .unwrap()
        .max_response(10_000);
    let client = Client::builder("t", "0").build(transport);
    match client
        .raw_request("server/discover", serde_json::Map::new())
        .await
    {
        Err(ClientError::Transport(sterna::client::TransportError::TooLarge { limit: 10_000 })) => {
        }
        other => panic!("{other:?}"),
    }
}
