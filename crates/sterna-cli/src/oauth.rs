//! OAuth for HTTP targets: on a `401` the client discovers the server's authorization
//! server, registers if it must, and runs the authorization code flow with PKCE through a
//! loopback redirect (the browser opens on a terminal; otherwise the URL is printed).
//! Tokens and registrations are cached in a `0600` file, so the next run needs no login.

use crate::cli::ClientOpts;
use crate::exit::CliError;
use crate::ui::Ui;
use std::path::PathBuf;
use sterna::client::oauth::{ClientInfo, FileStore, LoopbackRedirect, OAuth};

/// The OAuth configuration for an HTTP target, unless turned off (`--no-oauth`, or an
/// `Authorization` header given with `-H`).
pub(crate) fn for_http(opts: &ClientOpts, ui: &Ui) -> Result<Option<OAuth>, CliError> {
    let fixed_token = opts.headers.iter().any(|h| {
        h.split_once(':')
            .is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case("authorization"))
    });
    if opts.no_oauth || fixed_token {
        return Ok(None);
    }
    let redirect = LoopbackRedirect::bind()
        .map_err(|e| CliError::Local(format!("OAuth: cannot listen for the redirect: {e}")))?
        .open_browser(ui.interactive());
    let mut oauth = OAuth::authorization_code(redirect).client_name("sterna");
    // Without a file (no --token-file, no HOME), tokens live for this run only.
    if let Some(file) = opts.token_file.clone().or_else(default_token_file) {
        oauth = oauth.store(FileStore::new(file));
    }
    if let Some(id) = &opts.client_id {
        oauth = oauth.pre_registered(ClientInfo::public(id.clone()));
    }
    Ok(Some(oauth.build()))
}

/// `$XDG_CONFIG_HOME/sterna/tokens.json`, else `~/.config/sterna/tokens.json`.
fn default_token_file() -> Option<PathBuf> {
    let nonempty = |v: &std::ffi::OsString| !v.is_empty();
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(nonempty) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").filter(nonempty)?).join(".config"),
    };
    Some(base.join("sterna").join("tokens.json"))
}
