//! `sterna skills` one-shot (`--json` and text) against `sterna serve --skills DIR` over
//! stdio: list, show, load with every file verified and the checks shown; an unknown
//! skill exits 4.

use crate::{run, sterna};
use serde_json::Value;

fn folder() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../conformance/skills").to_owned()
}

fn skills(words: &[&str]) -> std::process::Output {
    let dir = folder();
    let mut args = vec!["skills"];
    args.extend(words);
    args.extend(["--", sterna(), "serve", "--skills", dir.as_str()]);
    run(&args)
}

fn json(words: &[&str]) -> Value {
    let out = skills(words);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

#[test]
fn list_show_and_load_with_json() {
    let listed = json(&["--json"]);
    let uris: Vec<&str> = listed["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://docs/release-notes/SKILL.md",
            "skill://pdf-processing/SKILL.md"
        ]
    );
    assert_eq!(listed["rejected"], serde_json::json!([]));
    let shown = json(&["--json", "show", "skill://pdf-processing/SKILL.md"]);
    assert_eq!(shown["skill"]["frontmatter"]["license"], "Apache-2.0");
    let loaded = json(&["--json", "load", "skill://pdf-processing/SKILL.md"]);
    let files = loaded["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    assert!(files.iter().all(|f| f["verified"] == true), "{loaded}");
    assert!(
        loaded["skillMd"]
            .as_str()
            .unwrap()
            .starts_with("---\nname: pdf-processing")
    );
}

#[test]
fn load_shows_each_check_and_an_unknown_skill_exits_4() {
    let out = skills(&["load", "skill://docs/release-notes/SKILL.md"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains(
            "✓ skill://docs/release-notes/SKILL.md  140 bytes  size ✓ digest ✓ frontmatter ✓"
        ),
        "{text}"
    );
    assert!(
        text.contains("✓ skill://docs/release-notes/guides/STYLE.md  25 bytes"),
        "{text}"
    );
    let out = skills(&["show", "skill://docs/nope/SKILL.md"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("No skill is served at skill://docs/nope/SKILL.md")
    );
    let out = skills(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn connect_lists_and_loads_skills() {
    use crate::screen::{Screen, TALL, show};
    let dir = folder();
    let mut s = Screen::spawn_sized(
        &[
            "connect",
            "--history",
            "/dev/null",
            "--",
            sterna(),
            "serve",
            "--skills",
            &dir,
        ],
        TALL,
        |_| {},
    );
    s.wait_for("sterna-demo>");
    s.send("skills\r");
    s.wait_for("Extract text and tables from PDF files");
    s.send("skills load skill://pdf-processing/SKILL.md\r");
    let screen = s.wait_for("references/FORMS.md  50 bytes");
    show("skills in a session", &screen);
    assert!(screen.contains("size ✓ digest ✓ frontmatter ✓"), "{screen}");
    s.send("quit\r");
    assert_eq!(s.exit_code(), 0);
}
