//! `sterna replay FILE [URL | -- COMMAND]`: sends the client's messages of a session
//! recorded with `--record` to a server again, in order, each once the server has sent
//! what it had sent before it in the recording; then compares the answers.
//!
//! What the server issues differs from run to run: the `requestState` and `taskId` a
//! retry or a `tasks/get` echoes, and the ids of the requests a 2025-11-25 server pushes,
//! are taken from the live answers. Over stdio any recording replays; over HTTP the
//! stateless 2026-07-28 ones (a 2025-11-25 session over HTTP needs its session header).

use crate::cli::ReplayArgs;
use crate::exit::CliError;
use crate::replay_io::{Live, Recorded, Subst, awaited, compare, learn, substitute};
use crate::target::Target;
use crate::wire::RECORD_HEADER;
use serde_json::Value;
use std::process::ExitCode;
use std::time::Duration;

fn load(path: &str) -> Result<(String, Vec<Recorded>), CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("replay {path}: {e}")))?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let bad = |m: String| CliError::Usage(format!("replay {path}: {m}"));
    let header: Value = lines
        .next()
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| bad("empty, or not a recording".into()))?;
    if header.get("record").and_then(Value::as_str) != Some(RECORD_HEADER) {
        return Err(bad("not a recording of `sterna --record`".into()));
    }
    let target = header["target"].as_str().unwrap_or_default().to_owned();
    let mut out = Vec::new();
    for (n, line) in lines.enumerate() {
        let v: Value =
            serde_json::from_str(line).map_err(|e| bad(format!("line {}: {e}", n + 2)))?;
        out.push(Recorded {
            send: v["dir"] == "send",
            message: v["message"].clone(),
        });
    }
    Ok((target, out))
}

fn target_of(args: &ReplayArgs, recorded: &str) -> Result<Target, CliError> {
    let mut t = match (args.command.is_empty(), args.positional.get(1)) {
        (false, None) => Target::stdio(args.command.clone()),
        (true, Some(url)) => Target::http(url),
        (true, None) if recorded.contains("://") => Target::http(recorded),
        (true, None) if !recorded.is_empty() => {
            Target::stdio(recorded.split_whitespace().map(str::to_owned).collect())
        }
        _ => {
            return Err(CliError::Usage(
                "replay FILE URL, or replay FILE -- COMMAND (one of them)".into(),
            ));
        }
    };
    if let Target::Stdio { env, .. } = &mut t {
        for kv in &args.envs {
            env.push(crate::target::env_var(kv)?);
        }
    }
    Ok(t)
}

/// Runs `sterna replay`.
pub(crate) async fn run(args: ReplayArgs) -> Result<ExitCode, CliError> {
    let (recorded_target, records) = load(&args.positional[0])?;
    let target = target_of(&args, &recorded_target)?;
    if !args.quiet {
        crate::wire::global().set_shown(true);
    }
    let legacy = records
        .iter()
        .any(|r| r.send && r.message["method"] == "initialize");
    let mut live = Live::start(&target, &args.headers, legacy)?;
    let wait = Duration::from_secs(args.wait);
    let (mut expected, mut subst) = (0usize, Subst::default());
    let mut sent = 0usize;
    for r in &records {
        if !r.send {
            expected += usize::from(awaited(&r.message));
            continue;
        }
        if !live.until(expected, wait).await {
            break;
        }
        learn(&records, &live.received, &mut subst);
        let message = substitute(&r.message, &subst);
        if live.send(message).await? {
            sent += 1;
        }
    }
    let complete = live.until(expected, wait).await;
    let received = std::mem::take(&mut live.received);
    live.close().await;
    let report = compare(&records, &received);
    println!(
        "replayed {sent} client message(s) to {}: {} answer(s) as recorded, {} differ{}",
        target.label(),
        report.same,
        report.differ.len(),
        if complete {
            String::new()
        } else {
            format!(
                "; {} of {expected} awaited message(s) never came (waited {}s)",
                expected.saturating_sub(received.len()),
                args.wait
            )
        }
    );
    for d in &report.differ {
        println!("  {d}");
    }
    Ok(match (complete, report.differ.is_empty()) {
        (false, _) => ExitCode::from(4),
        (true, false) => ExitCode::from(1),
        (true, true) => ExitCode::SUCCESS,
    })
}
