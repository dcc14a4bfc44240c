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

/// The events of the stdio transport's two targets (its server's stderr lines and its
/// exit), in the order they were logged.
#[derive(Clone, Default)]
struct ServerEvents(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for ServerEvents {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        use sterna::client::transport::{EXIT_TARGET, STDERR_TARGET};
        struct Fields(Vec<String>);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                self.0.push(format!("{}={v:?}", f.name()));
            }
        }
        let target = event.metadata().target();
        if target == STDERR_TARGET || target == EXIT_TARGET {
            let mut fields = Fields(Vec::new());
            event.record(&mut fields);
            let short = if target == EXIT_TARGET {
                "exit"
            } else {
                "stderr"
            };
            let line = format!("{short}: {}", fields.0.join(" "));
            self.0.lock().unwrap().push(line);
        }
    }
}

/// A server that writes to its stderr and exits before answering: when the call fails,
/// the stderr line and the exit (with its status) have been logged already, in that order,
/// so whoever explains the failure right away (the CLI does) can name the exit status.
#[tokio::test]
async fn a_server_that_exits_before_answering_has_its_stderr_and_exit_logged_when_the_call_fails() {
    use tracing_subscriber::layer::SubscriberExt;
    let events = ServerEvents::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(events.clone()));
    for attempt in 0..10 {
        events.0.lock().unwrap().clear();
        let mut cmd = tokio::process::Command::new("sh");
        cmd.args(["-c", "echo 'fatal: no config' >&2; exit 3"]);
        let client = Client::builder("exit-test", "0")
            .probe_timeout(Duration::from_secs(5))
            .spawn_stdio(cmd)
            .unwrap();
        let failed = client.call_tool("greet", json!({})).await;
        let seen = events.0.lock().unwrap().clone();
        assert!(failed.is_err(), "attempt {attempt}: {failed:?}");
        let last = seen
            .iter()
            .rposition(|e| e.starts_with("exit: "))
            .unwrap_or_else(|| {
                panic!("attempt {attempt}: no exit logged before the call failed: {seen:?}")
            });
        assert!(seen[last].contains("code=3"), "attempt {attempt}: {seen:?}");
        assert!(
            seen[..last].iter().any(|e| e.contains("fatal: no config")),
            "attempt {attempt}: the stderr line before the exit: {seen:?}"
        );
        client.close().await;
    }
}
