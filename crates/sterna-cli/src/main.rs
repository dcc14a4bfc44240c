//! `sterna`: the demo server and an MRTR demo client.
//!
//! ```text
//! sterna demo [--http] [--region eu-west-1|us-east-1] [--name orders]
//! sterna serve [--http ADDR]     # the demo server on stdio, or over HTTP
//! sterna call URL TOOL [ARGS] [--set FIELD=VALUE]...
//! sterna keygen                 # a new requestState key (base64)
//! ```

mod call;
mod demo_client;
mod demo_server;
mod forms;

use std::process::ExitCode;
use sterna::StateKeys;

const USAGE: &str = "usage:
  sterna demo [--http] [--region eu-west-1|us-east-1] [--name NAME]
      start the demo server (over stdio, or HTTP with --http) and complete
      provision_database with sterna's client through MRTR, asking the region in the
      terminal (or taking --region when not interactive)
  sterna serve [--http 127.0.0.1:3000]
      run the demo server on stdio, or over Streamable HTTP at http://ADDR/mcp
      (keys from STERNA_STATE_KEYS, else an ephemeral key)
  sterna call URL TOOL [ARGS_JSON] [--set FIELD=VALUE]...
      call a tool on any 2026-07-28 server over Streamable HTTP, driving every MRTR
      round; form fields are answered from --set, else asked in the terminal
  sterna keygen
      print a new random requestState key (base64) for STERNA_STATE_KEYS";

fn init_logs() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("STERNA_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .init();
}

/// Keys from `STERNA_STATE_KEYS`, or an ephemeral key (logged by the server builder).
pub(crate) fn keys_from_env() -> Result<StateKeys, String> {
    match std::env::var("STERNA_STATE_KEYS") {
        Ok(list) => {
            StateKeys::from_base64_list(&list).map_err(|e| format!("STERNA_STATE_KEYS: {e}"))
        }
        Err(_) => Ok(StateKeys::ephemeral()),
    }
}

async fn serve(args: &[String]) -> Result<(), String> {
    let server = demo_server::build(keys_from_env()?);
    match args {
        [] => sterna::transport::serve_stdio(server)
            .await
            .map_err(|e| format!("stdio: {e}")),
        [flag, addr] if flag == "--http" => {
            let addr: std::net::SocketAddr =
                addr.parse().map_err(|e| format!("--http {addr}: {e}"))?;
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("bind {addr}: {e}"))?;
            let local = listener.local_addr().map_err(|e| e.to_string())?;
            println!("listening on http://{local}/mcp");
            use std::io::Write;
            let _ = std::io::stdout().flush();
            let shutdown = async {
                let _ = tokio::signal::ctrl_c().await;
            };
            sterna::http::HttpServer::new(server)
                .serve_with_shutdown(listener, shutdown)
                .await
                .map_err(|e| format!("http: {e}"))
        }
        _ => Err(USAGE.to_owned()),
    }
}

fn main() -> ExitCode {
    init_logs();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sterna: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match args.first().map(String::as_str) {
        Some("serve") => runtime.block_on(serve(&args[1..])),
        Some("demo") => runtime.block_on(demo_client::run(&args[1..])),
        Some("call") => runtime.block_on(call::run(&args[1..])),
        Some("keygen") => {
            println!("{}", StateKeys::generate_base64());
            Ok(())
        }
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sterna: {e}");
            ExitCode::FAILURE
        }
    }
}
