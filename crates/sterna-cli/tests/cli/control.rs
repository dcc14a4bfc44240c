//! Ctrl-C during a long call: the call is cancelled (the server is told), the progress
//! bar goes, `connect` returns to its prompt with the server still there, and a second
//! Ctrl-C quits; `call` exits 130.

use crate::screen::{Screen, show};
use crate::sterna;

const CTRL_C: &str = "\x03";
const LONG: &str = r#"{"steps":40,"step_ms":250}"#;

#[test]
fn ctrl_c_cancels_a_call_and_returns_to_the_prompt() {
    let mut s = Screen::spawn_sized(
        &["connect", "--history", "/dev/null", "--", sterna(), "serve"],
        crate::screen::TALL,
        |_| {},
    );
    s.wait_for("sterna-demo>");
    s.send("wire on\r");
    s.wait_for("wire shown");
    s.send(&format!("call deploy {LONG}\r"));
    s.wait_for("deploying [");
    s.send(CTRL_C);
    let screen = s.wait_for("interrupted: the call was cancelled (notifications/cancelled sent)");
    show("Ctrl-C on a long call", &screen);
    assert!(
        screen.contains("notifications/cancelled  [cancels #"),
        "{screen}"
    );
    let screen = s.wait_for("sterna-demo>");
    assert!(
        !screen.contains("deploying ["),
        "the bar is gone:\n{screen}"
    );
    // The server was not interrupted: the session goes on.
    s.send("wire off\r");
    s.send("call echo {\"text\":\"still here\"}\r");
    s.wait_for("still here");
    s.send(CTRL_C);
    s.wait_for("(Ctrl-C again, or Ctrl-D, quits)");
    s.send(CTRL_C);
    assert_eq!(s.exit_code(), 0);
}

#[test]
fn ctrl_c_ends_a_one_shot_call_with_130() {
    let mut s = crate::screen::Screen::spawn_sized(
        &["call", "--wire", "deploy", LONG, "--", sterna(), "serve"],
        crate::screen::TALL,
        |_| {},
    );
    s.wait_for("deploying [");
    s.send(CTRL_C);
    let screen = s.wait_for("sterna: interrupted: the call was cancelled");
    show("Ctrl-C on sterna call", &screen);
    assert!(
        screen.contains("→") && screen.contains("notifications/cancelled"),
        "{screen}"
    );
    assert_eq!(s.exit_code(), 130);
}

#[test]
fn ctrl_c_over_http_closes_the_stream() {
    let server = crate::peers::DemoHttp::start();
    let mut s = Screen::spawn(&["call", &server.url, "deploy", LONG]);
    s.wait_for("deploying [");
    s.send(CTRL_C);
    let screen = s.wait_for("interrupted: the call was cancelled (its HTTP stream closed");
    show("Ctrl-C over HTTP", &screen);
    assert_eq!(s.exit_code(), 130);
}

#[test]
fn ctrl_c_cancels_a_task_with_tasks_cancel() {
    let mut s = Screen::spawn_sized(
        &[
            "call",
            "--wire",
            "reindex",
            r#"{"seconds":60}"#,
            "--",
            sterna(),
            "serve",
        ],
        crate::screen::TALL,
        |_| {},
    );
    s.wait_for("[task created]");
    s.wait_for("tasks/get task");
    s.send(CTRL_C);
    let screen = s.wait_for("interrupted: the call was cancelled (tasks/cancel sent for its task)");
    show("Ctrl-C on a task", &screen);
    assert!(screen.contains("tasks/cancel task"), "{screen}");
    assert!(
        !screen.contains("(0s)"),
        "no spinner is left behind:\n{screen}"
    );
    assert_eq!(s.exit_code(), 130);
}

#[test]
fn ctrl_c_in_a_2025_session_over_http_sends_notifications_cancelled() {
    let server = crate::peers::DemoHttp::start();
    let mut s = Screen::spawn_sized(
        &[
            "call",
            "--wire",
            "--era",
            "legacy",
            &server.url,
            "deploy",
            LONG,
        ],
        crate::screen::TALL,
        |_| {},
    );
    s.wait_for("deploying [");
    s.send(CTRL_C);
    let screen = s.wait_for("interrupted: the call was cancelled (notifications/cancelled sent)");
    show("Ctrl-C in a 2025-11-25 session over HTTP", &screen);
    assert_eq!(s.exit_code(), 130);
    assert!(
        screen.contains("notifications/cancelled  [cancels #"),
        "{screen}"
    );
}
