//! The demo client: sterna's own client completes `provision_database` against the demo
//! server — over stdio (a child `sterna serve`) or Streamable HTTP (`--http`) — answering
//! the server's questions in the terminal, or from `--region` when not interactive.

use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use sterna::client::{Call, Client, Step};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult, PrimitiveSchema};

struct Options {
    presets: HashMap<String, String>,
    name: String,
    http: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        presets: HashMap::new(),
        name: "orders".into(),
        http: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--region" => {
                let v = it.next().ok_or("--region needs a value")?;
                o.presets.insert("region".into(), v.clone());
            }
            "--name" => o.name = it.next().ok_or("--name needs a value")?.clone(),
            "--http" => o.http = true,
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(o)
}

fn choices(field: &PrimitiveSchema) -> Vec<String> {
    match field {
        PrimitiveSchema::SingleSelect(s) => {
            s.options.values().into_iter().map(str::to_owned).collect()
        }
        _ => Vec::new(),
    }
}

/// Fills a form field by field: from a preset, from the terminal, or (not interactive)
/// from the field's default or first option.
fn fill(
    form: &ElicitFormParams,
    presets: &HashMap<String, String>,
) -> Result<ElicitResult, String> {
    println!("  ? {}", form.message);
    let interactive = std::io::stdin().is_terminal();
    let mut content = Map::new();
    for (name, field) in &form.requested_schema.properties {
        let options = choices(field);
        let shown = if options.is_empty() {
            String::new()
        } else {
            format!(" [{}]", options.join(", "))
        };
        let answer = if let Some(v) = presets.get(name) {
            println!("    {name}{shown} → {v} (given)");
            v.clone()
        } else if interactive {
            loop {
                print!("    {name}{shown}: ");
                std::io::stdout().flush().map_err(|e| e.to_string())?;
                let mut line = String::new();
                std::io::stdin()
                    .read_line(&mut line)
                    .map_err(|e| e.to_string())?;
                let v = line.trim().to_owned();
                if v.is_empty() && !form.requested_schema.is_required(name) {
                    break String::new();
                }
                if options.is_empty() || options.contains(&v) {
                    break v;
                }
                println!("    please type one of: {}", options.join(", "));
            }
        } else {
            let v = options.first().cloned().unwrap_or_default();
            println!("    {name}{shown} → {v} (not a terminal: first option)");
            v
        };
        if answer.is_empty() {
            continue;
        }
        let value = match field {
            PrimitiveSchema::Boolean(_) => {
                Value::Bool(matches!(answer.as_str(), "y" | "yes" | "true"))
            }
            PrimitiveSchema::Number(_) => answer
                .parse::<f64>()
                .map(|n| json!(n))
                .unwrap_or(Value::String(answer)),
            _ => Value::String(answer),
        };
        content.insert(name.clone(), value);
    }
    Ok(ElicitResult::accept(content))
}

pub(crate) async fn run(args: &[String]) -> Result<(), String> {
    let opts = parse(args)?;
    let presets = Arc::new(opts.presets);
    let asked = Arc::new(AtomicU32::new(0));
    let (p, a) = (presets.clone(), asked.clone());
    let builder = Client::builder("sterna-demo-client", env!("CARGO_PKG_VERSION")).on_elicit(
        move |form: ElicitFormParams| {
            let (p, a) = (p.clone(), a.clone());
            async move {
                a.fetch_add(1, Ordering::SeqCst);
                let form2 = form.clone();
                tokio::task::spawn_blocking(move || fill(&form2, &p))
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .unwrap_or_else(ElicitResult::cancel)
            }
        },
    );
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut http_server = None;
    let client = if opts.http {
        let mut child = tokio::process::Command::new(&exe)
            .args(["serve", "--http", "127.0.0.1:0"])
            .env(
                "STERNA_LOG",
                std::env::var("STERNA_LOG").unwrap_or_else(|_| "error".into()),
            )
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start the server: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
        let line = lines
            .next_line()
            .await
            .map_err(|e| e.to_string())?
            .ok_or("the server exited")?;
        let url = line.trim_start_matches("listening on ").to_owned();
        println!("sterna demo: MCP 2026-07-28 over Streamable HTTP at {url}\n");
        http_server = Some(child);
        builder.connect_http(&url).map_err(|e| e.to_string())?
    } else {
        let mut command = tokio::process::Command::new(&exe);
        command.arg("serve").env(
            "STERNA_LOG",
            std::env::var("STERNA_LOG").unwrap_or_else(|_| "error".into()),
        );
        println!("sterna demo: MCP 2026-07-28 over stdio (the server is a child process)\n");
        builder
            .spawn_stdio(command)
            .map_err(|e| format!("cannot start the server: {e}"))?
    };

    // Walk the rounds by hand to show each leg; `client.run(call)` does all of this.
    let arguments = json!({ "name": opts.name });
    println!("→ tools/call provision_database {arguments}");
    let mut step = client
        .start(Call::tool("provision_database", &arguments))
        .await
        .map_err(|e| e.to_string())?;
    let result = loop {
        match step {
            Step::Complete(result) => break result,
            Step::InputRequired(pending) => {
                let keys: Vec<&String> = pending.requests().keys().collect();
                println!(
                    "← input_required (round {}): questions {keys:?}, requestState {}",
                    pending.round(),
                    if pending.has_state() {
                        "sealed, echoed as received"
                    } else {
                        "none"
                    }
                );
                let answers = client
                    .fulfil(pending.requests())
                    .await
                    .map_err(|e| e.to_string())?;
                println!(
                    "→ tools/call provision_database (retry: new id, {} answer(s), the state)",
                    answers.len()
                );
                step = client
                    .resume(pending, answers)
                    .await
                    .map_err(|e| e.to_string())?;
            }
        }
    };
    println!("← complete: {}", result.text_content());
    println!(
        "\n(the server asked {} question(s))",
        asked.load(Ordering::SeqCst)
    );
    client.close().await;
    if let Some(mut child) = http_server {
        let _ = child.kill().await;
    }
    if result.is_error == Some(true) {
        return Err("the tool reported an error".into());
    }
    Ok(())
}
