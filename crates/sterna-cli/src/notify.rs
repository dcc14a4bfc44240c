//! The server's notifications, shown as they arrive: progress as bars, log messages with
//! their level, `subscriptions/listen` events. A thread of its own draws them, so the
//! transport never waits on the terminal.

use crate::ui::Ui;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};

enum Event {
    Message(Vec<u8>),
    Done(String),
    /// Every bar goes (a call was interrupted); then the sender hears it.
    Clear(mpsc::Sender<()>),
}

/// Where notifications go. Cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Notices {
    tx: mpsc::Sender<Event>,
    /// Set when a list changed (the session refreshes its completions).
    pub(crate) stale: Arc<AtomicBool>,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Event")
    }
}

impl Notices {
    /// Starts the drawing thread.
    pub(crate) fn start(ui: Ui) -> Self {
        let (tx, rx) = mpsc::channel();
        let stale = Arc::new(AtomicBool::new(false));
        let s = stale.clone();
        std::thread::Builder::new()
            .name("sterna-notices".into())
            .spawn(move || draw(ui, rx, s))
            .expect("a thread starts");
        Self { tx, stale }
    }

    /// The sink to give the client builder.
    pub(crate) fn sink(&self) -> impl Fn(&[u8]) + Send + Sync + 'static {
        let tx = self.tx.clone();
        move |m: &[u8]| {
            let _ = tx.send(Event::Message(m.to_vec()));
        }
    }

    /// The call with this progress token is over: its bar goes, and progress that still
    /// arrives for it is not drawn.
    pub(crate) fn done(&self, token: &str) {
        let _ = self.tx.send(Event::Done(token.to_owned()));
    }

    /// Takes every bar and spinner down (a call was interrupted: no last status comes),
    /// and waits (a moment at most) until the drawing thread has.
    pub(crate) fn clear(&self) {
        let (ack, done) = mpsc::channel();
        if self.tx.send(Event::Clear(ack)).is_ok() {
            let _ = done.recv_timeout(std::time::Duration::from_millis(200));
        }
    }
}

fn token_key(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn draw(ui: Ui, rx: mpsc::Receiver<Event>, stale: Arc<AtomicBool>) {
    let mut bars: HashMap<String, ProgressBar> = HashMap::new();
    let mut finished: HashSet<String> = HashSet::new();
    while let Ok(event) = rx.recv() {
        let raw = match event {
            Event::Done(token) => {
                if let Some(bar) = bars.remove(&token) {
                    let line = format!("  ✓ {} {}", bar.message(), position(&bar));
                    bar.finish_and_clear();
                    ui.note(line.trim_end());
                }
                finished.insert(token);
                continue;
            }
            Event::Clear(ack) => {
                for (_, bar) in bars.drain() {
                    bar.finish_and_clear();
                }
                let _ = ui.bars().clear();
                let _ = ack.send(());
                continue;
            }
            Event::Message(raw) => raw,
        };
        let Ok(msg) = serde_json::from_slice::<Value>(&raw) else {
            continue;
        };
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        match method {
            "notifications/progress" => {
                let token = params.get("progressToken").map(token_key);
                if !token.is_some_and(|t| finished.contains(&t)) {
                    progress(&ui, &mut bars, &params);
                }
            }
            "notifications/message" => log(&ui, &params),
            "notifications/subscriptions/acknowledged" => {
                ui.note(format!(
                    "  ⟳ listening: {}",
                    params.get("notifications").unwrap_or(&Value::Null)
                ));
            }
            "notifications/tools/list_changed"
            | "notifications/prompts/list_changed"
            | "notifications/resources/list_changed" => {
                stale.store(true, Ordering::Relaxed);
                let what = method
                    .trim_start_matches("notifications/")
                    .trim_end_matches("/list_changed");
                ui.note(format!("  ⟳ the {what} list changed"));
            }
            "notifications/resources/updated" => {
                let uri = params.get("uri").and_then(Value::as_str).unwrap_or("?");
                ui.note(format!("  ⟳ resource updated: {uri}"));
            }
            "notifications/cancelled" => ui.note(format!("  the server cancelled: {params}")),
            "notifications/tasks" => task(&ui, &mut bars, &params),
            other => ui.note(format!("  notification {other}: {params}")),
        }
    }
}

fn position(bar: &ProgressBar) -> String {
    match bar.length() {
        Some(len) => format!("{}/{len}", bar.position()),
        None => String::new(),
    }
}

fn progress(ui: &Ui, bars: &mut HashMap<String, ProgressBar>, p: &Value) {
    let Some(token) = p.get("progressToken").map(token_key) else {
        return;
    };
    let done = p.get("progress").and_then(Value::as_f64).unwrap_or(0.0);
    let total = p.get("total").and_then(Value::as_f64);
    let bar = bars.entry(token).or_insert_with(|| {
        let bar = match total {
            Some(t) => ProgressBar::new(t.max(0.0).round() as u64).with_style(
                ProgressStyle::with_template("  {spinner} {msg} [{bar:30}] {pos}/{len}")
                    .expect("a valid template")
                    .progress_chars("#>-"),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("  {spinner} {msg} {pos}").expect("a valid template"),
            ),
        };
        ui.bars().add(bar)
    });
    if let Some(t) = total {
        bar.set_length(t.max(0.0).round() as u64);
    }
    bar.set_position(done.max(0.0).round() as u64);
    if let Some(m) = p.get("message").and_then(Value::as_str) {
        bar.set_message(m.to_owned());
    }
    bar.tick();
}

/// A task's status, on a spinner of its own while it runs; a line when it ends.
fn task(ui: &Ui, bars: &mut HashMap<String, ProgressBar>, p: &Value) {
    let id = p.get("taskId").and_then(Value::as_str).unwrap_or("?");
    // The id is a bearer handle: show only its start.
    let short: String = id.chars().take(6).collect();
    let status = p.get("status").and_then(Value::as_str).unwrap_or("?");
    let note = p
        .get("statusMessage")
        .and_then(Value::as_str)
        .map(|m| format!(" — {m}"))
        .unwrap_or_default();
    let line = format!("task {short}…: {status}{note}");
    let key = format!("task:{id}");
    if matches!(status, "completed" | "failed" | "cancelled") {
        if let Some(bar) = bars.remove(&key) {
            bar.finish_and_clear();
        }
        ui.note(format!("  ✓ {line}"));
        return;
    }
    let bar = bars.entry(key).or_insert_with(|| {
        let bar = ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("  {spinner} {msg} ({elapsed})")
                .expect("a valid template"),
        );
        // Into the bars first: ticking before would draw on stderr directly, a line
        // nothing clears.
        ui.bars().add(bar)
    });
    bar.set_message(line);
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
}

fn log(ui: &Ui, p: &Value) {
    let level = p.get("level").and_then(Value::as_str).unwrap_or("info");
    let logger = p
        .get("logger")
        .and_then(Value::as_str)
        .map(|l| format!("{l}: "))
        .unwrap_or_default();
    let data = match p.get("data") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    ui.note(format!("  [{level}] {logger}{data}"));
}
