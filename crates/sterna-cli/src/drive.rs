//! Driving a call through its rounds with the terminal's answers, its progress bar and
//! log messages; Ctrl-C cancels it (the server is told) and cleans the screen.

use crate::exit::CliError;
use crate::target::Conn;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use sterna::client::{Call, CallResult, ClientError, Era, GaveUp, RunningTask, Step};

/// The most rounds one call may take.
const MAX_ROUNDS: u32 = 10;

/// How much of the exchange to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trace {
    /// Each round's questions, on stderr.
    Rounds,
    /// Every leg, on stdout (the demo).
    Legs,
}

fn token() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("sterna-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Resolves at the next Ctrl-C (SIGINT; the terminal is not in raw mode then). Never, if
/// the signal cannot be caught.
pub(crate) async fn interrupted() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Runs `call` to completion: each round's questions answered one by one (given answers,
/// the terminal), then retried with the state echoed. Ctrl-C drops it, which cancels it
/// (`notifications/cancelled` for a request, `tasks/cancel` for a task; over HTTP in
/// 2026-07-28 the request's stream closes), and a second Ctrl-C meanwhile exits.
pub(crate) async fn run<T: CallResult>(
    conn: &Conn,
    call: Call<T>,
    trace: Trace,
) -> Result<T, CliError> {
    let token = token();
    let mut call = call.meta("progressToken", token.clone());
    if let Some(level) = &conn.log_level {
        call = call.meta("io.modelcontextprotocol/logLevel", level.clone());
    }
    let tasked = AtomicBool::new(false);
    let mut running = Some(Box::pin(rounds(conn, call, trace, &tasked)));
    let result = tokio::select! {
        r = running.as_mut().expect("the call runs") => r,
        () = interrupted() => {
            // The bars go first, then the call (dropping it sends the cancellation, which
            // `--wire` shows): nothing is drawn over what comes after.
            conn.notices.clear();
            conn.notices.done(&token);
            running = None;
            Err(CliError::Interrupted(String::new()))
        }
    };
    drop(running);
    let result = match result {
        Err(CliError::Interrupted(_)) => {
            // Let the cancellation leave (a task's tasks/cancel, a 2025-11-25 HTTP
            // notifications/cancelled are sent in the background) before going on.
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(300)) => {}
                () = interrupted() => std::process::exit(130),
            }
            Err(CliError::Interrupted(
                how_cancelled(conn, tasked.load(Ordering::Relaxed)).await,
            ))
        }
        other => {
            conn.notices.done(&token);
            other
        }
    };
    // Let the drawing thread take the bar down before anything else is printed.
    tokio::time::sleep(Duration::from_millis(20)).await;
    result
}

/// How the server was told that the call is cancelled.
async fn how_cancelled(conn: &Conn, tasked: bool) -> String {
    if tasked {
        return "the call was cancelled (tasks/cancel sent for its task)".into();
    }
    let legacy = matches!(conn.client.era().await, Ok(Era::Legacy { .. }));
    match (&conn.target, legacy) {
        (crate::target::Target::Http { .. }, false) => {
            "the call was cancelled (its HTTP stream closed: how 2026-07-28 cancels over HTTP)"
                .into()
        }
        _ => "the call was cancelled (notifications/cancelled sent)".into(),
    }
}

/// Follows a task to its end: its status on a spinner (see `notify.rs`), its questions
/// answered from the terminal; Ctrl-C drops the call, which cancels the task
/// (`tasks/cancel`).
async fn follow<T: CallResult>(
    conn: &Conn,
    task: RunningTask<T>,
    trace: Trace,
) -> Result<T, CliError> {
    if trace == Trace::Legs {
        println!(
            "← task ({}): the server runs the call; polling tasks/get",
            task.status()
        );
    }
    conn.client
        .follow_with(task, |requests| async move {
            conn.answerer.round(&requests).await
        })
        .await
}

async fn rounds<T: CallResult>(
    conn: &Conn,
    call: Call<T>,
    trace: Trace,
    tasked: &AtomicBool,
) -> Result<T, CliError> {
    let mut step = conn.client.start(call).await?;
    let mut state_only = 0u32;
    loop {
        let pending = match step {
            Step::Complete(t) => return Ok(t),
            Step::Task(task) => {
                tasked.store(true, Ordering::Relaxed);
                return follow(conn, task, trace).await;
            }
            Step::InputRequired(p) => p,
        };
        if pending.round() >= MAX_ROUNDS {
            return Err(CliError::Client(ClientError::GaveUp(GaveUp::Rounds(
                pending.round(),
            ))));
        }
        let keys: Vec<&String> = pending.requests().keys().collect();
        match trace {
            Trace::Rounds => conn
                .ui
                .note(format!("round {}: questions {keys:?}", pending.round())),
            Trace::Legs => println!(
                "← input_required (round {}): questions {keys:?}, requestState {}",
                pending.round(),
                if pending.has_state() {
                    "sealed, echoed as received"
                } else {
                    "none"
                }
            ),
        }
        let answers = if pending.requests().is_empty() {
            state_only += 1;
            tokio::time::sleep(Duration::from_millis(50 << state_only.min(4))).await;
            Default::default()
        } else {
            state_only = 0;
            conn.answerer.round(pending.requests()).await?
        };
        if trace == Trace::Legs {
            println!(
                "→ {} {} (retry: new id, {} answer(s), the state)",
                pending.method(),
                pending.target(),
                answers.len()
            );
        }
        step = conn.client.resume(pending, answers).await?;
    }
}
