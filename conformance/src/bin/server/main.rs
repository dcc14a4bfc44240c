//! The server fixture of the official MCP conformance suite (2026-07-28), written the way
//! a sterna user would write it: declarative and imperative questions, default sealing.
//!
//! `conformance-server [--port N]` (or `PORT=N`) serves `http://127.0.0.1:N/mcp`.

mod asks;
mod skills;
mod streams;
mod tasks;

use base64::Engine;
use schemars::JsonSchema;
use serde::Deserialize;
use std::time::Duration;
use sterna::server::mrtr::Elicitation;
use sterna::server::mrtr::{form, roots, sampling};
use sterna::server::state::StateKeys;
use sterna::server::{
    CompletionRequest, Context, NoArgs, Prompt, Resource, ResourceTemplate, ServerBuilder, Tool,
};
use sterna::server::{HandlerError, Server};
use sterna::types::content::Role;
use sterna::types::content::{
    ContentBlock, EmbeddedResource, ResourceContents, TextResourceContents,
};
use sterna::types::meta::LoggingLevel;
use sterna::types::prompts::{GetPromptResult, PromptMessage};
use sterna::types::roots::Root;
use sterna::types::sampling::{CreateMessageRequestParams, CreateMessageResult};
use sterna::types::tools::CallToolResult;

/// A 1x1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

fn wav() -> String {
    // 8 kHz, 8-bit mono, 8 samples of silence.
    let mut w = Vec::new();
    w.extend_from_slice(b"RIFF");
    w.extend_from_slice(&(36u32 + 8).to_le_bytes());
    w.extend_from_slice(b"WAVEfmt ");
    w.extend_from_slice(&16u32.to_le_bytes());
    w.extend_from_slice(&1u16.to_le_bytes());
    w.extend_from_slice(&1u16.to_le_bytes());
    w.extend_from_slice(&8000u32.to_le_bytes());
    w.extend_from_slice(&8000u32.to_le_bytes());
    w.extend_from_slice(&1u16.to_le_bytes());
    w.extend_from_slice(&8u16.to_le_bytes());
    w.extend_from_slice(b"data");
    w.extend_from_slice(&8u32.to_le_bytes());
    w.extend_from_slice(&[128u8; 8]);
    base64::engine::general_purpose::STANDARD.encode(w)
}

