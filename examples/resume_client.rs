//! A client that takes one round at a time: `start` a call, keep the pending call as
//! JSON, and `resume` it later — in another process, against another replica.
//!
//! ```sh
//! # two replicas of the demo server that share their requestState keys
//! export STERNA_STATE_KEYS=$(sterna keygen)
//! sterna serve --http 127.0.0.1:3001 &
//! sterna serve --http 127.0.0.1:3002 &
//! # round 1 on the first replica: the questions go to stderr, the pending call to a file
//! cargo run --example resume_client -- start http://127.0.0.1:3001/mcp \
//!     provision_database '{"name":"orders"}' > pending.json
//! # round 2, later, in another process, on the other replica
//! cargo run --example resume_client -- resume http://127.0.0.1:3002/mcp \
//!     pending.json '{"pick_region":{"region":"us-east-1"}}'
//! ```
//!
//! Answers are given as `{"question_key": {form fields}}` and sent as `accept`.

use serde_json::{Map, Value};
use std::process::ExitCode;
use sterna::client::{Call, Client, Pending, Step};
use sterna::types::elicitation::ElicitResult;
use sterna::types::mrtr::{InputResponse, InputResponses};
use sterna::types::tools::CallToolResult;

type Error = Box<dyn std::error::Error>;

/// Prints where the call stands: the result, or the questions and the pending call.
fn report(step: Step<CallToolResult>) -> Result<(), Error> {
    match step {
        Step::Complete(result) => println!("{}", result.text_content()),
        Step::InputRequired(pending) => {
            for (key, question) in pending.requests() {
                eprintln!("question {key}: {}", serde_json::to_string(question)?);
            }
            // Everything needed to continue: method, target, arguments, the questions and
            // the sealed requestState (opaque here; the client only echoes it).
            println!("{}", serde_json::to_string_pretty(&pending)?);
        }
        // Only a client that declares the tasks extension (`ClientBuilder::tasks`) is
        // answered with a task; this one does not.
        Step::Task(_) => return Err("the server answered with a task".into()),
    }
    Ok(())
}

/// `{"key": {fields}}` → one accepted form per key.
fn answers(json: &str) -> Result<InputResponses, Error> {
    let given: Map<String, Value> = serde_json::from_str(json)?;
    let mut answers = InputResponses::new();
    for (key, fields) in given {
        let Value::Object(fields) = fields else {
            return Err(format!("answer {key}: expected an object of form fields").into());
        };
        answers.insert(key, InputResponse::Elicit(ElicitResult::accept(fields)));
    }
    Ok(answers)
}

async fn run(args: &[String]) -> Result<(), Error> {
    // Capabilities are declared by registering handlers. This client answers by hand
    // (`resume`), so its form handler is never called by `start`/`resume`; registering
    // it is what tells the server this client can answer forms.
    let client = |url: &str| {
        Client::builder("resume-client-example", "1.0.0")
            .on_elicit(|_| async { ElicitResult::cancel() })
            .connect_http(url)
    };
    match args {
        [cmd, url, tool, arguments] if cmd == "start" => {
            let arguments: Value = serde_json::from_str(arguments)?;
            let step = client(url)?.start(Call::tool(tool, arguments)).await?;
            report(step)
        }
        [cmd, url, file, given] if cmd == "resume" => {
            let pending: Pending<CallToolResult> =
                serde_json::from_str(&tokio::fs::read_to_string(file).await?)?;
            eprintln!(
                "resuming {} after round {}",
                pending.target(),
                pending.round()
            );
            let step = client(url)?.resume(pending, answers(given)?).await?;
            report(step)
        }
        _ => Err(
            "usage: resume_client start URL TOOL ARGS_JSON | resume URL FILE ANSWERS_JSON".into(),
        ),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("resume_client: {e}");
            ExitCode::FAILURE
        }
    }
}
