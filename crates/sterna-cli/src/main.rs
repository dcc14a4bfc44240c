//! `sterna`: a terminal client for MCP 2026-07-28 servers — an interactive session
//! (`connect`), scriptable calls (`call`) — and the demo server (`serve`, `demo`).
//!
//! Exit codes: 0 ok, 1 the tool returned an error result, 2 usage error, 3 a question
//! could not be answered (no terminal, nothing given), 4 protocol, transport or server
//! error, 5 refused locally, 130 interrupted. See `crates/sterna-cli/README.md`.

mod answers;
mod call;
mod check;
mod cli;
mod config;
mod demo_client;
mod demo_server;
mod drive;
mod exit;
mod exited;
mod explain;
mod fulfil;
mod logs;
mod notify;
mod oauth;
mod oneshot;
mod place;
mod redact;
mod render;
mod replay;
mod replay_io;
mod roots;
mod sampling_cmd;
mod serve;
mod session;
mod skills;
mod target;
mod ui;
mod widgets;
mod wire;

use clap::{CommandFactory, Parser};
use cli::{Cli, Command};
use exit::CliError;
use std::process::ExitCode;
use sterna::server::state::StateKeys;

async fn dispatch(command: Command) -> Result<ExitCode, CliError> {
    match command {
        Command::Connect(a) => session::run(a).await,
        Command::Call(a) => call::run(a).await,
        Command::Tools(a) => oneshot::list(oneshot::List::Tools, a).await,
        Command::Prompts(a) => oneshot::list(oneshot::List::Prompts, a).await,
        Command::Resources(a) => oneshot::list(oneshot::List::Resources, a).await,
        Command::Templates(a) => oneshot::list(oneshot::List::Templates, a).await,
        Command::Read(a) => oneshot::read(a).await,
        Command::Get(a) => oneshot::get(a).await,
        Command::Skills(a) => oneshot::skills(a).await,
        Command::Replay(a) => replay::run(a).await,
        Command::Demo(a) => demo_client::run(a).await,
        Command::Serve(a) => serve::run(a).await.map(|()| ExitCode::SUCCESS),
        Command::Keygen => {
            println!("{}", StateKeys::generate_base64());
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "sterna", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The demo server on stdio talks to a client that shows its stderr: it logs errors
    // only, unless STERNA_LOG says otherwise.
    let quiet = matches!(&cli.command, Command::Serve(a) if a.http.is_none());
    logs::init(wire::global().clone(), if quiet { "error" } else { "warn" });
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sterna: cannot start the runtime: {e}");
            return ExitCode::from(4);
        }
    };
    let code = match runtime.block_on(dispatch(cli.command)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("sterna: {e}");
            e.exit_code()
        }
    };
    // Blocking widgets or a read of stdin may still hold a thread: do not wait for them.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    code
}
