//! hello-server: one tool, `order_coffee`, that asks the user a question (which size?)
//! before it answers. MCP on stdio, or over Streamable HTTP with `--http 127.0.0.1:3000`.

use schemars::JsonSchema;
use serde::Deserialize;
use sterna::server::mrtr::{Elicitation, form};
use sterna::server::{Context, HandlerError, Server, Tool};

/// The tool's arguments (they become its `inputSchema`).
#[derive(Deserialize, JsonSchema)]
struct Order {
    /// What to drink, e.g. "latte".
    drink: String,
}

/// The question: a form with one field, a select of three sizes.
#[derive(Deserialize, JsonSchema)]
struct PickSize {
    size: Size,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Size {
    Small,
    Medium,
    Large,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("hello-server", "0.1.0")
        // The key that seals the state riding along with a question. One process: a key
        // of its own; replicas share theirs (StateKeys::from_env("STERNA_STATE_KEYS")).
        .ephemeral_state_keys()
        .tool(
            Tool::new("order_coffee")
                .description("Orders a coffee; asks which size")
                // The question, built from the arguments: the client answers it and retries.
                .ask(|order: &Order| {
                    form::<PickSize>(format!("Which size for your {}?", order.drink))
                })
                // Runs once, when the answer is there: the place for side effects.
                .run(
                    |_ctx: Context, order: Order, pick: Elicitation<PickSize>| async move {
                        let size = match pick.required()?.size {
                            Size::Small => "small",
                            Size::Medium => "medium",
                            Size::Large => "large",
                        };
                        Ok::<_, HandlerError>(format!("Here is your {size} {}.", order.drink))
                    },
                ),
        )
        .build()?;

    if std::env::args().nth(1).as_deref() == Some("--http") {
        let addr = std::env::args()
            .nth(2)
            .unwrap_or_else(|| "127.0.0.1:3000".into());
        println!("listening on http://{addr}/mcp");
        sterna::server::http::HttpServer::new(server)
            .serve(addr.parse()?)
            .await?;
    } else {
        // stdio: the MCP host starts this program and talks to it over stdin/stdout.
        sterna::server::transport::serve_stdio(server).await?;
    }
    Ok(())
}
