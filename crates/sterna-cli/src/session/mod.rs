//! `sterna connect`: an interactive session with one server — line editing, history, tab
//! completion of names; every call's questions asked with the form widgets.

mod commands;
mod complete;

use crate::answers::Answers;
use crate::cli::ConnectArgs;
use crate::exit::CliError;
use crate::target::{self, Conn, Target};
use complete::{Completion, Names};
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::{Config, Editor};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// The session's state.
#[derive(Debug)]
pub(crate) struct Session {
    conn: Conn,
    names: Arc<Mutex<Names>>,
    json: bool,
    tools: Vec<sterna::types::tools::Tool>,
    prompts: Vec<sterna::types::prompts::Prompt>,
    templates: Vec<sterna::types::resources::ResourceTemplate>,
}

type Line = Editor<Completion, FileHistory>;

fn editor(names: Arc<Mutex<Names>>) -> Result<Line, CliError> {
    let config = Config::builder()
        .completion_type(rustyline::CompletionType::List)
        .auto_add_history(true)
        .build();
    let mut rl =
        Line::with_config(config).map_err(|e| CliError::Local(format!("the terminal: {e}")))?;
    rl.set_helper(Some(Completion { names }));
    Ok(rl)
}

/// Runs `sterna connect`.
pub(crate) async fn run(args: ConnectArgs) -> Result<ExitCode, CliError> {
    let target = match (&args.url, args.command.is_empty()) {
        (Some(url), true) => Target::Http(url.clone()),
        (None, false) => Target::Stdio(args.command.clone()),
        _ => {
            return Err(CliError::Usage(
                "give a URL, or -- COMMAND [ARGS] (not both)".into(),
            ));
        }
    };
    let conn = target::connect(&target, &args.client, Answers::default())?;
    let discovered = conn.client.discover().await?;
    let server = discovered
        .meta
        .as_ref()
        .and_then(|m| m.server_info.as_ref())
        .map_or_else(|| target.label(), |i| format!("{} {}", i.name, i.version));
    conn.answerer.set_server(server.clone());
    eprintln!(
        "connected to {server} ({}) — protocol {}",
        target.label(),
        conn.client.protocol_version()
    );
    if let Some(i) = &discovered.instructions {
        eprintln!("  instructions: {i}");
    }
    eprintln!("  type help for the commands; Tab completes names");
    let mut session = Session {
        conn,
        names: Arc::default(),
        json: args.json,
        tools: Vec::new(),
        prompts: Vec::new(),
        templates: Vec::new(),
    };
    session.refresh().await;
    let history = args.history.clone().or_else(|| {
        std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".sterna_history"))
    });
    let mut rl = editor(session.names.clone())?;
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    let prompt = format!("{}> ", server.split_whitespace().next().unwrap_or("sterna"));
    loop {
        if session.conn.notices.stale.swap(false, Ordering::Relaxed) {
            session.refresh().await;
        }
        let p = prompt.clone();
        session.conn.ui.at_prompt(true);
        let read = tokio::task::spawn_blocking(move || {
            let line = rl.readline(&p);
            (rl, line)
        })
        .await;
        session.conn.ui.at_prompt(false);
        let (back, line) = read.map_err(|e| CliError::Local(format!("the terminal: {e}")))?;
        rl = back;
        match line {
            Ok(line) => {
                if !session.command(line.trim()).await {
                    break;
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(CliError::Local(format!("the terminal: {e}"))),
        }
    }
    if let Some(h) = &history {
        let _ = rl.save_history(h);
    }
    session.conn.client.close().await;
    Ok(ExitCode::SUCCESS)
}
