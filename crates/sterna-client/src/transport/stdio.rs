//! A server started as a child process, spoken to over its stdin/stdout — and started
//! again when era detection killed it (some 2025-11-25 servers exit on a request they do
//! not know, such as the `server/discover` probe).

use super::stream::StreamTransport;
use super::{NotificationSink, Outgoing, Transport};
use crate::error::TransportError;
use futures_util::future::BoxFuture;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A server started as a child process, spoken to over its stdin/stdout; its stderr is
/// logged (at `info`, target `sterna_client::server_stderr`), never read as an error.
pub struct StdioTransport {
    recipe: Recipe,
    running: tokio::sync::RwLock<Running>,
}

struct Running {
    stream: Arc<StreamTransport>,
    child: Option<Child>,
}

/// What it takes to start the command again: its program, arguments, environment
/// changes and directory (settings beyond these, such as `env_clear`, are not kept).
#[derive(Debug, Clone)]
struct Recipe {
    program: OsString,
    args: Vec<OsString>,
    envs: Vec<(OsString, Option<OsString>)>,
    dir: Option<PathBuf>,
}

impl Recipe {
    fn of(command: &Command) -> Self {
        let std = command.as_std();
        Self {
            program: std.get_program().to_owned(),
            args: std.get_args().map(ToOwned::to_owned).collect(),
            envs: std
                .get_envs()
                .map(|(k, v)| (k.to_owned(), v.map(ToOwned::to_owned)))
                .collect(),
            dir: std.get_current_dir().map(ToOwned::to_owned),
        }
    }

    fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.args);
        for (k, v) in &self.envs {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        if let Some(d) = &self.dir {
            c.current_dir(d);
        }
        c
    }
}

impl std::fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioTransport")
            .field("program", &self.recipe.program)
            .finish()
    }
}

fn start(mut command: Command) -> std::io::Result<Running> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| std::io::Error::other("no stdin"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| std::io::Error::other("no stdout"))?;
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::info!(target: "sterna_client::server_stderr", "{line}");
            }
        });
    }
    Ok(Running {
        stream: Arc::new(StreamTransport::new(stdout, stdin)),
        child: Some(child),
    })
}

impl StdioTransport {
    /// Starts `command` with piped stdio.
    pub fn spawn(command: Command) -> std::io::Result<Self> {
        let recipe = Recipe::of(&command);
        Ok(Self {
            running: tokio::sync::RwLock::new(start(command)?),
            recipe,
        })
    }

    /// The byte stream to the current child.
    pub(crate) async fn stream(&self) -> Arc<StreamTransport> {
        self.running.read().await.stream.clone()
    }

    /// Ends the current child (it may already be gone) and starts the command again.
    pub(crate) async fn restart(&self) -> std::io::Result<Arc<StreamTransport>> {
        let mut running = self.running.write().await;
        running.stream.shutdown().await;
        if let Some(mut old) = running.child.take() {
            let _ = old.start_kill();
            let _ = tokio::time::timeout(Duration::from_secs(2), old.wait()).await;
        }
        *running = start(self.recipe.command())?;
        Ok(running.stream.clone())
    }
}

impl Transport for StdioTransport {
    fn request(
        &self,
        req: Outgoing,
        sink: NotificationSink,
    ) -> BoxFuture<'_, Result<Vec<u8>, TransportError>> {
        Box::pin(async move { self.stream().await.request(req, sink).await })
    }

    /// Closes the server's stdin, waits up to 2 s, then sends SIGTERM, waits 2 s more,
    /// then kills it.
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let mut running = self.running.write().await;
            let Some(mut child) = running.child.take() else {
                return;
            };
            running.stream.shutdown().await;
            if tokio::time::timeout(Duration::from_secs(2), child.wait())
                .await
                .is_ok()
            {
                return;
            }
            #[cfg(unix)]
            if let Some(pid) = child.id() {
                use nix::sys::signal::{Signal, kill};
                use nix::unistd::Pid;
                let _ = kill(Pid::from_raw(pid as i32), Signal::SIGTERM);
                if tokio::time::timeout(Duration::from_secs(2), child.wait())
                    .await
                    .is_ok()
                {
                    return;
                }
            }
            let _ = child.kill().await;
        })
    }
}
