//! `sterna serve`: the demo server on stdio, or over Streamable HTTP.

use crate::cli::ServeArgs;
use crate::demo_server;
use crate::exit::CliError;
use std::io::Write;
use sterna::StateKeys;

/// Keys from `STERNA_STATE_KEYS`, or an ephemeral key (logged by the server builder).
pub(crate) fn keys_from_env() -> Result<StateKeys, CliError> {
    match std::env::var("STERNA_STATE_KEYS") {
        Ok(list) => StateKeys::from_base64_list(&list)
            .map_err(|e| CliError::Usage(format!("STERNA_STATE_KEYS: {e}"))),
        Err(_) => Ok(StateKeys::ephemeral()),
    }
}

/// Runs the demo server until end of input (stdio) or Ctrl-C (HTTP).
pub(crate) async fn run(args: ServeArgs) -> Result<(), CliError> {
    let server = demo_server::build(keys_from_env()?);
    let Some(addr) = args.http else {
        return sterna::transport::serve_stdio(server)
            .await
            .map_err(|e| CliError::Local(format!("stdio: {e}")));
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| CliError::Local(format!("bind {addr}: {e}")))?;
    let local = listener
        .local_addr()
        .map_err(|e| CliError::Local(e.to_string()))?;
    println!("listening on http://{local}/mcp");
    let _ = std::io::stdout().flush();
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    sterna::http::HttpServer::new(server)
        .serve_with_shutdown(listener, shutdown)
        .await
        .map_err(|e| CliError::Local(format!("http: {e}")))
}
