//! What the 2025-11-25 scenarios read from a request's stream and from the session:
//! log messages during a call (`tools-call-with-logging`), a call that closes its
//! stream's connection so the client resumes it (`server-sse-polling`), and a resource to
//! subscribe to.

use std::time::Duration;
use sterna::server::{Context, NoArgs, Resource, ServerBuilder, Tool};
use sterna::types::meta::LoggingLevel;

pub(crate) fn tools<K>(b: ServerBuilder<K>) -> ServerBuilder<K> {
    b.tool(
        Tool::new("test_tool_with_logging")
            .description("Sends three log messages while it runs (when the client asked for them)")
            .handler(|ctx: Context, _: NoArgs| async move {
                ctx.log(LoggingLevel::Info, "Tool execution started").await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                ctx.log(LoggingLevel::Info, "Tool processing data").await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                ctx.log(LoggingLevel::Info, "Tool execution completed")
                    .await;
                "Tool with logging executed successfully"
            }),
    )
    .tool(
        Tool::new("test_reconnection")
            .description(
                "Closes its stream's connection mid-call, then answers: the client resumes \
                 with Last-Event-ID (SSE polling, SEP-1699)",
            )
            .handler(|ctx: Context, _: NoArgs| async move {
                // Only a 2025-11-25 session over HTTP has a resumable stream; a 2026-07-28
                // request just gets the answer.
                ctx.close_stream();
                tokio::time::sleep(Duration::from_millis(100)).await;
                "Reconnection test completed successfully"
            }),
    )
    .resource(
        Resource::new("test://watched-resource", "watched-resource")
            .description("A resource clients may subscribe to")
            .mime_type("text/plain")
            .handler(|_c: Context, _: NoArgs| async { "Watched resource content".to_owned() }),
    )
}
