//! `sterna call`: one tool call, every round driven, the result printed (as JSON with
//! `--json`). Scriptable: questions are answered from `--set`/`--answers`; without a
//! terminal an unanswered question fails the run (exit 3) and names it.

use crate::answers::Answers;
use crate::cli::CallArgs;
use crate::drive::{self, Trace};
use crate::exit::CliError;
use crate::render;
use crate::target::{self, Target};
use serde_json::{Map, Value};
use std::process::ExitCode;
use sterna::client::Call;

/// The target, tool and arguments from the positional words.
fn split(args: &CallArgs) -> Result<(Target, String, Option<String>), CliError> {
    let (target, rest) = target::resolve(&args.positional, &args.command, &args.client)?;
    match rest.as_slice() {
        [tool] => Ok((target, tool.clone(), None)),
        [tool, json] => Ok((target, tool.clone(), Some(json.clone()))),
        _ => Err(CliError::Usage(
            "expected TOOL [ARGS_JSON] after the server (sterna call URL TOOL [ARGS_JSON], \
             sterna call TOOL [ARGS_JSON] -- COMMAND, or sterna call --server NAME TOOL [ARGS_JSON])"
                .into(),
        )),
    }
}

/// Runs `sterna call`.
pub(crate) async fn run(args: CallArgs) -> Result<ExitCode, CliError> {
    let (target, tool, json) = split(&args)?;
    let mut arguments: Map<String, Value> = match json {
        None => Map::new(),
        Some(j) => match serde_json::from_str(&j) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(CliError::Usage("ARGS_JSON must be a JSON object".into())),
            Err(e) => return Err(CliError::Usage(format!("ARGS_JSON: {e}"))),
        },
    };
    let answers = Answers::parse(&args.sets, args.answers.as_deref())?;
    let conn = target::connect(&target, &args.client, answers)?;
    let ask_args = conn.ui.interactive() && arguments.is_empty() && args.args.is_empty();
    if !args.args.is_empty() || ask_args {
        let tools = conn.client.list_tools().await?;
        let schema = tools
            .iter()
            .find(|t| t.name == tool)
            .map(|t| t.input_schema.clone());
        for a in &args.args {
            let (k, v) = a
                .split_once('=')
                .ok_or_else(|| CliError::Usage(format!("--arg {a}: expected NAME=VALUE")))?;
            let value = crate::widgets::args::typed(schema.as_ref(), k, v)
                .map_err(|e| CliError::Usage(format!("--arg {k}: {e}")))?;
            arguments.insert(k.to_owned(), value);
        }
        if let (true, Some(schema)) = (ask_args, schema)
            && !crate::widgets::args::properties(&schema).is_empty()
        {
            arguments = conn
                .ui
                .exclusive(move || crate::widgets::args::ask_all(&schema))
                .await?
                .map_err(|_| CliError::Usage("the call was abandoned at its arguments".into()))?;
        }
    }
    let call = Call::tool(tool, Value::Object(arguments));
    let result = drive::run(&conn, call, Trace::Rounds).await;
    conn.client.close().await;
    let result = result?;
    conn.answerer.warn_unused_sets();
    if args.json {
        println!("{}", render::json(&result));
    } else {
        println!("{}", render::tool_result(&result));
    }
    Ok(if result.is_error == Some(true) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
