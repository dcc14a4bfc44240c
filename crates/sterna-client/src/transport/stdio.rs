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

/// The target of the events that carry a stdio server's stderr, one line each (at `info`,
/// field `line`).
pub const STDERR_TARGET: &str = "sterna_client::server_stderr";

/// The target of the event logged when a stdio server's process exits (at `info`, fields
/// `status`, and `code` when it exited rather than being killed by a signal).
pub const EXIT_TARGET: &str = "sterna_client::server_exit";

/// A server started as a child process, spoken to over its stdin/stdout; its stderr is
/// logged (at `info`, target [`STDERR_TARGET`]), never read as an error, and its exit too
/// ([`EXIT_TARGET`]). It runs in a process group of its own (Unix), so a Ctrl-C at the
/// terminal reaches the client, which decides what to do (cancel a request, close the
/// server), not the server.
pub struct StdioTransport {
    recipe: Recipe,
    running: tokio::sync::RwLock<Running>,
}

struct Running {
    stream: Arc<StreamTransport>,
    child: Option<Watched>,
}

/// The child process, waited for by a task of its own so that its exit is seen (and
/// logged) when it happens. Dropping this kills the child.
struct Watched {
    pid: Option<u32>,
    kill: Option<tokio::sync::oneshot::Sender<()>>,
    exited: tokio::sync::watch::Receiver<bool>,
}

impl Watched {
    fn start(mut child: Child) -> Self {
        let pid = child.id();
        let (kill, killed) = tokio::sync::oneshot::channel::<()>();
        let (tx, exited) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            let status = tokio::select! {
                status = child.wait() => status,
                // Asked to, or the transport is gone.
                _ = killed => {
                    let _ = child.start_kill();
                    child.wait().await
                }
            };
            if let Ok(status) = status {
                tracing::info!(target: EXIT_TARGET, %status, code = status.code(), "the server process exited");
            }
            let _ = tx.send(true);
        });
        Self {
            pid,
            kill: Some(kill),
            exited,
        }
    }

    /// Waits up to `wait` for the process to exit; whether it did.
    async fn wait(&mut self, wait: Duration) -> bool {
        tokio::time::timeout(wait, self.exited.wait_for(|e| *e))
            .await
            .is_ok()
    }

    /// Kills the process and waits (2 s at most) for it to go.
    async fn kill(&mut self) {
        if let Some(k) = self.kill.take() {
            let _ = k.send(());
        }
        self.wait(Duration::from_secs(2)).await;
    }
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
    #[cfg(unix)]
    command.process_group(0);
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
                tracing::info!(target: STDERR_TARGET, line = %line, "{line}");
            }
        });
    }
    Ok(Running {
        stream: Arc::new(StreamTransport::new(stdout, stdin)),
        child: Some(Watched::start(child)),
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
            old.kill().await;
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
            if child.wait(Duration::from_secs(2)).await {
                return;
            }
            #[cfg(unix)]
            if let Some(pid) = child.pid {
                use nix::sys::signal::{Signal, kill};
                use nix::unistd::Pid;
                let _ = kill(Pid::from_raw(pid as i32), Signal::SIGTERM);
                if child.wait(Duration::from_secs(2)).await {
                    return;
                }
            }
            child.kill().await;
        })
    }
}
