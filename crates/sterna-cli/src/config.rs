//! Named servers from a config file in the `mcpServers` format that MCP hosts (Claude
//! Desktop, Claude Code's `.mcp.json`, Cursor) and the MCP Inspector use:
//!
//! ```json
//! {"mcpServers": {
//!   "demo":   {"command": "sterna", "args": ["serve"], "env": {"STERNA_LOG": "warn"}},
//!   "remote": {"type": "http", "url": "https://mcp.example.com/mcp",
//!              "headers": {"Authorization": "Bearer ${TOKEN}"}}}}
//! ```
//!
//! `${VAR}` and `${VAR:-default}` are replaced by environment variables in every string.

use crate::exit::CliError;
use crate::place::Target;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file.
#[derive(Debug, Deserialize)]
struct File {
    #[serde(rename = "mcpServers", alias = "servers")]
    servers: BTreeMap<String, Entry>,
}

/// One server.
#[derive(Debug, Deserialize)]
struct Entry {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// Where the config file is: the one given (`--config`, `STERNA_CONFIG`), else
/// `./.mcp.json`, else `$XDG_CONFIG_HOME/sterna/mcp.json` (`~/.config/sterna/mcp.json`).
fn find(given: Option<&Path>) -> Result<PathBuf, CliError> {
    if let Some(p) = given {
        return Ok(p.to_owned());
    }
    let local = PathBuf::from(".mcp.json");
    if local.is_file() {
        return Ok(local);
    }
    let nonempty = |v: &std::ffi::OsString| !v.is_empty();
    let home = match std::env::var_os("XDG_CONFIG_HOME").filter(nonempty) {
        Some(d) => Some(PathBuf::from(d)),
        None => std::env::var_os("HOME")
            .filter(nonempty)
            .map(|h| PathBuf::from(h).join(".config")),
    };
    match home.map(|h| h.join("sterna").join("mcp.json")) {
        Some(p) if p.is_file() => Ok(p),
        _ => Err(CliError::Usage(
            "--server needs a config file: --config FILE (or STERNA_CONFIG), ./.mcp.json or \
             ~/.config/sterna/mcp.json, with {\"mcpServers\": {NAME: {...}}}"
                .into(),
        )),
    }
}

/// The server called `name` in the config file.
pub(crate) fn lookup(given: Option<&Path>, name: &str) -> Result<Target, CliError> {
    let path = find(given)?;
    let at = path.display().to_string();
    let text = std::fs::read_to_string(&path)
        .map_err(|e| CliError::Usage(format!("--config {at}: {e}")))?;
    let mut file: File = serde_json::from_str(&text)
        .map_err(|e| CliError::Usage(format!("--config {at}: not an mcpServers file: {e}")))?;
    let Some(entry) = file.servers.remove(name) else {
        let names: Vec<&String> = file.servers.keys().collect();
        return Err(CliError::Usage(format!(
            "no server {name:?} in {at} (it has: {})",
            names
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    target(name, entry).map_err(|m| CliError::Usage(format!("{at}, server {name:?}: {m}")))
}

fn target(name: &str, e: Entry) -> Result<Target, String> {
    match (e.kind.as_deref(), &e.command, &e.url) {
        (Some("sse"), _, _) => Err("type \"sse\" is the 2024-11-05 HTTP+SSE transport, which \
             sterna does not speak (Streamable HTTP and stdio only)"
            .into()),
        (_, Some(_), Some(_)) => Err("has both command and url".into()),
        (_, Some(cmd), None) => {
            let mut command = vec![expand(cmd)?];
            for a in &e.args {
                command.push(expand(a)?);
            }
            let env = e
                .env
                .iter()
                .map(|(k, v)| Ok((k.clone(), expand(v)?)))
                .collect::<Result<_, String>>()?;
            Ok(Target::Stdio {
                command,
                env,
                cwd: e.cwd,
            })
        }
        (_, None, Some(url)) => Ok(Target::Http {
            url: expand(url)?,
            headers: e
                .headers
                .iter()
                .map(|(k, v)| Ok((k.clone(), expand(v)?)))
                .collect::<Result<_, String>>()?,
        }),
        (_, None, None) => Err(format!("{name} has neither command nor url")),
    }
}

/// `${VAR}` and `${VAR:-default}` replaced by the environment.
fn expand(s: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let Some(end) = rest[at..].find('}') else {
            return Err(format!("unclosed ${{ in {s:?}"));
        };
        let inner = &rest[at + 2..at + end];
        let (var, default) = match inner.split_once(":-") {
            Some((v, d)) => (v, Some(d)),
            None => (inner, None),
        };
        match (std::env::var(var), default) {
            (Ok(v), _) => out.push_str(&v),
            (Err(_), Some(d)) => out.push_str(d),
            (Err(_), None) => return Err(format!("the environment variable {var} is not set")),
        }
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_become_targets() {
        let f: File = serde_json::from_str(
            r#"{"mcpServers": {
                "a": {"command": "srv", "args": ["--x", "${STERNA_TEST_NOPE:-d}"], "env": {"K": "v"}},
                "b": {"type": "http", "url": "http://h/mcp", "headers": {"X": "y"}},
                "c": {"type": "sse", "url": "http://h/sse"},
                "d": {"url": "http://h/mcp", "command": "x"}}}"#,
        )
        .unwrap();
        let mut s = f.servers;
        match target("a", s.remove("a").unwrap()).unwrap() {
            Target::Stdio { command, env, .. } => {
                assert_eq!(command, ["srv", "--x", "d"]);
                assert_eq!(env, [("K".to_owned(), "v".to_owned())]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            target("b", s.remove("b").unwrap()),
            Ok(Target::Http { .. })
        ));
        assert!(
            target("c", s.remove("c").unwrap())
                .unwrap_err()
                .contains("HTTP+SSE")
        );
        assert!(target("d", s.remove("d").unwrap()).is_err());
        assert!(
            expand("${STERNA_TEST_UNSET_VAR}")
                .unwrap_err()
                .contains("not set")
        );
    }
}
