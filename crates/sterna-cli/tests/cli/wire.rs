//! The wire, visible: `--wire` shows every JSON-RPC message with MRTR rounds and 2025
//! pushes labelled and secrets redacted; `--record` writes JSON Lines that `sterna
//! replay` sends again (the requestState of the live server taking the recorded one's
//! place).

use crate::screen::{Screen, TALL, show};
use crate::{run, sterna};
use serde_json::Value;

#[test]
fn wire_shows_an_mrtr_call_round_by_round() {
    let mut s = Screen::spawn_sized(
        &[
            "call",
            "--wire",
            "provision_database",
            r#"{"name":"orders"}"#,
            "--set",
            "region=eu-west-1",
            "--",
            sterna(),
            "serve",
        ],
        TALL,
        |_| {},
    );
    let screen = s.wait_for("Created orders in eu-west-1\n");
    show("--wire on an MRTR call", &screen);
    for want in [
        "stdio #1 tools/call provision_database",
        "[MRTR round 1: input_required, questions [\"pick_region\"], requestState]",
        "stdio #2 tools/call provision_database  [MRTR round 2: retry with 1 answer(s), requestState echoed]",
    ] {
        assert!(screen.contains(want), "{want:?} missing:\n{screen}");
    }
    assert_eq!(s.exit_code(), 0);
}

#[test]
fn wire_labels_2025_pushes_and_redacts_secrets() {
    let mut s = Screen::spawn_sized(
        &[
            "call",
            "--wire",
            "--era",
            "legacy",
            "provision_database",
            r#"{"name":"orders","api_token":"tok-s3cret"}"#,
            "--set",
            "region=us-east-1",
            "--",
            sterna(),
            "serve",
        ],
        TALL,
        |_| {},
    );
    let screen = s.wait_for("Created orders in us-east-1\n");
    show("--wire on a 2025-11-25 session", &screen);
    assert!(screen.contains("#1 initialize"), "{screen}");
    assert!(
        screen.contains("elicitation/create  [2025-11-25 push: a request of the server]"),
        "{screen}"
    );
    assert!(
        screen.contains("answer to the server's elicitation/create  [2025-11-25 push answered]"),
        "{screen}"
    );
    assert!(screen.contains("\"api_token\":\"[redacted]\""), "{screen}");
    assert!(!screen.contains("tok-s3cret"), "{screen}");
    assert_eq!(s.exit_code(), 0);
}

#[test]
fn record_then_replay_against_a_new_server() {
    let file = std::env::temp_dir().join(format!("sterna-record-{}.jsonl", std::process::id()));
    let path = file.to_str().unwrap();
    let out = run(&[
        "call",
        "--record",
        path,
        "provision_database",
        r#"{"name":"orders"}"#,
        "--set",
        "region=eu-west-1",
        "--",
        sterna(),
        "serve",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["record"], "sterna-record");
    let sent: Vec<&Value> = lines[1..].iter().filter(|l| l["dir"] == "send").collect();
    assert!(
        sent.iter()
            .any(|l| l["message"]["params"]["requestState"].is_string())
    );
    // Another server process (another ephemeral key): the recorded requestState would be
    // refused; the live one takes its place, and every answer is as recorded.
    let out = run(&["replay", path, "--", sterna(), "serve"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("3 answer(s) as recorded, 0 differ"),
        "{stdout}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[MRTR round 2: retry with 1 answer(s), requestState echoed]"),
        "{err}"
    );
    // A server that answers differently: the difference is named, exit 1.
    let changed = text.replace("Created orders in eu-west-1", "Created orders in mars-1");
    std::fs::write(&file, changed).unwrap();
    let out = run(&["replay", "--quiet", path, "--", sterna(), "serve"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("/result/content/0/text: recorded \"Created orders in mars-1\", now \"Created orders in eu-west-1\""),
        "{stdout}"
    );
    let _ = std::fs::remove_file(&file);
}

#[test]
fn help_documents_sterna_log() {
    let out = run(&["--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("STERNA_LOG") && text.contains("sterna::wire=trace"),
        "{text}"
    );
}
