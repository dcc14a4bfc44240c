//! The client side of the interop tests (`scripts/interop-ts`), written with sterna's public
//! client API: calls one tool on a server of either era, over stdio or Streamable HTTP,
//! answering form fields from `--answer` — through [`Client::run`] (the handlers answer), or
//! with `--manual` through [`Client::start`] / [`Client::resume`].
//!
//! ```text
//! interop-client (URL | --stdio "COMMAND ARGS…") TOOL ARGS_JSON [--answer FIELD=VALUE]… [--manual]
//! ```
//!
//! Prints `era: …`, one `round N: questions […]` per manual round, then `result: …`.

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;
use sterna::client::{Call, Client, Step};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};
use sterna::types::tools::CallToolResult;

struct Args {
    stdio: Option<String>,
    url: Option<String>,
    tool: String,
    arguments: Value,
    answers: HashMap<String, String>,
    manual: bool,
}

fn parse() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let (mut stdio, mut positional, mut answers, mut manual) =
        (None, Vec::new(), HashMap::new(), false);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--stdio" => stdio = Some(it.next().ok_or("--stdio needs a command")?),
            "--answer" => {
                let kv = it.next().ok_or("--answer needs FIELD=VALUE")?;
                let (k, v) = kv.split_once('=').ok_or("--answer needs FIELD=VALUE")?;
                answers.insert(k.to_owned(), v.to_owned());
            }
            "--manual" => manual = true,
            _ => positional.push(a),
        }
    }
    let url = if stdio.is_none() && !positional.is_empty() {
        Some(positional.remove(0))
    } else {
        None
    };
    let [tool, json] = <[String; 2]>::try_from(positional).map_err(
        |_| "usage: interop-client (URL | --stdio CMD) TOOL ARGS_JSON [--answer F=V]… [--manual]",
    )?;
    let arguments = serde_json::from_str(&json).map_err(|e| format!("ARGS_JSON: {e}"))?;
    Ok(Args {
        stdio,
        url,
        tool,
        arguments,
        answers,
        manual,
    })
}

/// Answers every field of a form from the given answers (strings), else leaves it out.
fn answer(form: &ElicitFormParams, answers: &HashMap<String, String>) -> ElicitResult {
    let mut content = Map::new();
    for (name, _) in &form.requested_schema.properties {
        if let Some(v) = answers.get(name) {
            content.insert(name.clone(), Value::String(v.clone()));
        }
    }
    ElicitResult::accept(content)
}

async fn call(args: Args) -> Result<CallToolResult, String> {
    let answers = Arc::new(args.answers);
    let builder = Client::builder("sterna-interop", env!("CARGO_PKG_VERSION")).on_elicit(
        move |form: ElicitFormParams| {
            let a = answers.clone();
            async move { answer(&form, &a) }
        },
    );
    let client = match (&args.stdio, &args.url) {
        (Some(cmd), _) => {
            let mut words = cmd.split_whitespace();
            let mut c = tokio::process::Command::new(words.next().ok_or("empty --stdio")?);
            c.args(words);
            builder.spawn_stdio(c).map_err(|e| e.to_string())?
        }
        (None, Some(url)) => builder.connect_http(url).map_err(|e| e.to_string())?,
        (None, None) => return Err("no server given".into()),
    };
    let era = client.era().await.map_err(|e| e.to_string())?;
    println!(
        "era: {} {}",
        if era.is_legacy() { "legacy" } else { "modern" },
        era.version()
    );
    let call = Call::tool(args.tool.as_str(), args.arguments);
    let result = if args.manual {
        manual(&client, call).await
    } else {
        client.run(call).await.map_err(|e| e.to_string())
    };
    client.close().await;
    result
}

async fn manual(client: &Client, call: Call<CallToolResult>) -> Result<CallToolResult, String> {
    let mut step = client.start(call).await.map_err(|e| e.to_string())?;
    loop {
        match step {
            Step::Complete(r) => return Ok(r),
            Step::Task(task) => {
                println!("task: {}", task.status());
                return client.follow(task).await.map_err(|e| e.to_string());
            }
            Step::InputRequired(p) => {
                let keys: Vec<&String> = p.requests().keys().collect();
                println!(
                    "round {}: questions {keys:?} (portable: {})",
                    p.round(),
                    p.is_portable()
                );
                let answers = client
                    .fulfil(p.requests())
                    .await
                    .map_err(|e| e.to_string())?;
                step = client.resume(p, answers).await.map_err(|e| e.to_string())?;
            }
        }
    }
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
    let outcome = match parse() {
        Ok(args) => call(args).await,
        Err(e) => Err(e),
    };
    match outcome {
        Ok(r) => {
            println!("result: {}", r.text_content());
            if r.is_error == Some(true) {
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("interop-client: {e}");
            ExitCode::FAILURE
        }
    }
}
