//! The tools of the `tasks-*` scenarios (the `io.modelcontextprotocol/tasks` extension),
//! written with sterna's public API: `greet` never a task, `slow_compute` and
//! `protocol_error_job` optional tasks, `failing_job`, `confirm_delete`, `multi_input` and
//! `test_tool_with_task` task-only.

use schemars::JsonSchema;
use serde::Deserialize;
use std::time::Duration;
use sterna::server::HandlerError;
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::form;
use sterna::server::tasks::TaskSupport;
use sterna::server::{Context, NoArgs, ServerBuilder, Tool};
use sterna::types::error::ErrorObject;
use sterna::types::tools::CallToolResult;

#[derive(Deserialize, JsonSchema)]
struct Greet {
    /// Who to greet
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Compute {
    /// How long the computation takes, in seconds
    #[serde(default)]
    seconds: f64,
    /// A label echoed in the result
    #[serde(default)]
    label: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    /// The file to delete
    #[serde(default)]
    filename: Option<String>,
}

/// `confirm_delete`'s question.
#[derive(Deserialize, JsonSchema)]
struct ConfirmDelete {
    /// Delete the file?
    confirm: bool,
}

/// Each of `multi_input`'s two questions.
#[derive(Deserialize, JsonSchema)]
struct NameAndConfirm {
    /// A name
    #[serde(default)]
    name: Option<String>,
    /// Go ahead?
    #[serde(default)]
    confirm: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
struct UserName {
    /// Your name
    name: String,
}

/// Sleeps `seconds` (bounded to an hour), or until the call or task is cancelled.
async fn work(ctx: &Context, seconds: f64) {
    let d = Duration::from_secs_f64(seconds.clamp(0.0, 3600.0));
    tokio::select! {
        () = tokio::time::sleep(d) => {}
        () = ctx.cancellation().cancelled() => {}
    }
}

fn sync_tools<K>(b: ServerBuilder<K>) -> ServerBuilder<K> {
    b.tool(
        Tool::new("greet")
            .description("Greets someone (never a task)")
            .handler(|_c: Context, a: Greet| async move { format!("Hello, {}!", a.name) }),
    )
    .tool(
        Tool::new("slow_compute")
            .description("Computes for `seconds` seconds; a task when the client supports tasks")
            .task(TaskSupport::Optional)
            .handler(|c: Context, a: Compute| async move {
                work(&c, a.seconds).await;
                let label = a.label.unwrap_or_else(|| "compute".into());
                format!("{label}: done after {} s", a.seconds)
            }),
    )
    .tool(
        Tool::new("failing_job")
            .description("A task that ends with a tool error")
            .task(TaskSupport::Required)
            .handler(|c: Context, _: NoArgs| async move {
                work(&c, 0.5).await;
                CallToolResult::error("failing_job failed, as it always does")
            }),
    )
    .tool(
        Tool::new("protocol_error_job")
            .description("A task that ends with a JSON-RPC error")
            .task(TaskSupport::Optional)
            .handler(|c: Context, _: NoArgs| async move {
                work(&c, 0.2).await;
                Err::<String, _>(HandlerError::rpc(ErrorObject::internal(
                    "protocol_error_job hit an internal error",
                )))
            }),
    )
}

/// Tools that ask inside the task, and one that asks before it.
pub(crate) fn tools<K>(b: ServerBuilder<K>) -> ServerBuilder<K> {
    sync_tools(b)
        .tool(
            Tool::new("confirm_delete")
                .description("Deletes a file once the user confirms (asks inside the task)")
                .task(TaskSupport::Required)
                .handler(|c: Context, a: DeleteArgs| async move {
                    let file = a.filename.unwrap_or_else(|| "the file".into());
                    let answer = c
                        .ask(form::<ConfirmDelete>(format!("Delete {file}?")).key("confirm"))
                        .await?;
                    let done = answer.accepted().is_some_and(|a| a.confirm);
                    Ok::<_, HandlerError>(if done {
                        format!("Deleted {file}")
                    } else {
                        format!("Kept {file}")
                    })
                }),
        )
        .tool(
            Tool::new("multi_input")
                .description("Asks two questions at once inside the task")
                .task(TaskSupport::Required)
                .handler(|c: Context, _: NoArgs| async move {
                    let (a, b) = c
                        .ask((
                            form::<NameAndConfirm>("First input").key("input_1"),
                            form::<NameAndConfirm>("Second input").key("input_2"),
                        ))
                        .await?;
                    Ok::<_, HandlerError>(format!("{} and {}", name(a), name(b)))
                }),
        )
        .tool(
            Tool::new("test_tool_with_task")
                .description("Asks the user's name by MRTR, then greets them from a task")
                .task(TaskSupport::Required)
                .ask(|_: &NoArgs| form::<UserName>("What is your name?").key("user_name"))
                .run(
                    |c: Context, _: NoArgs, n: Elicitation<UserName>| async move {
                        work(&c, 0.1).await;
                        let who = n.accepted().map_or_else(|| "stranger".into(), |n| n.name);
                        format!("Hello from the task, {who}!")
                    },
                ),
        )
}

fn name(e: Elicitation<NameAndConfirm>) -> String {
    match e.accepted() {
        Some(a) => format!(
            "{} ({})",
            a.name.as_deref().unwrap_or("-"),
            a.confirm.unwrap_or(false)
        ),
        None => "-".into(),
    }
}
