//! The endpoint's own work per operation, with no sockets and no idle time: the demo's
//! `echo` and both legs of `provision_database` through `McpService` in process, N times.
//! Run it under `valgrind --tool=callgrind` twice with different N and divide the
//! difference in instructions by the difference in operations (bench/instructions.sh);
//! the count does not depend on what else the machine is doing.
//!
//! ```text
//! instr echo|mrtr N
//! ```

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use schemars::JsonSchema;
use serde::Deserialize;
use sterna::http::{HttpConfig, McpService};
use sterna::mrtr::form;
use sterna::server::{Context, Tool};
use sterna::{Elicitation, HandlerError, Server, StateKeys};
use tower_service::Service;

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct ProvisionArgs {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
enum Region {
    #[serde(rename = "eu-west-1")]
    EuWest1,
    #[serde(rename = "us-east-1")]
    UsEast1,
}

#[derive(Deserialize, JsonSchema)]
struct PickRegion {
    region: Region,
}

fn server() -> Server {
    Server::builder("sterna-demo", "0.1.0")
        .state_keys(StateKeys::ephemeral())
        .tool(
            Tool::new("echo")
                .description("Returns the text it is given")
                .handler(|_ctx: Context, a: EchoArgs| async move { a.text }),
        )
        .tool(
            Tool::new("provision_database")
                .description("Creates a database in the region the user picks")
                .ask(|a: &ProvisionArgs| {
                    form::<PickRegion>(format!("Which region for {}?", a.name))
                })
                .run(
                    |_c: Context, a: ProvisionArgs, p: Elicitation<PickRegion>| async move {
                        let region = match p.required()?.region {
                            Region::EuWest1 => "eu-west-1",
                            Region::UsEast1 => "us-east-1",
                        };
                        Ok::<_, HandlerError>(format!("Created {} in {region}", a.name))
                    },
                ),
        )
        .build()
        .expect("valid")
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"instr","version":"1"}}"#;

async fn post(svc: &mut McpService, name: &str, body: String) -> Vec<u8> {
    let req = http::Request::post("http://127.0.0.1/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .body(Full::new(Bytes::from(body)))
        .expect("valid request");
    let resp = svc.call(req).await.expect("infallible");
    resp.into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec()
}

async fn mrtr(svc: &mut McpService, i: u64) {
    let first = format!(
        r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"provision_database","arguments":{{"name":"orders"}},{META}}}}}"#
    );
    let r: serde_json::Value =
        serde_json::from_slice(&post(svc, "provision_database", first).await).expect("json");
    let state = r["result"]["requestState"].as_str().expect("a state");
    let retry = format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"provision_database","arguments":{{"name":"orders"}},"inputResponses":{{"pick_region":{{"action":"accept","content":{{"region":"eu-west-1"}}}}}},"requestState":"{state}",{META}}}}}"#,
        i + 1
    );
    let done = post(svc, "provision_database", retry).await;
    assert!(
        done.windows(7).any(|w| w == b"Created"),
        "{}",
        String::from_utf8_lossy(&done)
    );
}

async fn echo(svc: &mut McpService, i: u64) {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hello"}},{META}}}}}"#
    );
    let r = post(svc, "echo", body).await;
    assert!(r.windows(5).any(|w| w == b"hello"));
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "echo".into());
    let n: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut svc = McpService::new(server(), HttpConfig::default());
        for i in 0..n {
            match mode.as_str() {
                "mrtr" => mrtr(&mut svc, i * 2).await,
                _ => echo(&mut svc, i).await,
            }
        }
    });
}
