//! A client that drives a whole flow by itself with `Client::run`.
//!
//! It calls the demo server's `provision_database`; when the server answers
//! `input_required`, the elicitation handler below fills in the form, and the client
//! retries (new id, the answers, the `requestState` echoed) until the result is complete.
//!
//! ```sh
//! sterna serve --http 127.0.0.1:3000 &
//! cargo run --example run_client -- http://127.0.0.1:3000/mcp eu-west-1
//! ```

use serde_json::{Map, Value, json};
use sterna::client::{Call, Client};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:3000/mcp".into());
    let region = args.next().unwrap_or_else(|| "eu-west-1".into());

    let client = Client::builder("run-client-example", "1.0.0")
        // Registering a handler is what declares the capability: this client says it can
        // answer form elicitations, and nothing else (no sampling, no roots).
        .on_elicit(move |form: ElicitFormParams| {
            let region = region.clone();
            async move {
                // A real client shows `form.message` and `form.requested_schema` to the user.
                eprintln!("server asks: {}", form.message);
                let mut answer = Map::new();
                answer.insert("region".into(), Value::String(region));
                // Or ElicitResult::decline() / ElicitResult::cancel().
                ElicitResult::accept(answer)
            }
        })
        .connect_http(&url)?;

    // `run` drives every round: bounded by 10 rounds and 10 minutes by default
    // (`ClientBuilder::max_rounds`, `time_budget`).
    let result = client
        .run(Call::tool("provision_database", json!({"name": "orders"})))
        .await?;
    println!("{}", result.text_content());
    client.close().await;
    Ok(())
}
