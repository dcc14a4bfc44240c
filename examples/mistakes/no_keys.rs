//! A mistake: building a server without choosing how `requestState` is sealed. It does not
//! compile, and the error says what to add (scripts/lib/mistakes.py compiles it and checks).
//!
//! expect: error[E0277]: the server's `requestState` keys are not chosen yet: call `.state_keys(…)` before `.build()`
//! expect: `.build()` needs `.state_keys(…)` or `.ephemeral_state_keys()` earlier in this chain
//! expect: note: one process on its own (stdio, tests): `.ephemeral_state_keys()`

use sterna::server::{Context, NoArgs, Server, Tool};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("hello", "0.1.0")
        .tool(Tool::new("hi").handler(|_ctx: Context, _: NoArgs| async move { "hi" }))
        .build()?;
    sterna::server::transport::serve_stdio(server).await?;
    Ok(())
}
