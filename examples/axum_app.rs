//! An MCP endpoint mounted in an existing axum application, beside its other routes.
//!
//! ```sh
//! cargo run --example axum_app -- 127.0.0.1:3000
//! curl http://127.0.0.1:3000/health                  # your own routes keep working
//! sterna call http://127.0.0.1:3000/mcp convert '{"celsius": 21.5}'
//! ```

use axum::Router;
use axum::routing::get;
use schemars::JsonSchema;
use serde::Deserialize;
use sterna::server::Server;
use sterna::server::http::{HttpConfig, McpService};
use sterna::server::state::StateKeys;
use sterna::server::{Context, Tool};

#[derive(Deserialize, JsonSchema)]
struct ConvertArgs {
    /// A temperature in degrees Celsius.
    celsius: f64,
}

fn mcp_server() -> Result<Server, sterna::server::BuildError> {
    Server::builder("axum-example", "1.0.0")
        .state_keys(StateKeys::ephemeral())
        .tool(
            Tool::new("convert")
                .description("Converts Celsius to Fahrenheit")
                .handler(|_ctx: Context, args: ConvertArgs| async move {
                    format!(
                        "{} °C = {} °F",
                        args.celsius,
                        args.celsius * 9.0 / 5.0 + 32.0
                    )
                }),
        )
        .build()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().init();
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());

    // `McpService` is a `tower::Service`: mount it with `route_service`, like any other.
    // It answers POSTs (and, for 2025-11-25 sessions, GET and DELETE) on its route.
    let mcp = McpService::new(mcp_server()?, HttpConfig::default());
    let app = Router::new()
        .route("/", get(|| async { "my existing app" }))
        .route("/health", get(|| async { "ok" }))
        .route_service("/mcp", mcp);

    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
