//! `sterna call URL TOOL [ARGS] [--set FIELD=VALUE]...`: calls a tool on any 2026-07-28
//! server over Streamable HTTP with sterna's client, driving every MRTR round and
//! answering form questions from `--set` (or the terminal).

use crate::forms::fill;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use sterna::client::{Call, Client, Step};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};

pub(crate) async fn run(args: &[String]) -> Result<(), String> {
    let mut positional = Vec::new();
    let mut presets = HashMap::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--set" {
            let kv = it.next().ok_or("--set needs FIELD=VALUE")?;
            let (k, v) = kv.split_once('=').ok_or("--set needs FIELD=VALUE")?;
            presets.insert(k.to_owned(), v.to_owned());
        } else {
            positional.push(a.clone());
        }
    }
    let (url, tool, arguments) = match positional.as_slice() {
        [url, tool] => (url, tool, Value::Null),
        [url, tool, json] => (
            url,
            tool,
            serde_json::from_str(json).map_err(|e| format!("ARGS: {e}"))?,
        ),
        _ => return Err("usage: sterna call URL TOOL [ARGS_JSON] [--set FIELD=VALUE]...".into()),
    };
    let presets = Arc::new(presets);
    let client = Client::builder("sterna-cli", env!("CARGO_PKG_VERSION"))
        .on_elicit(move |form: ElicitFormParams| {
            let p = presets.clone();
            async move {
                tokio::task::spawn_blocking(move || fill(&form, &p))
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .unwrap_or_else(ElicitResult::cancel)
            }
        })
        .connect_http(url)
        .map_err(|e| e.to_string())?;
    let rounds = Mutex::new(Vec::new());
    let mut step = client
        .start(Call::tool(tool.as_str(), arguments))
        .await
        .map_err(|e| e.to_string())?;
    let result = loop {
        match step {
            Step::Complete(r) => break r,
            Step::InputRequired(p) => {
                let keys: Vec<String> = p.requests().keys().cloned().collect();
                println!("round {}: questions {keys:?}", p.round());
                rounds.lock().unwrap_or_else(|e| e.into_inner()).push(keys);
                if p.round() >= 10 {
                    return Err("still asking after 10 rounds".into());
                }
                let answers = client
                    .fulfil(p.requests())
                    .await
                    .map_err(|e| e.to_string())?;
                step = client.resume(p, answers).await.map_err(|e| e.to_string())?;
            }
        }
    };
    println!("result: {}", result.text_content());
    if result.is_error == Some(true) {
        return Err("the tool reported an error".into());
    }
    Ok(())
}
