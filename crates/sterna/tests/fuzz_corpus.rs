//! Replays the committed fuzz corpora (`fuzz/corpus/<target>/*`) and the inputs that once
//! crashed a target (`fuzz/regressions/<target>/*`) through the very functions the
//! cargo-fuzz targets call (`sterna::__fuzz`), on stable, in every `cargo test`.

use std::path::{Path, PathBuf};

fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz")
        .join(kind)
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("a readable entry").path())
        .collect();
    files.sort();
    files
}

fn replay(target: &str) {
    let (_, run) = sterna::__fuzz::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .expect("a known target");
    let corpus = inputs("corpus", target);
    assert!(!corpus.is_empty(), "no corpus committed for {target}");
    let regressions = inputs("regressions", target);
    for path in corpus.iter().chain(&regressions) {
        let data = std::fs::read(path).expect("a readable input");
        eprintln!("{}", path.display());
        run(&data);
    }
    println!(
        "{target}: {} corpus inputs, {} regression inputs",
        corpus.len(),
        regressions.len()
    );
}

#[test]
fn every_target_has_a_replay() {
    let mut names: Vec<&str> = sterna::__fuzz::TARGETS.iter().map(|(n, _)| *n).collect();
    names.sort_unstable();
    let mut want = [
        "form",
        "forwarded",
        "header_value",
        "jsonrpc_client",
        "jsonrpc_server",
        "sse",
        "state_open",
        "uri_template",
    ];
    want.sort_unstable();
    assert_eq!(names, want);
}

#[test]
fn jsonrpc_server() {
    replay("jsonrpc_server");
}

#[test]
fn jsonrpc_client() {
    replay("jsonrpc_client");
}

#[test]
fn sse() {
    replay("sse");
}

#[test]
fn state_open() {
    replay("state_open");
}

#[test]
fn form() {
    replay("form");
}

#[test]
fn header_value() {
    replay("header_value");
}

#[test]
fn uri_template() {
    replay("uri_template");
}

#[test]
fn forwarded() {
    replay("forwarded");
}
