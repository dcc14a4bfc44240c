//! A tool that asks the client's LLM (sampling) and one that reads the client's roots.
//!
//! Both are deprecated features in 2026-07-28 but still widely used; through MRTR they are
//! questions like any other. A client that did not declare `sampling` (or `roots`) in the
//! request's capabilities is never asked: the call fails with `-32021` naming what is
//! missing (or, for an `.optional()` question, the answer is `None`).
//!
//! ```sh
//! cargo build --example sampling_roots
//! sterna call summarize '{"text":"MRTR replaces server-to-client requests."}' \
//!     --sampling-cmd 'echo "Servers ask by answering."' -- target/debug/examples/sampling_roots
//! sterna call list_roots --root /tmp -- target/debug/examples/sampling_roots
//! ```

use schemars::JsonSchema;
use serde::Deserialize;
use sterna::server::state::StateKeys;
use sterna::server::{Context, NoArgs, Tool};
use sterna::server::{HandlerError, Server};
use sterna::types::sampling::CreateMessageRequestParams;

#[derive(Deserialize, JsonSchema)]
struct SummarizeArgs {
    /// The text to summarize.
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();

    let server = Server::builder("sampling-roots-example", "1.0.0")
        .state_keys(StateKeys::ephemeral())
        .tool(
            Tool::new("summarize")
                .description("Summarizes a text with the client's model")
                .handler(|ctx: Context, args: SummarizeArgs| async move {
                    // The first run ends here with `input_required` (a sampling question);
                    // the retry runs the handler again and `sample` returns the reply.
                    let request = CreateMessageRequestParams::user_text(
                        format!("Summarize in one sentence:\n{}", args.text),
                        200,
                    );
                    let reply = ctx.sample(request).await?;
                    Ok::<_, HandlerError>(format!(
                        "Summary ({}): {}",
                        reply.model,
                        reply.content.text().trim()
                    ))
                }),
        )
        .tool(
            Tool::new("list_roots")
                .description("Lists the directories the client exposes")
                .handler(|ctx: Context, _: NoArgs| async move {
                    let roots = ctx.roots().await?;
                    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
                    Ok::<_, HandlerError>(format!("{} root(s): {}", uris.len(), uris.join(", ")))
                }),
        )
        .build()?;

    sterna::server::transport::serve_stdio(server).await?;
    Ok(())
}
