//! A single-use tool: each `requestState` it issues is redeemed at most once.
//!
//! `transfer` asks the user to confirm, then moves money. Without `single_use`, a client
//! (or anyone who captured the retry) could send the confirming retry again within the
//! state's TTL and transfer twice; with it, the second redemption is refused (`-32602`),
//! even when both arrive at the same time.
//!
//! ```sh
//! cargo run --example single_use -- 127.0.0.1:3000 &
//! cargo run --example resume_client -- start http://127.0.0.1:3000/mcp \
//!     transfer '{"amount":100,"to":"Ada"}' > pending.json
//! cargo run --example resume_client -- resume http://127.0.0.1:3000/mcp \
//!     pending.json '{"confirm_transfer":{"confirm":true}}'     # Sent 100 to Ada
//! cargo run --example resume_client -- resume http://127.0.0.1:3000/mcp \
//!     pending.json '{"confirm_transfer":{"confirm":true}}'     # refused: already used
//! ```

use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use sterna::server::http::HttpServer;
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::{Context, Tool};
use sterna::server::{HandlerError, Server};

#[derive(Deserialize, JsonSchema)]
struct TransferArgs {
    /// Amount to send.
    amount: u64,
    /// Who receives it.
    to: String,
}

/// Key `confirm_transfer` (the type's name in snake case).
#[derive(Deserialize, JsonSchema)]
struct ConfirmTransfer {
    /// Send the money?
    confirm: bool,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().init();
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());
    let sent = Arc::new(AtomicU64::new(0)); // stands in for the bank

    let server = Server::builder("single-use-example", "1.0.0")
        .state_keys(StateKeys::ephemeral())
        // Consumed states are remembered by a ReplayStore: in memory by default (one
        // process); see the `fleet` example for one shared through Redis.
        .tool(
            Tool::new("transfer")
                .description("Sends money after the user confirms")
                .single_use()
                .ask(|a: &TransferArgs| {
                    form::<ConfirmTransfer>(format!("Send {} to {}?", a.amount, a.to))
                })
                .run(
                    move |_ctx: Context, a: TransferArgs, ok: Elicitation<ConfirmTransfer>| {
                        let sent = sent.clone();
                        async move {
                            if !ok.required()?.confirm {
                                return Ok::<_, HandlerError>("Nothing sent".to_owned());
                            }
                            let total = sent.fetch_add(a.amount, Ordering::SeqCst) + a.amount;
                            Ok(format!(
                                "Sent {} to {} (total sent: {total})",
                                a.amount, a.to
                            ))
                        }
                    },
                ),
        )
        .build()?;

    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    HttpServer::new(server)
        .serve_with_shutdown(listener, shutdown)
        .await?;
    Ok(())
}
