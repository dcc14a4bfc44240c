//! The terminal: whether we may ask, one widget at a time, and the progress bars.

use indicatif::{MultiProgress, ProgressDrawTarget};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The terminal UI of this process, once a command made one (lines from logs and the wire
/// go through it, above the progress bars).
static CURRENT: OnceLock<Ui> = OnceLock::new();

/// Prints a line on stderr, above the progress bars when there are some.
pub(crate) fn note_line(line: &str) {
    match CURRENT.get() {
        Some(ui) => ui.note(line),
        None => eprintln!("{line}"),
    }
}

/// Shared by every part that writes to the terminal. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Ui {
    inner: Arc<Inner>,
}

struct Inner {
    interactive: bool,
    /// Held while a widget owns the terminal (questions of one round come one by one).
    term: Mutex<()>,
    bars: MultiProgress,
    at_prompt: AtomicBool,
}

impl std::fmt::Debug for Ui {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ui")
            .field("interactive", &self.inner.interactive)
            .finish()
    }
}

impl Ui {
    /// A terminal UI; `interactive` only when stdin and stderr are terminals and the user
    /// did not say `--no-input`.
    pub(crate) fn new(no_input: bool) -> Self {
        let interactive =
            !no_input && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        let bars = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let ui = Self {
            inner: Arc::new(Inner {
                interactive,
                term: Mutex::new(()),
                bars,
                at_prompt: AtomicBool::new(false),
            }),
        };
        let _ = CURRENT.set(ui.clone());
        ui
    }

    /// Whether questions may be asked in the terminal.
    pub(crate) fn interactive(&self) -> bool {
        self.inner.interactive
    }

    /// The progress bars (hidden when stderr is not a terminal).
    pub(crate) fn bars(&self) -> &MultiProgress {
        &self.inner.bars
    }

    /// Runs a blocking widget with the terminal to itself: progress bars are hidden
    /// meanwhile, other widgets wait.
    pub(crate) async fn exclusive<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, crate::exit::CliError> {
        let ui = self.clone();
        tokio::task::spawn_blocking(move || {
            let _term = ui.inner.term.lock().unwrap_or_else(|p| p.into_inner());
            ui.inner.bars.suspend(f)
        })
        .await
        .map_err(|e| crate::exit::CliError::Local(format!("the terminal task failed: {e}")))
    }

    /// Whether the session's prompt is being edited now.
    pub(crate) fn at_prompt(&self, yes: bool) {
        self.inner.at_prompt.store(yes, Ordering::SeqCst);
    }

    /// Prints a line on stderr above the progress bars (or over the session's prompt).
    pub(crate) fn note(&self, line: impl AsRef<str>) {
        if self.inner.at_prompt.load(Ordering::SeqCst) {
            // The line being edited is cleared; it is drawn again at the next key.
            eprint!("\r\x1b[2K{}\n", line.as_ref());
            return;
        }
        if self.inner.bars.is_hidden() {
            eprintln!("{}", line.as_ref());
        } else {
            let _ = self.inner.bars.println(line.as_ref());
        }
    }
}

/// `text` dimmed, when stderr is a terminal.
pub(crate) fn dim(text: &str) -> String {
    if std::io::stderr().is_terminal() {
        format!("\x1b[2m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}
