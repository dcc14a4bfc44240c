//! The demo server over real stdio: raw JSON-RPC lines in, lines out.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
    })
}

#[test]
fn provision_database_over_stdio_then_clean_exit_on_eof() {
    let mut child = Command::new(crate::sterna())
        .arg("serve")
        .env("STERNA_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the sterna binary starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut exchange = |msg: Value| -> Value {
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line:?}"))
    };

    let r1 = exchange(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "provision_database", "arguments": {"name": "orders"}, "_meta": meta()}}));
    assert_eq!(r1["id"], 1);
    let result = &r1["result"];
    assert_eq!(result["resultType"], "input_required");
    let keys: Vec<&String> = result["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["pick_region"]);
    let state = result["requestState"].as_str().unwrap().to_owned();
    assert!(state.len() < 200);

    let r2 = exchange(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "provision_database", "arguments": {"name": "orders"}, "_meta": meta(),
                   "inputResponses": {"pick_region": {"action": "accept", "content": {"region": "eu-west-1"}}},
                   "requestState": state}}));
    assert_eq!(r2["id"], 2);
    assert_eq!(r2["result"]["resultType"], "complete");
    assert_eq!(
        r2["result"]["content"][0]["text"],
        "Created orders in eu-west-1"
    );

    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "exit status {status}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server did not exit after EOF"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert!(rest.is_empty(), "nothing but responses on stdout: {rest:?}");
}

#[test]
fn demo_completes_the_round_trip() {
    let out = Command::new(crate::sterna())
        .args(["demo", "--region", "us-east-1"])
        .stdin(Stdio::null())
        .output()
        .expect("the demo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("input_required"), "{stdout}");
    assert!(
        stdout.contains("complete: Created orders in us-east-1"),
        "{stdout}"
    );
}

#[tokio::test]
async fn sterna_client_drives_the_stdio_server_and_closes_it() {
    use sterna::client::Client;
    use sterna::types::elicitation::{ElicitFormParams, ElicitResult};
    let mut command = tokio::process::Command::new(crate::sterna());
    command.arg("serve").env("STERNA_LOG", "error");
    let client = Client::builder("stdio-test", "0")
        .on_elicit(|_f: ElicitFormParams| async {
            ElicitResult::accept(json!({"region": "us-east-1"}).as_object().unwrap().clone())
        })
        .spawn_stdio(command)
        .unwrap();
    let r = client
        .call_tool("provision_database", json!({"name": "orders"}))
        .await
        .unwrap();
    assert_eq!(r.text_content(), "Created orders in us-east-1");
    let r = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(r.text_content(), "hi");
    let started = Instant::now();
    client.close().await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the server exits on EOF without being killed"
    );
    assert!(
        client
            .call_tool("echo", json!({"text": "x"}))
            .await
            .is_err(),
        "closed"
    );
}
