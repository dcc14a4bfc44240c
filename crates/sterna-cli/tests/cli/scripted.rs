//! Scripted runs: no terminal, answers from the command line, JSON out, exit codes.

use crate::peers::DemoHttp;
use crate::{run, sterna};
use serde_json::Value;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn json_result_with_answers_from_set_over_stdio() {
    let out = run(&[
        "call",
        "provision_database",
        r#"{"name":"orders"}"#,
        "--set",
        "region=eu-west-1",
        "--json",
        "--",
        sterna(),
        "serve",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert_eq!(v["content"][0]["text"], "Created orders in eu-west-1");
}

/// `--era legacy`: `initialize`, a 2025-11-25 session, the question pushed as
/// `elicitation/create` and answered from `--set`, over stdio and over HTTP.
#[test]
fn era_legacy_answers_pushed_questions_over_stdio_and_http() {
    let server = DemoHttp::start();
    let stdio = [
        "call",
        "--era",
        "legacy",
        "provision_database",
        r#"{"name":"orders"}"#,
        "--set",
        "region=us-east-1",
        "--json",
        "--",
        sterna(),
        "serve",
    ];
    let http = [
        "call",
        "--era",
        "legacy",
        &server.url,
        "provision_database",
        r#"{"name":"ledger"}"#,
        "--set",
        "region=eu-west-1",
        "--json",
    ];
    for (args, want) in [
        (&stdio[..], "Created orders in us-east-1"),
        (&http[..], "Created ledger in eu-west-1"),
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
        assert_eq!(v["content"][0]["text"], want);
        // A pushed question has no MRTR key (sterna names it `sterna-…`): answered by field.
        let err = text(&out.stderr);
        assert!(!err.contains("pick_region"), "{err}");
        assert!(err.contains(".region → "), "{err}");
    }
}

#[test]
fn answers_are_typed_by_the_requested_schema_over_http() {
    let server = DemoHttp::start();
    let file = std::env::temp_dir().join(format!("sterna-answers-{}.json", std::process::id()));
    std::fs::write(&file, r#"{"sign_up": {"name": "Grace", "email": "grace@example.org", "topics": ["security", "events"]}}"#).unwrap();
    let out = run(&[
        "call",
        &server.url,
        "sign_up",
        "--answers",
        file.to_str().unwrap(),
        "--set",
        "age=85",
        "--set",
        "newsletter=yes",
        "--json",
    ]);
    std::fs::remove_file(&file).ok();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["content"][0]["text"],
        "Signed up Grace <grace@example.org>, 85, topics [security, events], newsletter yes"
    );
}

#[test]
fn not_a_terminal_fails_naming_the_unanswered_question() {
    let out = run(&[
        "call",
        "provision_database",
        r#"{"name":"orders"}"#,
        "--",
        sterna(),
        "serve",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("unanswered question `pick_region`") && err.contains("field `region`"),
        "{err}"
    );
    assert!(err.contains("--set region=VALUE"), "{err}");
    assert!(
        out.stdout.is_empty(),
        "nothing picked, nothing printed: {}",
        text(&out.stdout)
    );
}

#[test]
fn a_bad_answer_is_a_usage_error_with_the_reason() {
    let out = run(&[
        "call",
        "provision_database",
        r#"{"name":"orders"}"#,
        "--set",
        "region=mars-1",
        "--",
        sterna(),
        "serve",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("\"mars-1\" is not one of: eu-west-1, us-east-1"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn decline_from_the_command_line() {
    let out = run(&[
        "call",
        "sign_up",
        "--set",
        "sign_up=decline",
        "--",
        sterna(),
        "serve",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Not signed up: you declined");
}

#[test]
fn exit_codes_for_flags_transport_and_tool_errors() {
    let out = run(&["call", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--bogus"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&["call", "http://127.0.0.1:9/mcp", "echo", r#"{"text":"x"}"#]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let out = run(&["call", "no_such_tool", "--", sterna(), "serve"]);
    assert!(
        matches!(out.status.code(), Some(1 | 4)),
        "{:?} {}",
        out.status,
        text(&out.stderr)
    );
    for sub in ["connect", "call", "demo", "serve", "keygen", "completions"] {
        let out = run(&[sub, "--help"]);
        assert_eq!(out.status.code(), Some(0), "{sub} --help");
    }
    let out = run(&["completions", "bash"]);
    assert!(out.status.success() && text(&out.stdout).contains("sterna"));
}

#[test]
fn a_nullable_argument_that_does_not_fit_is_a_usage_error() {
    let out = run(&[
        "call",
        "deploy",
        "-a",
        "steps=many",
        "--",
        sterna(),
        "serve",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--arg steps: \"many\" is not a whole number"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&[
        "call",
        "deploy",
        "-a",
        "steps=null",
        "-a",
        "step_ms=1",
        "--",
        sterna(),
        "serve",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Deployed in 5 steps"));
}

#[test]
fn a_set_key_that_matches_no_field_is_named() {
    let out = run(&[
        "call",
        "provision_database",
        r#"{"name":"orders"}"#,
        "--set",
        "regoin=eu-west-1",
        "--",
        sterna(),
        "serve",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("--set regoin=…: question `pick_region` has no field `regoin` (its fields: region); did you mean `region`?"),
        "{err}"
    );
    let out = run(&[
        "call",
        "provision_database",
        r#"{"name":"orders"}"#,
        "--set",
        "pick_region.zone=x",
        "--set",
        "region=eu-west-1",
        "--",
        sterna(),
        "serve",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr)
            .contains("question `pick_region` has no field `zone` (its fields: region)")
    );
}

#[test]
fn an_enum_title_is_taken_as_displayed() {
    // The title is "Europe (Ireland)." and shows as "Europe (Ireland)".
    let out = run(&[
        "call",
        "provision_database",
        r#"{"name":"orders"}"#,
        "--set",
        "region=Europe (Ireland)",
        "--",
        sterna(),
        "serve",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Created orders in eu-west-1");
}