#[derive(Deserialize, JsonSchema)]
struct UserName {
    /// Your name
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Confirm {
    /// Confirm to continue
    ok: bool,
}

#[derive(Deserialize, JsonSchema)]
struct FavoriteColor {
    /// Your favourite colour
    color: String,
}

#[derive(Deserialize, JsonSchema)]
struct PromptContext {
    /// Context for the prompt
    context: String,
}

#[derive(Deserialize, JsonSchema)]
struct PromptArgs {
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: String,
}

#[derive(Deserialize, JsonSchema)]
struct EmbedArgs {
    /// URI of the resource to embed
    #[serde(rename = "resourceUri")]
    resource_uri: String,
}

#[derive(Deserialize)]
struct TemplateVars {
    id: String,
}

fn name_of(e: Elicitation<UserName>) -> String {
    e.accepted()
        .map(|n| n.name)
        .unwrap_or_else(|| "stranger".into())
}

fn ask_name() -> sterna::server::mrtr::FormQuestion<UserName> {
    form::<UserName>("What is your name?").key("user_name")
}

fn roots_text(roots: &[Root]) -> String {
    roots
        .iter()
        .map(|r| r.uri.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn mrtr_tools<K>(b: ServerBuilder<K>) -> ServerBuilder<K> {
    b.tool(
        Tool::new("test_input_required_result_elicitation")
            .description("Asks the user's name through MRTR, then greets them")
            // `input-required-result-ignore-extra-params` sends the answer on a first call,
            // without round 1: this greeting is harmless, so it opts in to pre-filled answers
            // (sterna ignores unsolicited answers by default).
            .accept_unsolicited_answers()
            .ask(|_: &NoArgs| ask_name())
            .run(|_c: Context, _: NoArgs, name: Elicitation<UserName>| async move { format!("Hello, {}!", name_of(name)) }),
    )
    .tool(
        Tool::new("test_input_required_result_sampling")
            .description("Asks the client's LLM a question through MRTR")
            .ask(|_: &NoArgs| {
                sampling(CreateMessageRequestParams::user_text("What is the capital of France?", 100)).key("capital_question")
            })
            .run(|_c: Context, _: NoArgs, answer: CreateMessageResult| async move {
                format!("The model said: {}", answer.content.text())
            }),
    )
    .tool(
        Tool::new("test_input_required_result_list_roots")
            .description("Asks for the client's roots through MRTR")
            .ask(|_: &NoArgs| roots().key("client_roots"))
            .run(|_c: Context, _: NoArgs, roots: Vec<Root>| async move { format!("Roots: {}", roots_text(&roots)) }),
    )
    .tool(
        Tool::new("test_input_required_result_request_state")
            .description("Asks for confirmation; the sealed requestState must come back")
            .handler(|ctx: Context, _: NoArgs| async move {
                let ok = ctx.ask(form::<Confirm>("Please confirm").key("confirm")).await?;
                Ok::<_, HandlerError>(format!("state-ok (confirmed: {})", ok.accepted().is_some_and(|c| c.ok)))
            }),
    )
    .tool(
        Tool::new("test_input_required_result_multiple_inputs")
            .description("Asks an elicitation, a sampling and a roots question in one round")
            .ask(|_: &NoArgs| {
                (
                    ask_name(),
                    sampling(CreateMessageRequestParams::user_text("Generate a greeting", 50)).key("greeting"),
                    roots().key("client_roots"),
                )
            })
            .run(|_c: Context, _: NoArgs, (name, greeting, roots): (Elicitation<UserName>, CreateMessageResult, Vec<Root>)| async move {
                format!("{} — {} — roots: {}", name_of(name), greeting.content.text(), roots_text(&roots))
            }),
    )
    .tool(
        Tool::new("test_input_required_result_multi_round")
            .description("Three rounds: a name, then a colour, then the result")
            .ask(|_: &NoArgs| form::<UserName>("What is your name?").key("step1"))
            .then_ask(|_: &NoArgs, name: &Elicitation<UserName>| {
                let who = name.as_accepted().map_or("stranger", |n| n.name.as_str());
                form::<FavoriteColor>(format!("What is your favourite colour, {who}?")).key("step2")
            })
            .run(|_c: Context, _: NoArgs, (name, color): (Elicitation<UserName>, Elicitation<FavoriteColor>)| async move {
                let color = color.accepted().map(|c| c.color).unwrap_or_else(|| "no colour".into());
                format!("{} likes {color}", name_of(name))
            }),
    )
    .tool(
        Tool::new("test_input_required_result_tampered_state")
            .description("Asks for confirmation with an integrity-protected requestState")
            .ask(|_: &NoArgs| form::<Confirm>("Please confirm").key("confirm"))
            .run(|_c: Context, _: NoArgs, ok: Elicitation<Confirm>| async move {
                format!("confirmed: {}", ok.accepted().is_some_and(|c| c.ok))
            }),
    )
    .tool(
        Tool::new("test_input_required_result_capabilities")
            .description("Asks only what the client declared it can answer")
            .ask(|_: &NoArgs| {
                (
                    ask_name().optional(),
                    sampling(CreateMessageRequestParams::user_text("Say hello", 20)).key("greeting").optional(),
                    roots().key("client_roots").optional(),
                )
            })
            .run(|_c: Context, _: NoArgs, (name, greeting, roots): (Option<Elicitation<UserName>>, Option<CreateMessageResult>, Option<Vec<Root>>)| async move {
                format!(
                    "name: {}, greeting: {}, roots: {}",
                    name.map(name_of).unwrap_or_else(|| "-".into()),
                    greeting.map(|g| g.content.text()).unwrap_or_else(|| "-".into()),
                    roots.map(|r| roots_text(&r)).unwrap_or_else(|| "-".into()),
                )
            }),
    )
    .tool(
        Tool::new("test_missing_capability")
            .description("Needs sampling; clients without it get -32021")
            .handler(|ctx: Context, _: NoArgs| async move {
                let r = ctx.sample(CreateMessageRequestParams::user_text("Say something", 20)).await?;
                Ok::<_, HandlerError>(r.content.text())
            }),
    )
    .tool(
        Tool::new("test_streaming_elicitation")
            .description("Reports progress, then asks the user through MRTR (never a server request)")
            .handler(|ctx: Context, _: NoArgs| async move {
                ctx.progress(0.0, Some(1.0), Some("about to ask")).await;
                let name = ctx.ask(ask_name()).await?;
                Ok::<_, HandlerError>(format!("Hello, {}!", name_of(name)))
            }),
    )
    .prompt(
        Prompt::new("test_input_required_result_prompt")
            .description("Asks for context through MRTR before rendering")
            .ask(|_: &NoArgs| form::<PromptContext>("What context should the prompt use?").key("user_context"))
            .run(|_c: Context, _: NoArgs, ctx: Elicitation<PromptContext>| async move {
                let context = ctx.accepted().map(|c| c.context).unwrap_or_else(|| "none".into());
                format!("Use this context: {context}")
            }),
    )
}

fn classic_tools<K>(b: ServerBuilder<K>) -> ServerBuilder<K> {
    let changes = b.changes();
    let prompt_changes = b.changes();
    b.tool(
        Tool::new("test_simple_text")
            .description("Returns simple text")
            .handler(|_c: Context, _: NoArgs| async {
                "This is a simple text response for testing."
            }),
    )
    .tool(
        Tool::new("test_image_content")
            .description("Returns an image")
            .handler(|_c: Context, _: NoArgs| async { ContentBlock::image(PNG, "image/png") }),
    )
    .tool(
        Tool::new("test_audio_content")
            .description("Returns audio")
            .handler(|_c: Context, _: NoArgs| async { ContentBlock::audio(wav(), "audio/wav") }),
    )
    .tool(
        Tool::new("test_embedded_resource")
            .description("Returns an embedded resource")
            .handler(|_c: Context, _: NoArgs| async {
                ContentBlock::embedded_text(
                    "test://embedded-resource",
                    "text/plain",
                    "This is an embedded resource content.",
                )
            }),
    )
    .tool(
        Tool::new("test_multiple_content_types")
            .description("Returns text, an image and a resource")
            .handler(|_c: Context, _: NoArgs| async {
                vec![
                    ContentBlock::text("Multiple content types test:"),
                    ContentBlock::image(PNG, "image/png"),
                    ContentBlock::embedded_text(
                        "test://mixed-content-resource",
                        "application/json",
                        r#"{"test":"data","value":123}"#,
                    ),
                ]
            }),
    )
    .tool(
        Tool::new("test_error_handling")
            .description("Always fails")
            .handler(|_c: Context, _: NoArgs| async {
                CallToolResult::error("This tool intentionally returns an error for testing")
            }),
    )
    .tool(
        Tool::new("test_tool_with_progress")
            .description("Reports progress three times")
            .handler(|ctx: Context, _: NoArgs| async move {
                for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    ctx.progress(step, Some(100.0), Some(&format!("step {}", i + 1)))
                        .await;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                "Progress complete"
            }),
    )
    .tool(
        Tool::new("test_logging_tool")
            .description("Logs (only when the client asked for log messages)")
            .handler(|ctx: Context, _: NoArgs| async move {
                ctx.log(LoggingLevel::Info, "Tool execution started").await;
                ctx.log(LoggingLevel::Info, "Tool execution completed")
                    .await;
                "Logging complete"
            }),
    )
    .tool(
        Tool::new("test_trigger_tool_change")
            .description("Announces a tool list change to subscribers")
            .handler(move |_c: Context, _: NoArgs| {
                let changes = changes.clone();
                async move {
                    changes.tools_list_changed();
                    "tools/list_changed sent"
                }
            }),
    )
    .tool(
        Tool::new("test_trigger_prompt_change")
            .description("Announces a prompt list change to subscribers")
            .handler(move |_c: Context, _: NoArgs| {
                let changes = prompt_changes.clone();
                async move {
                    changes.prompts_list_changed();
                    "prompts/list_changed sent"
                }
            }),
    )
}

#[derive(Deserialize, JsonSchema)]
struct RegionQuery {
    /// The region to query (mirrored into the Mcp-Param-Region header)
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
    /// How many rows (mirrored into Mcp-Param-Limit)
    #[schemars(extend("x-mcp-header" = "Limit"))]
    limit: Option<i64>,
    /// Include archived rows (mirrored into Mcp-Param-Archived)
    #[schemars(extend("x-mcp-header" = "Archived"))]
    archived: Option<bool>,
}

fn extra_tools<K>(b: ServerBuilder<K>) -> ServerBuilder<K> {
    let schema = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    });
    let serde_json::Value::Object(schema) = schema else {
        unreachable!()
    };
    b.tool(
        Tool::new("json_schema_2020_12_tool")
            .description("Tool with JSON Schema 2020-12 features")
            .input_schema(schema)
            .handler(
                |_c: Context, args: serde_json::Map<String, serde_json::Value>| async move {
                    format!("received {} argument(s)", args.len())
                },
            ),
    )
    .tool(
        Tool::new("test_custom_headers_tool")
            .description(
                "Mirrors its region, limit and archived arguments into Mcp-Param-* headers",
            )
            .handler(|_c: Context, q: RegionQuery| async move {
                format!(
                    "region={} limit={:?} archived={:?}",
                    q.region, q.limit, q.archived
                )
            }),
    )
}

fn prompts_and_resources<K>(b: ServerBuilder<K>) -> ServerBuilder<K> {
    b.prompt(
        Prompt::new("test_simple_prompt")
            .description("A simple prompt")
            .handler(|_c: Context, _: NoArgs| async { "This is a simple prompt for testing.".to_owned() }),
    )
    .prompt(
        Prompt::new("test_prompt_with_arguments")
            .description("A prompt with two arguments")
            .complete("arg1", |_c: Context, req: CompletionRequest| async move {
                ["test", "testing", "tested"]
                    .into_iter()
                    .filter(|v| v.starts_with(req.value.as_str()))
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .handler(|_c: Context, a: PromptArgs| async move {
                format!("Prompt with arguments: arg1='{}', arg2='{}'", a.arg1, a.arg2)
            }),
    )
    .prompt(
        Prompt::new("test_prompt_with_embedded_resource")
            .description("A prompt embedding a resource")
            .handler(|_c: Context, a: EmbedArgs| async move {
                GetPromptResult::new(vec![
                    PromptMessage {
                        role: Role::User,
                        content: ContentBlock::Resource(EmbeddedResource {
                            resource: ResourceContents::Text(TextResourceContents {
                                uri: a.resource_uri,
                                mime_type: Some("text/plain".into()),
                                text: "Embedded resource content for testing.".into(),
                                meta: None,
                            }),
                            annotations: None,
                            meta: None,
                        }),
                    },
                    PromptMessage::user("Please process the embedded resource above."),
                ])
            }),
    )
    .prompt(
        Prompt::new("test_prompt_with_image")
            .description("A prompt with an image")
            .handler(|_c: Context, _: NoArgs| async {
                GetPromptResult::new(vec![
                    PromptMessage { role: Role::User, content: ContentBlock::image(PNG, "image/png") },
                    PromptMessage::user("Please analyze the image above."),
                ])
            }),
    )
    .resource(
        Resource::new("test://static-text", "static-text")
            .description("A static text resource")
            .mime_type("text/plain")
            .handler(|_c: Context, _: NoArgs| async { "This is the content of the static text resource.".to_owned() }),
    )
    .resource(
        Resource::new("test://static-binary", "static-binary")
            .description("A static binary resource")
            .mime_type("image/png")
            .handler(|_c: Context, _: NoArgs| async {
                base64::engine::general_purpose::STANDARD.decode(PNG).map_err(HandlerError::from)
            }),
    )
    .resource(
        ResourceTemplate::new("test://template/{id}/data", "template-data")
            .description("Data for an id")
            .mime_type("application/json")
            .handler(|_c: Context, v: TemplateVars| async move {
                serde_json::json!({"id": v.id, "templateTest": true, "data": format!("Data for ID: {}", v.id)}).to_string()
            }),
    )
}

fn build() -> Server {
    let keys = match std::env::var("STERNA_STATE_KEYS") {
        Ok(list) => {
            StateKeys::from_base64_list(&list).expect("STERNA_STATE_KEYS holds base64 keys")
        }
        Err(_) => StateKeys::ephemeral(),
    };
    let b =
        Server::builder("sterna-conformance-server", env!("CARGO_PKG_VERSION")).state_keys(keys);
    let b = prompts_and_resources(extra_tools(classic_tools(mrtr_tools(b))));
    let b = skills::add(tasks::tools(streams::tools(asks::tools(b))));
    b.build().expect("the fixture is valid")
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("STERNA_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let args: Vec<String> = std::env::args().collect();
    let port: u16 = args
        .iter()
        .position(|a| a == "--port")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .or_else(|| std::env::var("PORT").ok())
        .map(|p| p.parse().expect("a port number"))
        .unwrap_or(3000);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("bind 127.0.0.1");
    eprintln!(
        "conformance-server listening on http://127.0.0.1:{}/mcp",
        listener.local_addr().map(|a| a.port()).unwrap_or(port)
    );
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    sterna::server::http::HttpServer::new(build())
        .serve_with_shutdown(listener, shutdown)
        .await
        .expect("serve");
}
