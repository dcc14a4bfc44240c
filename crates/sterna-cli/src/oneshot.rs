//! One-shot commands for scripts, like the MCP Inspector's `--cli --method`: `sterna
//! tools|prompts|resources|templates` list what a server offers (`--json`: the list
//! result, full schemas), `sterna read` reads a resource, `sterna get` gets a prompt —
//! `sterna skills` lists, shows or loads skills — with the exit codes of `sterna call` (4
//! for a transport or server error, or a skill file that fails verification).

use crate::answers::Answers;
use crate::cli::OneShotArgs;
use crate::drive::{self, Trace};
use crate::exit::CliError;
use crate::render;
use crate::target::{self, Conn};
use serde_json::{Map, Value, json};
use std::process::ExitCode;
use sterna::client::Call;

/// What to list.
#[derive(Debug, Clone, Copy)]
pub(crate) enum List {
    Tools,
    Prompts,
    Resources,
    Templates,
}

/// Connects to the target the words name; returns the connection and the words left.
fn open(args: &OneShotArgs) -> Result<(Conn, Vec<String>), CliError> {
    let (target, rest) = target::resolve(&args.positional, &args.command, &args.client)?;
    Ok((
        target::connect(&target, &args.client, Answers::default())?,
        rest,
    ))
}

fn no_more(rest: &[String], usage: &str) -> Result<(), CliError> {
    match rest.first() {
        None => Ok(()),
        Some(w) => Err(CliError::Usage(format!("unexpected {w:?} ({usage})"))),
    }
}

fn to(v: &impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn print(json: bool, value: Value, text: String, what: &str) {
    if json {
        println!("{}", render::json(&value));
    } else if text.is_empty() {
        println!("  (no {what})");
    } else {
        println!("{text}");
    }
}

/// `sterna tools|prompts|resources|templates`.
pub(crate) async fn list(what: List, args: OneShotArgs) -> Result<ExitCode, CliError> {
    let (conn, rest) = open(&args)?;
    no_more(&rest, "the list commands take only the server")?;
    let listed = listed(&conn, what, args.json).await;
    conn.client.close().await;
    let (value, text, name) = listed?;
    print(args.json, value, text, name);
    Ok(ExitCode::SUCCESS)
}

async fn listed(
    conn: &Conn,
    what: List,
    json: bool,
) -> Result<(Value, String, &'static str), CliError> {
    let c = &conn.client;
    Ok(match what {
        List::Tools => {
            let t = c.list_tools().await?;
            let text = if json {
                String::new()
            } else {
                render::tools(&t)
            };
            (json!({"tools": to(&t)}), text, "tools")
        }
        List::Prompts => {
            let p = c.list_prompts().await?;
            (json!({"prompts": to(&p)}), render::prompts(&p), "prompts")
        }
        List::Resources => {
            let r = c.list_resources().await?;
            (
                json!({"resources": to(&r)}),
                render::resources(&r),
                "resources",
            )
        }
        List::Templates => {
            let t = c.list_resource_templates().await?;
            (
                json!({"resourceTemplates": to(&t)}),
                render::templates(&t),
                "resource templates",
            )
        }
    })
}

/// `sterna read [URL] URI`.
pub(crate) async fn read(args: OneShotArgs) -> Result<ExitCode, CliError> {
    let (conn, rest) = open(&args)?;
    let [uri] = rest.as_slice() else {
        return Err(CliError::Usage(
            "expected the resource's URI after the server (sterna read URL URI)".into(),
        ));
    };
    let result = drive::run(&conn, Call::resource(uri.clone()), Trace::Rounds).await;
    conn.client.close().await;
    let r = result?;
    if args.json {
        println!("{}", render::json(&r));
    } else {
        println!("{}", render::resource_result(&r));
    }
    Ok(ExitCode::SUCCESS)
}

/// `sterna get [URL] PROMPT [ARGS_JSON] [-a NAME=VALUE]…`.
pub(crate) async fn get(args: OneShotArgs) -> Result<ExitCode, CliError> {
    let (conn, rest) = open(&args)?;
    let (name, json) = match rest.as_slice() {
        [name] => (name.clone(), None),
        [name, json] => (name.clone(), Some(json.as_str())),
        _ => {
            return Err(CliError::Usage(
                "expected PROMPT [ARGS_JSON] after the server (sterna get URL PROMPT)".into(),
            ));
        }
    };
    let mut arguments: Map<String, Value> = match json.map(serde_json::from_str) {
        None => Map::new(),
        Some(Ok(Value::Object(m))) => m,
        Some(_) => return Err(CliError::Usage("ARGS_JSON must be a JSON object".into())),
    };
    for a in &args.args {
        let (k, v) = a
            .split_once('=')
            .ok_or_else(|| CliError::Usage(format!("--arg {a}: expected NAME=VALUE")))?;
        arguments.insert(k.to_owned(), Value::String(v.to_owned()));
    }
    let call = Call::prompt(name, Value::Object(arguments));
    let result = drive::run(&conn, call, Trace::Rounds).await;
    conn.client.close().await;
    let r = result?;
    if args.json {
        println!("{}", render::json(&r));
    } else {
        println!("{}", render::prompt_result(&r));
    }
    Ok(ExitCode::SUCCESS)
}

/// `sterna skills [URL] [list | show URI | load URI]`.
pub(crate) async fn skills(args: OneShotArgs) -> Result<ExitCode, CliError> {
    let (conn, rest) = open(&args)?;
    let words: Vec<&str> = rest.iter().map(String::as_str).collect();
    let result = crate::skills::run(&conn.client, &words, args.json).await;
    conn.client.close().await;
    result?;
    Ok(ExitCode::SUCCESS)
}
