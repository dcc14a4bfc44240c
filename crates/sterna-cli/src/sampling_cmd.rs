//! `--sampling-cmd`: a shell command answers sampling requests. It gets the request
//! (`CreateMessageRequestParams` JSON) on stdin and prints a `CreateMessageResult` (JSON)
//! or plain text on stdout.

use crate::exit::CliError;
use std::process::Stdio;
use std::time::Duration;
use sterna::types::sampling::{CreateMessageRequestParams, CreateMessageResult};
use tokio::io::AsyncWriteExt;

/// How long the command may take.
const LIMIT: Duration = Duration::from_secs(300);

/// Runs `cmd` (with `sh -c`) on the request.
pub(crate) async fn run(
    cmd: &str,
    req: &CreateMessageRequestParams,
) -> Result<CreateMessageResult, CliError> {
    let fail = |m: String| CliError::Refused(format!("--sampling-cmd: {m}"));
    let mut child = tokio::process::Command::new("sh")
        .args(["-c", cmd])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| fail(format!("cannot start: {e}")))?;
    let input = serde_json::to_vec(req).map_err(|e| fail(e.to_string()))?;
    if let Some(mut stdin) = child.stdin.take() {
        match stdin.write_all(&input).await {
            // A command that does not read the request (`echo …`) may exit first: its
            // answer is still on stdout.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            r => r.map_err(|e| fail(format!("writing the request: {e}")))?,
        }
    }
    let out = tokio::time::timeout(LIMIT, child.wait_with_output())
        .await
        .map_err(|_| fail(format!("no answer within {LIMIT:?}")))?
        .map_err(|e| fail(e.to_string()))?;
    if !out.status.success() {
        return Err(fail(format!("exited with {}", out.status)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    if let Ok(r) = serde_json::from_str::<CreateMessageResult>(&text) {
        return Ok(r);
    }
    Ok(crate::widgets::sampling::text_result(
        text.trim_end(),
        "sampling-cmd",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `echo` never reads its stdin: with a request larger than a pipe's buffer, writing
    /// it always meets a closed pipe, and the answer on stdout still counts.
    #[tokio::test]
    async fn a_command_that_ignores_the_request_still_answers() {
        let big = CreateMessageRequestParams::user_text("x".repeat(1 << 20), 10);
        let r = run("echo The gist.", &big).await.expect("answered");
        assert_eq!(r.content.text(), "The gist.");
    }
}
