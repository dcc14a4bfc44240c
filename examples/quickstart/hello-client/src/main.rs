//! hello-client: calls hello-server's `order_coffee` and answers its question.
//! `cargo run -- [URL] [SIZE]` (default: http://127.0.0.1:3000/mcp and medium).

use serde_json::{Map, Value, json};
use sterna::client::{Call, Client};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:3000/mcp".into());
    let size = args.next().unwrap_or_else(|| "medium".into());

    let client = Client::builder("hello-client", "0.1.0")
        // A handler for forms: this client declares that it answers them (and nothing else).
        .on_elicit(move |form: ElicitFormParams| {
            let size = size.clone();
            async move {
                println!("server asks: {}", form.message);
                let mut answer = Map::new();
                answer.insert("size".into(), Value::String(size));
                ElicitResult::accept(answer) // or ElicitResult::decline()
            }
        })
        .connect_http(&url)?;

    // `run` does every round: the call, the question answered, the retry carrying the
    // answer and the server's state, until the result is complete.
    let result = client
        .run(Call::tool("order_coffee", json!({"drink": "latte"})))
        .await?;
    println!("{}", result.text_content());
    client.close().await;
    Ok(())
}
