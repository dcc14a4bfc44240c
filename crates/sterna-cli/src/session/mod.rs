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
use sterna::client::Era;

/// What a command line led to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Read the next line.
    Next,
    /// Ctrl-C stopped the command: a second Ctrl-C at the prompt quits.
    Interrupted,
    /// Leave the session.
    Quit,
}

/// The session's state.
#[derive(Debug)]
pub(crate) struct Session {
    conn: Conn,
    names: Arc<Mutex<Names>>,
    json: bool,
    tools: Vec<sterna::types::tools::Tool>,
    prompts: Vec<sterna::types::prompts::Prompt>,
    templates: Vec<sterna::types::resources::ResourceTemplate>,
    /// The URIs of the resources listed.
    resources: Vec<String>,
    /// What the server said it offers.
    caps: sterna::types::capabilities::ServerCapabilities,
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

/// Prints who the server is and the protocol spoken; returns the server's name.
async fn banner(
    conn: &Conn,
    target: &Target,
    discovered: &sterna::types::discover::DiscoverResult,
) -> Result<String, CliError> {
    let server = discovered
        .meta
        .as_ref()
        .and_then(|m| m.server_info.as_ref())
        .map_or_else(|| target.label(), |i| format!("{} {}", i.name, i.version));
    conn.answerer.set_server(server.clone());
    let version = match conn.client.era().await? {
        Era::Legacy { version } => format!("{version} (a 2025-11-25 session)"),
        _ => conn.client.protocol_version(),
    };
    eprintln!(
        "connected to {server} ({}) — protocol {version}",
        target.label()
    );
    if let Some(i) = &discovered.instructions {
        eprintln!("  instructions: {i}");
    }
    eprintln!("  type help for the commands; Tab completes names");
    Ok(server)
}

/// Runs `sterna connect`.
pub(crate) async fn run(args: ConnectArgs) -> Result<ExitCode, CliError> {
    let words: Vec<String> = args.url.iter().cloned().collect();
    let (target, rest) = target::resolve(&words, &args.command, &args.client)?;
    if let Some(extra) = rest.first() {
        return Err(CliError::Usage(format!(
            "unexpected {extra:?}: give a URL, -- COMMAND [ARGS] or --server NAME (one of them)"
        )));
    }
    let conn = target::connect(&target, &args.client, Answers::default())?;
    let discovered = conn.client.discover().await?;
    let server = banner(&conn, &target, &discovered).await?;
    let mut session = Session {
        conn,
        names: Arc::default(),
        json: args.json,
        tools: Vec::new(),
        prompts: Vec::new(),
        templates: Vec::new(),
        resources: Vec::new(),
        caps: discovered.capabilities.clone(),
    };
    if let Err(e) = session.refresh().await {
        eprintln!("error: {e}");
    }
    let history = args.history.clone().or_else(|| {
        std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".sterna_history"))
    });
    let mut rl = editor(session.names.clone())?;
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    let prompt = format!("{}> ", server.split_whitespace().next().unwrap_or("sterna"));
    // A Ctrl-C at an empty prompt arms the exit; a second one in a row leaves.
    let mut armed = false;
    loop {
        if session.conn.notices.stale.swap(false, Ordering::Relaxed)
            && let Err(e) = session.refresh().await
        {
            eprintln!("error: {e}");
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
                armed = false;
                match session.command(line.trim()).await {
                    Outcome::Quit => break,
                    Outcome::Interrupted => armed = true,
                    Outcome::Next => {}
                }
            }
            Err(ReadlineError::Interrupted) if armed => break,
            Err(ReadlineError::Interrupted) => {
                armed = true;
                eprintln!("(Ctrl-C again, or Ctrl-D, quits)");
            }
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
