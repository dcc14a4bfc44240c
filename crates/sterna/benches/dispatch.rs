//! The hot path without a network: decoding a `tools/call`, dispatching `echo` and both
//! legs of `provision_database` in process, and the HTTP service layer on top.

use criterion::{Criterion, criterion_group, criterion_main};
use serde::Deserialize;
use serde_json::{Value, json};
use std::hint::black_box;
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::{Context, RequestEnv, Tool};
use sterna::server::{HandlerError, Server};
use sterna::types::jsonrpc::RawMessage;
use sterna::types::tools::CallToolRequestParams;

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct ProvisionArgs {
    name: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
enum Region {
    #[serde(rename = "eu-west-1")]
    EuWest1,
    #[serde(rename = "us-east-1")]
    UsEast1,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct PickRegion {
    region: Region,
}

fn server() -> Server {
    Server::builder("bench", "1")
        .state_keys(StateKeys::ephemeral())
        .tool(
            Tool::new("echo")
                .description("echo")
                .handler(|_c: Context, a: EchoArgs| async move { a.text }),
        )
        .tool(
            Tool::new("provision_database")
                .description("provision")
                .ask(|a: &ProvisionArgs| {
                    form::<PickRegion>(format!("Which region should {} be created in?", a.name))
                })
                .run(
                    |_c: Context, a: ProvisionArgs, p: Elicitation<PickRegion>| async move {
                        let p = p.required()?;
                        let r = match p.region {
                            Region::EuWest1 => "eu-west-1",
                            Region::UsEast1 => "us-east-1",
                        };
                        Ok::<_, HandlerError>(format!("Created {} in {r}", a.name))
                    },
                ),
        )
        .build()
        .unwrap()
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}"#;

fn echo_request() -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hello"}},{META}}}}}"#
    )
}

fn first_leg() -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"provision_database","arguments":{{"name":"orders"}},{META}}}}}"#
    )
}

fn second_leg(state: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"provision_database","arguments":{{"name":"orders"}},"inputResponses":{{"pick_region":{{"action":"accept","content":{{"region":"eu-west-1"}}}}}},"requestState":"{state}",{META}}}}}"#
    )
}

fn dispatch(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let srv = server();
    let echo = echo_request();
    let first = first_leg();
    let r1 = rt
        .block_on(srv.handle_message(first.as_bytes(), RequestEnv::new()))
        .unwrap();
    let v: Value = serde_json::from_slice(&r1.to_bytes()).unwrap();
    let state = v["result"]["requestState"].as_str().unwrap().to_owned();
    let second = second_leg(&state);
    let done = rt
        .block_on(srv.handle_message(second.as_bytes(), RequestEnv::new()))
        .unwrap();
    assert!(
        String::from_utf8(done.to_bytes())
            .unwrap()
            .contains("Created orders in eu-west-1")
    );

    c.bench_function("decode/tools_call", |b| {
        b.iter(|| {
            let msg = RawMessage::parse(black_box(echo.as_bytes())).unwrap();
            let sterna::types::jsonrpc::Incoming::Request { params, .. } = msg else {
                panic!()
            };
            let p: CallToolRequestParams = serde_json::from_str(params.unwrap().get()).unwrap();
            black_box(p);
        })
    });
    c.bench_function("dispatch/echo", |b| {
        b.to_async(&rt).iter(|| async {
            black_box(
                srv.handle_message(black_box(echo.as_bytes()), RequestEnv::new())
                    .await
                    .unwrap()
                    .to_bytes(),
            )
        })
    });
    c.bench_function("dispatch/provision_first_leg", |b| {
        b.to_async(&rt).iter(|| async {
            black_box(
                srv.handle_message(black_box(first.as_bytes()), RequestEnv::new())
                    .await
                    .unwrap()
                    .to_bytes(),
            )
        })
    });
    c.bench_function("dispatch/provision_second_leg", |b| {
        b.to_async(&rt).iter(|| async {
            black_box(
                srv.handle_message(black_box(second.as_bytes()), RequestEnv::new())
                    .await
                    .unwrap()
                    .to_bytes(),
            )
        })
    });
    let _ = json!({});
}

fn http_layer(c: &mut Criterion) {
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use tower_service::Service;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let svc = sterna::server::http::McpService::new(
        server(),
        sterna::server::http::HttpConfig::default(),
    );
    let echo = echo_request();
    c.bench_function("http_service/echo", |b| {
        b.to_async(&rt).iter(|| {
            let mut svc = svc.clone();
            let req = http::Request::post("/mcp")
                .header("host", "127.0.0.1:3000")
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "echo")
                .body(Full::new(Bytes::from(echo.clone())))
                .unwrap();
            async move {
                let resp = svc.call(req).await.unwrap();
                black_box(resp.into_body().collect().await.unwrap().to_bytes())
            }
        })
    });
}

criterion_group!(benches, dispatch, http_layer);
criterion_main!(benches);
