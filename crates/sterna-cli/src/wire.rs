//! The wire, visible: every JSON-RPC message the client sends (`→`) or receives (`←`),
//! with the time since the start and, for responses, since their request; MRTR rounds,
//! tasks and the pushed requests of 2025-11-25 servers labelled; secrets redacted. Shown
//! on stderr (`--wire`, or `wire on` in a session) and/or written as JSON Lines
//! (`--record FILE`), which `sterna replay` sends again.

use crate::redact::redact;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// The longest message shown in full on the terminal (the record keeps everything).
const SHOWN: usize = 1500;

/// The first line of a record file.
pub(crate) const RECORD_HEADER: &str = "sterna-record";

/// The view of this process.
pub(crate) fn global() -> &'static Arc<Wire> {
    static GLOBAL: OnceLock<Arc<Wire>> = OnceLock::new();
    GLOBAL.get_or_init(|| Arc::new(Wire::new(false)))
}

/// The wire view. One per process.
#[derive(Debug)]
pub(crate) struct Wire {
    show: AtomicBool,
    record: Mutex<Option<std::io::BufWriter<std::fs::File>>>,
    start: Instant,
    labels: Mutex<Labels>,
}

/// What labelling needs to remember.
#[derive(Debug, Default)]
struct Labels {
    /// Requests in flight: id → (sent at, method and target).
    sent: HashMap<String, (Instant, String)>,
    /// The MRTR round each call (method and target) is at.
    round: HashMap<String, u32>,
    /// The round of each request id.
    round_of: HashMap<String, u32>,
    /// Requests the server pushed: id → method.
    pushed: HashMap<String, String>,
}

impl Wire {
    /// A view, shown from the start or not.
    pub(crate) fn new(show: bool) -> Self {
        Self {
            show: AtomicBool::new(show),
            record: Mutex::new(None),
            start: Instant::now(),
            labels: Mutex::default(),
        }
    }

    /// Shows the wire from now on, or stops.
    pub(crate) fn set_shown(&self, yes: bool) {
        self.show.store(yes, Ordering::Relaxed);
    }

    /// Writes every message to `path` as JSON Lines from now on (after a header naming
    /// the target).
    pub(crate) fn record_to(&self, path: &std::path::Path, target: &str) -> std::io::Result<()> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
        let header = json!({"record": RECORD_HEADER, "version": 1, "target": target,
            "sterna": env!("CARGO_PKG_VERSION")});
        writeln!(f, "{header}")?;
        f.flush()?;
        *self.record.lock().unwrap_or_else(|p| p.into_inner()) = Some(f);
        Ok(())
    }

    /// One message on the wire (the JSON text as sent or received).
    pub(crate) fn message(&self, send: bool, via: &str, text: &str) {
        let shown = self.show.load(Ordering::Relaxed);
        let mut record = self.record.lock().unwrap_or_else(|p| p.into_inner());
        if !shown && record.is_none() {
            return;
        }
        let now = Instant::now();
        let ms = now.duration_since(self.start).as_secs_f64() * 1000.0;
        let mut v: Value =
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.into()));
        redact(&mut v);
        if let Some(f) = record.as_mut() {
            let dir = if send { "send" } else { "recv" };
            let line =
                json!({"ms": (ms * 10.0).round() / 10.0, "dir": dir, "via": via, "message": v});
            let _ = writeln!(f, "{line}").and_then(|()| f.flush());
        }
        drop(record);
        if !shown {
            return;
        }
        let label = self
            .labels
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .label(send, &v, now);
        let arrow = if send { "→" } else { "←" };
        let body = v.to_string();
        let body = if body.len() > SHOWN {
            let cut = (0..=SHOWN)
                .rev()
                .find(|i| body.is_char_boundary(*i))
                .unwrap_or(0);
            format!("{}… ({} bytes in all)", &body[..cut], body.len())
        } else {
            body
        };
        crate::ui::note_line(&format!("{arrow} {:>8.1} ms  {via:<5} {label}", ms));
        crate::ui::note_line(&crate::ui::dim(&format!("    {body}")));
    }
}

/// An id as shown: `7`, or `sterna-era-probe` without its quotes.
fn bare(id: &str) -> &str {
    id.trim_matches('"')
}

fn id_key(v: &Value) -> Option<String> {
    v.get("id").filter(|i| !i.is_null()).map(Value::to_string)
}

