//! One server, both protocol eras, the same handlers.
//!
//! A 2026-07-28 client gets the question as an `input_required` result and retries; a
//! 2025-11-25 client (`initialize`, a session) gets it pushed as a real
//! `elicitation/create` request while the call waits. Nothing in the handler changes:
//! sterna recognises each client and serves it in its own era, from one endpoint.
//!
//! ```sh
//! cargo run --example dual_era -- 127.0.0.1:3000        # Streamable HTTP at /mcp
//! cargo run --example dual_era -- --stdio                # or on stdio
//! sterna call http://127.0.0.1:3000/mcp provision_database '{"name":"orders"}' --set region=eu-west-1
//! # … and any 2025-11-25 client, e.g. the TypeScript SDK 1.x or Python SDK 1.x
//! ```
//!
//! Over HTTP, this server keeps 2025 sessions in its own memory (the default session
//! store), which is all one process needs. Replicas behind a load balancer share them in
//! Redis instead — session store, stream store and bus, as `examples/fleet.rs` does — and
//! then need no sticky routing for either era (see the deployment guide).

use schemars::JsonSchema;
use serde::Deserialize;
use sterna::server::http::HttpServer;
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::{Context, Tool};
use sterna::server::{HandlerError, Server};

#[derive(Deserialize, JsonSchema)]
struct ProvisionArgs {
    /// Name of the database.
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

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

fn server() -> Result<Server, sterna::server::BuildError> {
    Server::builder("dual-era-example", "1.0.0")
        .state_keys(StateKeys::ephemeral())
        .tool(
            Tool::new("provision_database")
                .description("Creates a database in the region the user picks")
                .ask(|a: &ProvisionArgs| {
                    form::<PickRegion>(format!("Which region for {}?", a.name))
                })
                .run(
                    |ctx: Context, a: ProvisionArgs, pick: Elicitation<PickRegion>| async move {
                        let region = match pick.required()?.region {
                            Region::EuWest1 => "eu-west-1",
                            Region::UsEast1 => "us-east-1",
                        };
                        // The handler may look at the era, but never has to.
                        let era = ctx.protocol_version().to_owned();
                        Ok::<_, HandlerError>(format!(
                            "Created {} in {region} (protocol {era})",
                            a.name
                        ))
                    },
                ),
        )
        .tool(
            Tool::new("echo")
                .description("Sends the text back")
                .handler(|_ctx: Context, a: EchoArgs| async move { a.text }),
        )
        .build()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let arg = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());
    if arg == "--stdio" {
        // A 2025 client's `initialize` opens the session; a 2026 client's requests carry
        // their version in `_meta`. Both are served on the same pipe.
        sterna::server::transport::serve_stdio(server()?).await?;
        return Ok(());
    }
    let listener = tokio::net::TcpListener::bind(&arg).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    HttpServer::new(server()?)
        .serve_with_shutdown(listener, shutdown)
        .await?;
    Ok(())
}
