//! The replay's two halves: the live server (a child on stdio, or an HTTP endpoint) and
//! the bookkeeping between the recording and the live answers (what to substitute, what
//! differs).

use crate::exit::CliError;
use crate::target::Target;
use serde_json::Value;
use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use sterna::client::transport::{HttpTransport, NotificationSink, Outgoing, Transport};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// One message of the recording.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) send: bool,
    pub(crate) message: Value,
}

/// Whether the server sent `m` as a response or a request (not a notification): what the
/// replay waits for.
pub(crate) fn awaited(m: &Value) -> bool {
    m.get("id").is_some_and(|i| !i.is_null())
}

/// Keys whose values the server issues afresh on every run.
const ISSUED: &[&str] = &["requestState", "taskId"];

/// Keys left out when answers are compared (issued, or times).
const VOLATILE: &[&str] = &[
    "requestState",
    "taskId",
    "createdAt",
    "lastUpdatedAt",
    "ttlMs",
    "pollIntervalMs",
];

/// Recorded values and the live values that replace them.
#[derive(Debug, Default)]
pub(crate) struct Subst {
    strings: HashMap<String, String>,
    ids: HashMap<String, Value>,
}

/// The live server.
pub(crate) struct Live {
    /// What the server sent that the replay waits for (responses, requests), in order.
    pub(crate) received: Vec<Value>,
    rx: mpsc::UnboundedReceiver<Value>,
    tx: mpsc::UnboundedSender<Value>,
    side: Side,
}

enum Side {
    Stdio {
        stdin: Option<tokio::process::ChildStdin>,
        child: Box<tokio::process::Child>,
    },
    Http(Arc<HttpTransport>),
}

fn spawn_stdio(
    command: &[String],
    env: &[(String, String)],
    tx: mpsc::UnboundedSender<Value>,
) -> Result<Side, CliError> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| CliError::Usage("-- needs a command".into()))?;
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = cmd
        .spawn()
        .map_err(|e| CliError::Local(format!("cannot start {program}: {e}")))?;
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    if let Some(err) = stderr {
        tokio::spawn(async move {
            let mut lines = BufReader::new(err).lines();
            while let Ok(Some(l)) = lines.next_line().await {
                crate::ui::note_line(&crate::ui::dim(&format!("server│ {l}")));
            }
        });
    }
    if let Some(out) = stdout {
        tokio::spawn(async move {
            let mut lines = BufReader::new(out).lines();
            while let Ok(Some(l)) = lines.next_line().await {
                crate::wire::global().message(false, "stdio", &l);
                if let Ok(v) = serde_json::from_str::<Value>(&l) {
                    let _ = tx.send(v);
                }
            }
        });
    }
    Ok(Side::Stdio {
        stdin: child.stdin.take(),
        child: Box::new(child),
    })
}

impl Live {
    /// Starts (stdio) or prepares (HTTP) the server.
    pub(crate) fn start(
        target: &Target,
        headers: &[String],
        legacy: bool,
    ) -> Result<Self, CliError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let side = match target {
            Target::Stdio { command, env, .. } => spawn_stdio(command, env, tx.clone())?,
            Target::Http { .. } if legacy => {
                return Err(CliError::Usage(
                    "this recording is a 2025-11-25 session: over HTTP it needs its \
                     Mcp-Session-Id, which replay does not manage; replay it over stdio \
                     (sterna replay FILE -- COMMAND)"
                        .into(),
                ));
            }
            Target::Http { url, .. } => {
                let mut b = HttpTransport::builder(url);
                for h in headers {
                    let (n, v) = crate::target::header(h)?;
                    b = b.header(n, v);
                }
                let t = b
                    .build()
                    .map_err(|e| CliError::Usage(format!("{url}: {e}")))?;
                Side::Http(Arc::new(t))
            }
        };
        crate::explain::set_target(target);
        Ok(Self {
            received: Vec::new(),
            rx,
            tx,
            side,
        })
    }

    /// Waits until `n` awaited messages came (`wait` at most between two); whether they did.
    pub(crate) async fn until(&mut self, n: usize, wait: Duration) -> bool {
        while self.received.len() < n {
            match tokio::time::timeout(wait, self.rx.recv()).await {
                Ok(Some(v)) if awaited(&v) => self.received.push(v),
                Ok(Some(_)) => {}
                _ => return false,
            }
        }
        true
    }

    /// Sends one client message; `false` when it has no place on this transport (a
    /// notification over 2026-07-28 HTTP).
    pub(crate) async fn send(&mut self, message: Value) -> Result<bool, CliError> {
        let text = message.to_string();
        match &mut self.side {
            Side::Stdio {
                stdin: Some(stdin), ..
            } => {
                crate::wire::global().message(true, "stdio", &text);
                let line = format!("{text}\n");
                stdin
                    .write_all(line.as_bytes())
                    .await
                    .map_err(|e| CliError::Local(format!("writing to the server: {e}")))?;
                Ok(true)
            }
            Side::Stdio { stdin: None, .. } => Ok(false),
            Side::Http(t) => Ok(http_send(t.clone(), message, text, self.tx.clone())),
        }
    }

    /// Ends the server (stdio: end of input, then a kill after 2 s).
    pub(crate) async fn close(self) {
        if let Side::Stdio { stdin, mut child } = self.side {
            drop(stdin);
            if tokio::time::timeout(Duration::from_secs(2), child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
        }
    }
}

