//! The client fixture of the official MCP conformance suite (2026-07-28 and 2025-11-25),
//! written with sterna's public client API.
//!
//! `conformance-client <server-url>` with `MCP_CONFORMANCE_SCENARIO` (and, for some
//! scenarios, `MCP_CONFORMANCE_CONTEXT`) set by the harness. The harness names the
//! revision in `MCP_CONFORMANCE_PROTOCOL_VERSION`: a 2026-07-28 run pins the modern era,
//! a 2025 one the legacy era. `STERNA_ERA=auto` ignores it and lets the client probe.

#[path = "../auth.rs"]
mod auth;
#[path = "../skills.rs"]
mod skills;

use serde_json::{Map, Value, json};
use std::process::ExitCode;
use sterna::client::{Call, Client, ClientError, EraMode, Refusal, Step};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult, PrimitiveSchema};
use sterna::types::roots::Root;
use sterna::types::sampling::{CreateMessageRequestParams, CreateMessageResult};
use sterna::types::tools::Tool;

/// Fills a form with plausible values: defaults, first options, `true`, `1`, `"test"`.
fn fill(form: ElicitFormParams) -> ElicitResult {
    let mut content = Map::new();
    for (name, field) in &form.requested_schema.properties {
        let v = match field {
            PrimitiveSchema::String(s) => json!(s.default.clone().unwrap_or_else(|| "test".into())),
            PrimitiveSchema::Number(n) => json!(n.default.unwrap_or(1.0)),
            PrimitiveSchema::Boolean(b) => json!(b.default.unwrap_or(true)),
            PrimitiveSchema::SingleSelect(s) => json!(
                s.default
                    .clone()
                    .or_else(|| s.options.values().first().map(|v| (*v).to_owned()))
            ),
            PrimitiveSchema::MultiSelect(m) => {
                json!(m.options.values().into_iter().take(1).collect::<Vec<_>>())
            }
        };
        content.insert(name.clone(), v);
    }
    ElicitResult::accept(content)
}

/// The era to speak: from `MCP_CONFORMANCE_PROTOCOL_VERSION`, unless `STERNA_ERA=auto`.
fn era_mode() -> EraMode {
    if std::env::var("STERNA_ERA").is_ok_and(|v| v == "auto") {
        return EraMode::Auto;
    }
    match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").as_deref() {
        Ok(v) if v.starts_with("2025-") || v.starts_with("2024-") => EraMode::Legacy,
        Ok(_) => EraMode::Modern,
        Err(_) => EraMode::Auto,
    }
}

fn client(url: &str) -> Result<Client, ClientError> {
    Client::builder("sterna-conformance-client", env!("CARGO_PKG_VERSION"))
        .era(era_mode())
        .on_elicit(|form: ElicitFormParams| async move { fill(form) })
        .on_sample(|_p: CreateMessageRequestParams| async {
            Ok::<_, Refusal>(CreateMessageResult::text(
                "sterna-test-model",
                "Hello from sterna",
            ))
        })
        .roots(vec![Root::new("file:///tmp/sterna-conformance", "scratch")])
        .connect_http(url)
}

