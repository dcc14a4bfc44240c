//! The demo client: sterna's own client completes `provision_database` against the demo
//! server — over stdio (a child `sterna serve`) or Streamable HTTP (`--http`) — answering
//! the server's questions in the terminal, or from `--region` when not interactive.

use crate::forms::fill;
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use sterna::client::{Call, Client, Step};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};

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
