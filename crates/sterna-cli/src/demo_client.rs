//! The demo client: starts `sterna serve` as a child process and completes
//! `provision_database` over stdio, one MRTR round at a time, printing each leg.

use serde_json::{Value, json};
use std::io::{IsTerminal, Write};
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

struct Options {
    region: Option<String>,
    name: String,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        region: None,
        name: "orders".into(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--region" => o.region = Some(it.next().ok_or("--region needs a value")?.clone()),
            "--name" => o.name = it.next().ok_or("--name needs a value")?.clone(),
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(o)
}

struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: tokio::io::Lines<BufReader<ChildStdout>>,
}

impl Peer {
    async fn call(&mut self, request: &Value) -> Result<Value, String> {
        let mut line = serde_json::to_vec(request).map_err(|e| e.to_string())?;
        line.push(b'\n');
        self.stdin
            .write_all(&line)
            .await
            .map_err(|e| e.to_string())?;
        self.stdin.flush().await.map_err(|e| e.to_string())?;
        loop {
            let line = self
                .stdout
                .next_line()
                .await
                .map_err(|e| e.to_string())?
                .ok_or("the server closed its output")?;
            let msg: Value =
                serde_json::from_str(&line).map_err(|e| format!("bad JSON from server: {e}"))?;
            if msg.get("id") == request.get("id") {
                return Ok(msg);
            }
        }
    }
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "sterna-demo-client", "version": env!("CARGO_PKG_VERSION")},
    })
}

fn ask_region(question: &Value, preset: Option<&str>) -> Result<String, String> {
    let message = question["params"]["message"]
        .as_str()
        .unwrap_or("Which region?");
    let field = &question["params"]["requestedSchema"]["properties"]["region"];
    let options: Vec<String> = match (field["enum"].as_array(), field["oneOf"].as_array()) {
        (Some(values), _) => values
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        (None, Some(titled)) => titled
            .iter()
            .filter_map(|v| v["const"].as_str().map(str::to_owned))
            .collect(),
        (None, None) => Vec::new(),
    };
    if let Some(r) = preset {
        println!(
            "  ? {message} [{}] → {r} (from --region)",
            options.join(", ")
        );
        return Ok(r.to_owned());
    }
    if !std::io::stdin().is_terminal() {
        let r = options.first().cloned().ok_or("no options offered")?;
        println!(
            "  ? {message} [{}] → {r} (not a terminal: first option)",
            options.join(", ")
        );
        return Ok(r);
    }
    loop {
        print!("  ? {message} [{}]: ", options.join(", "));
        std::io::stdout().flush().map_err(|e| e.to_string())?;
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        let answer = line.trim();
        if options.iter().any(|o| o == answer) {
            return Ok(answer.to_owned());
        }
        println!("    please type one of: {}", options.join(", "));
    }
}

pub(crate) async fn run(args: &[String]) -> Result<(), String> {
    let opts = parse(args)?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .arg("serve")
        .env(
            "STERNA_LOG",
            std::env::var("STERNA_LOG").unwrap_or_else(|_| "error".into()),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start the server: {e}"))?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    let mut peer = Peer {
        child,
        stdin,
        stdout,
    };

    println!("sterna demo: MCP 2026-07-28 over stdio, one tool call in several round trips\n");
    let arguments = json!({ "name": opts.name });
    let mut request = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "provision_database", "arguments": arguments, "_meta": meta() }
    });
    let mut next_id = 2;
    for round in 1..=10 {
        println!(
            "→ [{}] tools/call provision_database {arguments}",
            request["id"]
        );
        let response = peer.call(&request).await?;
        if let Some(err) = response.get("error") {
            return Err(format!("server error: {err}"));
        }
        let result = &response["result"];
        if result["resultType"] == "input_required" {
            let state = result["requestState"].as_str();
            println!("← [{}] input_required (round {round})", response["id"]);
            if let Some(s) = state {
                println!(
                    "  requestState: {} bytes, sealed (opaque to the client)",
                    s.len()
                );
            }
            let mut answers = serde_json::Map::new();
            for (key, question) in result["inputRequests"].as_object().into_iter().flatten() {
                println!("  question {key:?}: {}", question["method"]);
                let region = ask_region(question, opts.region.as_deref())?;
                answers.insert(
                    key.clone(),
                    json!({"action": "accept", "content": {"region": region}}),
                );
            }
            let mut params = json!({
                "name": "provision_database", "arguments": arguments,
                "inputResponses": answers, "_meta": meta()
            });
            if let Some(s) = state {
                params["requestState"] = Value::String(s.to_owned());
            }
            request =
                json!({"jsonrpc": "2.0", "id": next_id, "method": "tools/call", "params": params});
            next_id += 1;
            continue;
        }
        let text: Vec<&str> = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect();
        println!("← [{}] complete: {}", response["id"], text.join("\n"));
        let Peer {
            mut child, stdin, ..
        } = peer;
        drop(stdin);
        let status = child.wait().await.map_err(|e| e.to_string())?;
        println!("\nserver exited ({status}) after stdin closed");
        return if result["isError"] == true {
            Err("the tool reported an error".into())
        } else {
            Ok(())
        };
    }
    Err("gave up after 10 rounds".into())
}