/// Sends a request over HTTP in the background (its answer goes to `tx`); `false` for
/// anything else.
fn http_send(
    t: Arc<HttpTransport>,
    m: Value,
    text: String,
    tx: mpsc::UnboundedSender<Value>,
) -> bool {
    let (Some(method), Some(id)) = (m["method"].as_str(), m.get("id")) else {
        crate::ui::note_line("  (not sent: 2026-07-28 over HTTP has no client notifications)");
        return false;
    };
    let Ok(rid) = serde_json::from_value(id.clone()) else {
        return false;
    };
    let p = &m["params"];
    let out = Outgoing {
        id: rid,
        method: method.to_owned(),
        body: text.into_bytes(),
        protocol_version: p["_meta"]["io.modelcontextprotocol/protocolVersion"]
            .as_str()
            .unwrap_or(sterna::types::version::LATEST)
            .to_owned(),
        name: ["name", "uri", "taskId"]
            .iter()
            .find_map(|k| p[*k].as_str())
            .map(str::to_owned),
        params: Vec::new(),
    };
    let id = id.clone();
    tokio::spawn(async move {
        let quiet: NotificationSink = Arc::new(|_: &[u8]| {});
        let answer = match t.request(out, quiet).await {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            Err(e) => {
                let why = crate::explain::client(&sterna::client::ClientError::Transport(e));
                serde_json::json!({"id": id, "transportError": why})
            }
        };
        let _ = tx.send(answer);
    });
    true
}

fn walk_pairs(rec: &Value, live: &Value, s: &mut Subst) {
    match (rec, live) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, x) in a {
                let Some(y) = b.get(k) else { continue };
                match (x, y) {
                    (Value::String(r), Value::String(l))
                        if ISSUED.contains(&k.as_str()) && r != l =>
                    {
                        s.strings.insert(r.clone(), l.clone());
                    }
                    _ => walk_pairs(x, y, s),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            a.iter().zip(b).for_each(|(x, y)| walk_pairs(x, y, s))
        }
        _ => {}
    }
}

fn recorded_server(records: &[Recorded]) -> impl Iterator<Item = &Value> {
    records
        .iter()
        .filter(|r| !r.send && awaited(&r.message))
        .map(|r| &r.message)
}

/// Learns the live values of what the server issued, from the answers so far: responses
/// paired by id, the server's own requests by order.
pub(crate) fn learn(records: &[Recorded], live: &[Value], s: &mut Subst) {
    let is_request = |v: &Value| v.get("method").is_some();
    let rec_requests: Vec<&Value> = recorded_server(records).filter(|v| is_request(v)).collect();
    let live_requests = live.iter().filter(|v| is_request(v));
    for (r, l) in rec_requests.iter().zip(live_requests) {
        s.ids.insert(r["id"].to_string(), l["id"].clone());
        walk_pairs(r, l, s);
    }
    for l in live.iter().filter(|v| !is_request(v)) {
        if let Some(r) = recorded_server(records).find(|r| !is_request(r) && r["id"] == l["id"]) {
            walk_pairs(r, l, s);
        }
    }
}

/// A recorded client message with the live values in place.
pub(crate) fn substitute(m: &Value, s: &Subst) -> Value {
    fn walk(v: &mut Value, s: &Subst) {
        match v {
            Value::String(x) => {
                if let Some(l) = s.strings.get(x.as_str()) {
                    *x = l.clone();
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, s)),
            Value::Object(o) => o.values_mut().for_each(|x| walk(x, s)),
            _ => {}
        }
    }
    let mut out = m.clone();
    walk(&mut out, s);
    // An answer to a request the server pushed carries that request's live id.
    if out.get("method").is_none()
        && let Some(live) = out
            .get("id")
            .and_then(|id| s.ids.get(&id.to_string()))
            .cloned()
    {
        out["id"] = live;
    }
    out
}

/// How the live answers compare with the recorded ones.
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub(crate) same: usize,
    pub(crate) differ: Vec<String>,
}

fn strip(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !VOLATILE.contains(&k.as_str()))
                .map(|(k, x)| (k.clone(), strip(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        other => other.clone(),
    }
}

/// The first place where `a` and `b` differ, as a JSON pointer with both values.
fn first_difference(a: &Value, b: &Value, at: String) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x
            .keys()
            .chain(y.keys().filter(|k| !x.contains_key(*k)))
            .find_map(|k| {
                let (p, q) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                first_difference(p, q, format!("{at}/{k}"))
            }),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, format!("{at}/{i}"))),
        _ if a == b => None,
        _ => Some(format!("{at}: recorded {a}, now {b}")),
    }
}

/// Compares every recorded response with the live one of the same id.
pub(crate) fn compare(records: &[Recorded], live: &[Value]) -> Report {
    let mut report = Report::default();
    for r in recorded_server(records).filter(|v| v.get("method").is_none()) {
        let id = &r["id"];
        match live
            .iter()
            .find(|l| l.get("method").is_none() && l["id"] == *id)
        {
            None => report.differ.push(format!("#{id}: no answer")),
            Some(l) => match first_difference(&strip(r), &strip(l), String::new()) {
                None => report.same += 1,
                Some(d) => report.differ.push(format!("#{id} {d}")),
            },
        }
    }
    report
}