/// `tool provision_database`, `uri sterna://readme`, `task 3f2a…`: what a request is about.
fn target_of(params: &Value) -> String {
    if let Some(n) = params.get("name").and_then(Value::as_str) {
        return format!(" {n}");
    }
    if let Some(u) = params.get("uri").and_then(Value::as_str) {
        return format!(" {u}");
    }
    if let Some(t) = params.get("taskId").and_then(Value::as_str) {
        return format!(" task {}…", t.chars().take(6).collect::<String>());
    }
    String::new()
}

impl Labels {
    fn label(&mut self, send: bool, v: &Value, now: Instant) -> String {
        let method = v.get("method").and_then(Value::as_str);
        match (method, id_key(v)) {
            (Some(m), Some(id)) if send => self.request(m, &id, v, now),
            (Some(m), Some(id)) => {
                self.pushed.insert(id.clone(), m.to_owned());
                format!(
                    "#{} {m}  [2025-11-25 push: a request of the server]",
                    bare(&id)
                )
            }
            (Some(m), None) => {
                let p = v.get("params").unwrap_or(&Value::Null);
                match m {
                    "notifications/cancelled" => format!(
                        "{m}  [cancels #{}]",
                        p.get("requestId").map(Value::to_string).unwrap_or_default()
                    ),
                    _ => m.to_owned(),
                }
            }
            (None, Some(id)) if send => {
                let what = self.pushed.remove(&id).unwrap_or_else(|| "request".into());
                format!(
                    "#{} answer to the server's {what}  [2025-11-25 push answered]",
                    bare(&id)
                )
            }
            (None, Some(id)) => self.response(&id, v, now),
            (None, None) => match v.get("error") {
                Some(e) => format!(
                    "error {}: {} (with no id: it answers no request in particular)",
                    e.get("code").map(Value::to_string).unwrap_or_default(),
                    e.get("message").and_then(Value::as_str).unwrap_or("")
                ),
                None => "(not a JSON-RPC message)".into(),
            },
        }
    }

    fn request(&mut self, m: &str, id: &str, v: &Value, now: Instant) -> String {
        let p = v.get("params").unwrap_or(&Value::Null);
        let call = format!("{m}{}", target_of(p));
        self.sent.insert(id.to_owned(), (now, call.clone()));
        let id = bare(id);
        let answers = p.get("inputResponses").and_then(Value::as_object);
        let state = p.get("requestState").is_some();
        if m == "tasks/update" {
            let n = answers.map_or(0, |a| a.len());
            return format!("#{id} {call}  [task: {n} answer(s)]");
        }
        if answers.is_none() && !state {
            if matches!(m, "tools/call" | "prompts/get" | "resources/read") {
                self.round.insert(call.clone(), 1);
                self.round_of.insert(id.to_owned(), 1);
            }
            return format!("#{id} {call}");
        }
        let round = self.round.get(&call).copied().unwrap_or(1) + 1;
        self.round.insert(call.clone(), round);
        self.round_of.insert(id.to_owned(), round);
        let n = answers.map_or(0, |a| a.len());
        let echoed = if state { ", requestState echoed" } else { "" };
        format!("#{id} {call}  [MRTR round {round}: retry with {n} answer(s){echoed}]")
    }

    fn response(&mut self, id: &str, v: &Value, now: Instant) -> String {
        let (took, call) = match self.sent.remove(id) {
            Some((at, call)) => (
                format!(" ({:.1} ms)", now.duration_since(at).as_secs_f64() * 1000.0),
                call,
            ),
            None => (String::new(), String::new()),
        };
        let round = self.round_of.remove(id);
        let id = bare(id);
        if let Some(e) = v.get("error") {
            let code = e.get("code").map(Value::to_string).unwrap_or_default();
            let msg = e.get("message").and_then(Value::as_str).unwrap_or("");
            return format!("#{id} {call} error {code}: {msg}{took}");
        }
        let r = v.get("result").unwrap_or(&Value::Null);
        let label = match r.get("resultType").and_then(Value::as_str) {
            Some("input_required") => {
                let keys: Vec<&String> = r
                    .get("inputRequests")
                    .and_then(Value::as_object)
                    .map(|q| q.keys().collect())
                    .unwrap_or_default();
                let state = if r.get("requestState").is_some() {
                    ", requestState"
                } else {
                    ""
                };
                format!(
                    "  [MRTR round {}: input_required, questions {keys:?}{state}]",
                    round.unwrap_or(1)
                )
            }
            Some("task") => "  [task created]".into(),
            _ if r.get("isError") == Some(&Value::Bool(true)) => "  [error result]".into(),
            _ => String::new(),
        };
        format!("#{id} {call} result{took}{label}")
    }
}
