//! A real child process for the stdio era probe: a 2025-11-25 server that exits on any
//! request it does not know (as some legacy servers do on `server/discover`). The test
//! binary runs itself as that child (`STERNA_TEST_CHILD` set), so no other program is
//! needed.

use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::time::Duration;
use sterna::client::Client;
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};

fn send(v: &Value) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{v}").unwrap();
    out.flush().unwrap();
}

/// The child's main loop (does nothing unless `STERNA_TEST_CHILD` names its log file).
#[test]
fn child_server() {
    let Ok(log) = std::env::var("STERNA_TEST_CHILD") else {
        return;
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    writeln!(f, "start").unwrap();
    // libtest has written "test child::child_server ... " without a newline: end that line
    // so the first message stands on its own.
    send(&json!(null));
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    while let Some(Ok(line)) = lines.next() {
        let m: Value = serde_json::from_str(&line).unwrap_or_default();
        let id = m["id"].clone();
        match m["method"].as_str().unwrap_or_default() {
            "initialize" => send(&json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "fragile", "version": "1"}}})),
            "notifications/initialized" | "notifications/cancelled" => {}
            "tools/call" => {
                send(
                    &json!({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create", "params": {
                    "message": "Name?", "requestedSchema": {"type": "object",
                    "properties": {"name": {"type": "string"}}}}}),
                );
                let answer: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
                let name = answer["result"]["content"]["name"]
                    .as_str()
                    .unwrap_or("?")
                    .to_owned();
                send(&json!({"jsonrpc": "2.0", "id": id, "result": {
                    "content": [{"type": "text", "text": format!("hello {name}")}]}}));
            }
            _ if !id.is_null() => {
                writeln!(f, "died on {}", m["method"]).unwrap();
                std::process::exit(3);
            }
            _ => {}
        }
    }
    std::process::exit(0);
}

#[tokio::test]
async fn a_server_that_dies_on_the_probe_is_restarted_and_spoken_to_in_2025_11_25() {
    let log = std::env::temp_dir().join(format!("sterna-child-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let mut cmd = tokio::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "child::child_server",
        "--nocapture",
        "--test-threads",
        "1",
    ])
    .env("STERNA_TEST_CHILD", &log);
    let client = Client::builder("child-test", "0")
        .on_elicit(|_f: ElicitFormParams| async {
            ElicitResult::accept(json!({"name": "Ada"}).as_object().unwrap().clone())
        })
        .probe_timeout(Duration::from_secs(5))
        .spawn_stdio(cmd)
        .unwrap();
    let r = client.call_tool("greet", json!({})).await.unwrap();
    assert_eq!(r.text_content(), "hello Ada");
    assert!(client.era().await.unwrap().is_legacy());
    client.close().await;
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        ["start", "died on \"server/discover\"", "start"],
        "the child died on the probe and was started again once"
    );
}
