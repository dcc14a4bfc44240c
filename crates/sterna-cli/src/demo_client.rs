//! `sterna demo`: starts the demo server (a stdio child, or `--http`) and completes
//! `provision_database` through MRTR with the same widgets as `sterna connect`, showing
//! each leg of the exchange.

use crate::answers::Answers;
use crate::cli::{ClientOpts, DemoArgs};
use crate::drive::{self, Trace};
use crate::exit::CliError;
use crate::target::{self, Target};
use serde_json::json;
use std::process::ExitCode;
use sterna::client::Call;
use tokio::io::AsyncBufReadExt;

/// Starts `sterna serve --http 127.0.0.1:0` and returns it with its URL.
async fn http_server(exe: &std::path::Path) -> Result<(tokio::process::Child, String), CliError> {
    let mut child = tokio::process::Command::new(exe)
        .args(["serve", "--http", "127.0.0.1:0"])
        .env(
            "STERNA_LOG",
            std::env::var("STERNA_LOG").unwrap_or_else(|_| "error".into()),
        )
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| CliError::Local(format!("cannot start the server: {e}")))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| CliError::Local("no stdout".into()))?;
    let line = tokio::io::BufReader::new(stdout)
        .lines()
        .next_line()
        .await
        .map_err(|e| CliError::Local(e.to_string()))?
        .ok_or_else(|| CliError::Local("the server exited".into()))?;
    Ok((child, line.trim_start_matches("listening on ").to_owned()))
}

/// Runs the demo.
pub(crate) async fn run(args: DemoArgs) -> Result<ExitCode, CliError> {
    let sets: Vec<String> = args.region.iter().map(|r| format!("region={r}")).collect();
    let answers = Answers::parse(&sets, None)?;
    let exe = std::env::current_exe().map_err(|e| CliError::Local(e.to_string()))?;
    let mut server = None;
    let target = if args.http {
        let (child, url) = http_server(&exe).await?;
        println!("sterna demo: MCP 2026-07-28 over Streamable HTTP at {url}\n");
        server = Some(child);
        Target::http(&url)
    } else {
        println!("sterna demo: MCP 2026-07-28 over stdio (the server is a child process)\n");
        Target::stdio(vec![exe.to_string_lossy().into_owned(), "serve".into()])
    };
    let opts = ClientOpts {
        server: None,
        config: None,
        envs: Vec::new(),
        wire: false,
        record: None,
        roots: Vec::new(),
        sampling_cmd: None,
        log_level: "info".into(),
        headers: Vec::new(),
        no_input: false,
        token_file: None,
        era: "auto".into(),
        no_oauth: true,
        client_id: None,
    };
    let conn = target::connect(&target, &opts, answers)?;
    conn.answerer.set_server("sterna-demo".into());
    let arguments = json!({ "name": args.name });
    println!("→ tools/call provision_database {arguments}");
    let result = drive::run(
        &conn,
        Call::tool("provision_database", &arguments),
        Trace::Legs,
    )
    .await;
    conn.client.close().await;
    if let Some(mut child) = server {
        let _ = child.kill().await;
    }
    let result = result.map_err(|e| match e {
        CliError::Unanswered(mut u) => {
            u.hint = "Give it with --region eu-west-1 (or us-east-1).".into();
            CliError::Unanswered(u)
        }
        other => other,
    })?;
    if result.is_error == Some(true) {
        println!("← complete, an error result: {}", result.text_content());
    } else {
        println!("← complete: {}", result.text_content());
    }
    Ok(if result.is_error == Some(true) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