/// Arguments that satisfy a tool's required properties.
fn sample_args(tool: &Tool) -> Value {
    let mut args = Map::new();
    let required: Vec<&str> = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(Value::Object(props)) = tool.input_schema.get("properties") {
        for name in required {
            let ty = props
                .get(name)
                .and_then(|p| p.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("string");
            let v = match ty {
                "integer" | "number" => json!(1),
                "boolean" => json!(true),
                "array" => json!([]),
                "object" => json!({}),
                _ => json!("us-west1"),
            };
            args.insert(name.to_owned(), v);
        }
    }
    Value::Object(args)
}

async fn run(scenario: &str, url: &str) -> Result<(), ClientError> {
    if scenario.starts_with("auth/") {
        let c = match auth::client(scenario, url) {
            Ok(c) => c?,
            Err(auth::BadContext(e)) => {
                eprintln!("conformance-client ({scenario}): {e}");
                std::process::exit(2);
            }
        };
        // What a well-behaved client does: list the tools, call one.
        c.list_tools().await?;
        let r = c.call_tool("test-tool", json!({})).await?;
        println!("{}", r.text_content());
        return Ok(());
    }
    let c = client(url)?;
    if skills::is_skills(scenario) {
        let outcome = skills::run(&c, scenario).await;
        c.close().await;
        if let Err(e) = outcome {
            // A refusal is the expected end of the verify-* scenarios.
            eprintln!("conformance-client ({scenario}): {e}");
            std::process::exit(1);
        }
        return Ok(());
    }
    let outcome = scenario_steps(&c, scenario).await;
    // Ends a 2025-11-25 session (DELETE) whatever happened.
    c.close().await;
    outcome
}

async fn scenario_steps(c: &Client, scenario: &str) -> Result<(), ClientError> {
    match scenario {
        "initialize" => {
            let era = c.era().await?;
            println!("connected: {era:?}");
        }
        "elicitation-sep1034-client-defaults" => {
            c.list_tools().await?;
            let r = c
                .call_tool("test_client_elicitation_defaults", json!({}))
                .await?;
            println!("{}", r.text_content());
        }
        "sse-retry" => {
            c.list_tools().await?;
            let r = c.call_tool("test_reconnection", json!({})).await?;
            println!("{}", r.text_content());
        }
        "tools_call" => {
            let tools = c.list_tools().await?;
            if tools.iter().any(|t| t.name == "add_numbers") {
                let r = c.call_tool("add_numbers", json!({"a": 5, "b": 3})).await?;
                println!("{}", r.text_content());
            }
        }
        "request-metadata" => {
            let d = c.discover().await?;
            println!("server speaks {:?}", d.supported_versions);
            c.list_tools().await?;
            c.call_tool("echo", json!({})).await.ok();
        }
        "sep-2322-client-request-state" => {
            c.list_tools().await?;
            // Two calls left waiting for answers while an unrelated call goes out: MRTR
            // fields stay with their own call.
            let echo = c
                .start(Call::tool("test_mrtr_echo_state", json!({})))
                .await?;
            let no_state = c.start(Call::tool("test_mrtr_no_state", json!({}))).await?;
            let unrelated = c.call_tool("test_mrtr_unrelated", json!({})).await?;
            println!("unrelated: {}", unrelated.text_content());
            for step in [echo, no_state] {
                if let Step::InputRequired(pending) = step {
                    let answers = c.fulfil(pending.requests()).await?;
                    let done = c.resume(pending, answers).await?;
                    if let Step::Complete(r) = done {
                        println!("resumed: {}", r.text_content());
                    }
                }
            }
            let r = c.call_tool("test_mrtr_no_result_type", json!({})).await?;
            println!("no resultType: {}", r.text_content());
        }
        "http-standard-headers" => {
            for tool in c.list_tools().await? {
                c.call_tool(&tool.name, sample_args(&tool)).await.ok();
            }
            for r in c.list_resources().await? {
                c.read_resource(&r.uri).await.ok();
            }
            for p in c.list_prompts().await? {
                c.get_prompt(&p.name, json!({})).await.ok();
            }
        }
        "http-custom-headers" => {
            c.list_tools().await?;
            let ctx: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
                .ok()
                .and_then(|s| serde_json::from_str(&s).ok())
                .unwrap_or_default();
            for call in ctx["toolCalls"].as_array().into_iter().flatten() {
                let name = call["name"].as_str().unwrap_or_default();
                c.call_tool(name, call["arguments"].clone()).await.ok();
            }
        }
        "http-invalid-tool-headers" => {
            // Tools with invalid x-mcp-header annotations are left out of the view.
            for tool in c.list_tools().await? {
                c.call_tool(&tool.name, sample_args(&tool)).await.ok();
            }
        }
        "json-schema-ref-no-deref" => {
            // Schemas are data: no $ref is ever fetched.
            let tools = c.list_tools().await?;
            println!("{} tool(s)", tools.len());
        }
        other => {
            eprintln!("conformance-client: unknown scenario {other:?}");
            std::process::exit(2);
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("STERNA_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance-client <server-url>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&scenario, &url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client ({scenario}): {e}");
            ExitCode::FAILURE
        }
    }
}
