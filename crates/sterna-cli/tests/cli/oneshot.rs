//! One-shot commands for scripts (`tools`, `prompts`, `resources`, `templates`, `read`,
//! `get`) with `--json`, over HTTP and stdio; servers named in an `mcpServers` config file
//! (`--config`, `--server`); `--env` for stdio servers.

use crate::peers::DemoHttp;
use crate::screen::{Screen, TALL, show};
use crate::{run, sterna};
use serde_json::Value;
use std::process::Output;

fn json(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

#[test]
fn tools_json_in_a_terminal() {
    let mut s = Screen::spawn_sized(&["tools", "--json", "--", sterna(), "serve"], TALL, |_| {});
    let screen = s.wait_for("\"name\": \"sign_up\"");
    show("sterna tools --json", &screen);
    assert!(screen.contains("\"inputSchema\": {"), "{screen}");
    assert!(screen.contains("\"tools\": ["), "{screen}");
    assert_eq!(s.exit_code(), 0);
}

#[test]
fn one_shots_print_json_over_http_and_stdio() {
    let server = DemoHttp::start();
    let stdio = ["--", sterna(), "serve"];
    for target in [vec![server.url.as_str()], stdio.to_vec()] {
        let with = |cmd: &[&str]| {
            let (url, rest): (Vec<&str>, Vec<&str>) = if target.len() == 1 {
                (target.clone(), Vec::new())
            } else {
                (Vec::new(), target.clone())
            };
            let mut args = vec![cmd[0]];
            args.extend(url);
            args.extend(&cmd[1..]);
            args.extend(rest);
            json(&run(&args))
        };
        let tools = with(&["tools", "--json"]);
        let names: Vec<&str> = tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"provision_database"), "{names:?}");
        let deploy = tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "deploy")
            .unwrap();
        assert_eq!(
            deploy["inputSchema"]["properties"]["steps"]["type"][0],
            "integer"
        );
        assert_eq!(with(&["prompts", "--json"])["prompts"][0]["name"], "greet");
        assert_eq!(
            with(&["resources", "--json"])["resources"][0]["uri"],
            "sterna://readme"
        );
        assert_eq!(
            with(&["templates", "--json"])["resourceTemplates"][0]["uriTemplate"],
            "sterna://notes/{topic}"
        );
        let read = with(&["read", "sterna://notes/rust", "--json"]);
        assert_eq!(read["contents"][0]["text"], "Notes on rust: nothing yet.");
        let got = with(&["get", "greet", "-a", "name=Ada", "--json"]);
        assert!(
            got["messages"][0]["content"]["text"]
                .as_str()
                .unwrap()
                .contains("Ada")
        );
    }
}

/// `sterna://readme` says what the demo server offers: every tool `tools/list` lists.
#[test]
fn the_readme_names_every_tool() {
    let stdio = ["--", sterna(), "serve"];
    let mut args = vec!["tools", "--json"];
    args.extend(stdio);
    let tools = json(&run(&args));
    let mut args = vec!["read", "sterna://readme", "--json"];
    args.extend(stdio);
    let readme = json(&run(&args));
    let text = readme["contents"][0]["text"].as_str().unwrap();
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    let missing: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .filter(|name| !words.contains(name))
        .collect();
    assert!(
        missing.is_empty(),
        "the readme leaves out {missing:?}:\n{text}"
    );
}

#[test]
fn one_shot_errors_keep_the_exit_codes() {
    let out = run(&["read", "sterna://nope", "--", sterna(), "serve"]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["tools", "not-a-url"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"not-a-url\" is not a URL"));
    let out = run(&["tools", "--env", "K=V", "http://127.0.0.1:9/mcp"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A config file naming the demo server twice: on stdio (with an environment variable
/// that the server prints through its log) and over HTTP.
fn config(url: &str) -> std::path::PathBuf {
    let file = std::env::temp_dir().join(format!("sterna-mcp-{}.json", std::process::id()));
    let text = serde_json::json!({"mcpServers": {
        "demo": {"command": sterna(), "args": ["serve"], "env": {"STERNA_LOG": "warn"}},
        "web": {"type": "http", "url": url}
    }});
    std::fs::write(&file, text.to_string()).unwrap();
    file
}

#[test]
fn servers_by_name_from_the_config_file() {
    let server = DemoHttp::start();
    let file = config(&server.url);
    let path = file.to_str().unwrap();
    let mut s = Screen::spawn(&["tools", "--config", path, "--server", "demo"]);
    let screen = s.wait_for("sign_up — Signs you up");
    show("sterna tools --server demo", &screen);
    assert!(
        screen.contains("server│") && screen.contains("WARN"),
        "the config's env reached the server:\n{screen}"
    );
    assert_eq!(s.exit_code(), 0);
    let mut s = Screen::spawn_with(
        &["connect", "--history", "/dev/null", "--server", "web"],
        |c| {
            c.env("STERNA_CONFIG", &file);
        },
    );
    let screen = s.wait_for("sterna-demo>");
    show("sterna connect --server web", &screen);
    assert!(screen.contains(&format!("({})", server.url)), "{screen}");
    s.send("quit\r");
    assert_eq!(s.exit_code(), 0);
    let out = run(&["tools", "--config", path, "--server", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no server \"nope\"") && err.contains("(it has: demo, web)"),
        "{err}"
    );
    let _ = std::fs::remove_file(&file);
}
