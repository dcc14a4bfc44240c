//! A server on stdio: the smallest complete MCP 2026-07-28 server.
//!
//! `book_table` asks the user one form (party size and time) through MRTR, then books.
//! Run it under any client that starts servers as child processes, e.g. sterna's CLI:
//!
//! ```sh
//! cargo build --example stdio_server
//! sterna call book_table '{"restaurant":"Chez Sterna"}' --set party=4 --set time=20:00 \
//!     -- target/debug/examples/stdio_server
//! ```

use schemars::JsonSchema;
use serde::Deserialize;
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::state::StateKeys;
use sterna::server::{Context, Tool};
use sterna::server::{HandlerError, Server};

/// The tool's arguments; doc comments become the `inputSchema` descriptions.
#[derive(Deserialize, JsonSchema)]
struct BookArgs {
    /// Which restaurant.
    restaurant: String,
}

/// The form the user fills in. Its key in `inputRequests` is `booking`.
#[derive(Deserialize, JsonSchema)]
struct Booking {
    /// How many people.
    #[schemars(range(min = 1, max = 12))]
    party: u8,
    /// When.
    time: Slot,
}

/// An enum becomes a single-choice select.
#[derive(Deserialize, JsonSchema)]
enum Slot {
    #[serde(rename = "19:00")]
    Early,
    #[serde(rename = "20:00")]
    Late,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // stdout carries the protocol: logs go to stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();

    let server = Server::builder("stdio-example", "1.0.0")
        // On stdio the process is the whole conversation, so a per-process key is enough.
        // A fleet shares keys instead: StateKeys::from_env("STERNA_STATE_KEYS").
        .state_keys(StateKeys::ephemeral())
        .tool(
            Tool::new("book_table")
                .description("Books a table; asks the party size and the time")
                // The questions, built from the arguments. Missing answers are asked in
                // one `input_required` round...
                .ask(|args: &BookArgs| form::<Booking>(format!("Book at {}", args.restaurant)))
                // ...and the body runs once, when every answer is there: side effects go here.
                .run(
                    |_ctx: Context, args: BookArgs, booking: Elicitation<Booking>| async move {
                        let booking = booking.required()?; // a decline becomes a tool error
                        let time = match booking.time {
                            Slot::Early => "19:00",
                            Slot::Late => "20:00",
                        };
                        Ok::<_, HandlerError>(format!(
                            "Booked a table for {} at {} at {time}",
                            booking.party, args.restaurant
                        ))
                    },
                ),
        )
        .build()?;

    // Serves until the client closes stdin.
    sterna::server::transport::serve_stdio(server).await?;
    Ok(())
}
