//! What the command prints besides its results, all on stderr: its own log (`STERNA_LOG`,
//! default `warn`), the stderr of a stdio server (`server│ …`, dimmed) and its exit, and the
//! wire (`--wire`, `--record`). One tracing subscriber, a layer for each.

use crate::ui::dim;
use crate::wire::Wire;
use std::io::IsTerminal;
use std::sync::Arc;
use sterna::client::transport::{EXIT_TARGET, STDERR_TARGET, tap};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, filter::Targets};

/// The fields of an event that the layers here read.
#[derive(Default)]
struct Fields {
    line: Option<String>,
    status: Option<String>,
    code: Option<String>,
    dir: Option<String>,
    via: Option<String>,
    json: Option<String>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.record_debug(field, &format_args!("{value}"));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.record_debug(field, &value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let slot = match field.name() {
            "line" => &mut self.line,
            "status" => &mut self.status,
            "code" => &mut self.code,
            "dir" => &mut self.dir,
            "via" => &mut self.via,
            "json" => &mut self.json,
            _ => return,
        };
        *slot = Some(format!("{value:?}"));
    }
}

/// Shows a stdio server's stderr lines and its exit.
struct ServerPane;

impl<S: Subscriber> Layer<S> for ServerPane {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut f = Fields::default();
        event.record(&mut f);
        match event.metadata().target() {
            STDERR_TARGET => {
                if let Some(line) = f.line {
                    crate::ui::note_line(&dim(&format!("server│ {line}")));
                }
            }
            EXIT_TARGET => {
                let status = f.status.unwrap_or_else(|| "unknown status".into());
                crate::exited::record(status.clone());
                // A clean exit (at the end of its input) is no news.
                if f.code.as_deref() != Some("0") {
                    crate::ui::note_line(&dim(&format!(
                        "server│ (the server process exited: {status})"
                    )));
                }
            }
            _ => {}
        }
    }
}

/// Hands the wire events to the [`Wire`] view.
struct WireLayer(Arc<Wire>);

impl<S: Subscriber> Layer<S> for WireLayer {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut f = Fields::default();
        event.record(&mut f);
        if let (Some(dir), Some(json)) = (f.dir, f.json) {
            let via = f.via.unwrap_or_default();
            self.0.message(dir == "send", &via, &json);
        }
    }
}

/// The command's own warnings and errors, when `STERNA_LOG` does not ask for a log:
/// `sterna: warning: …` lines, with the event's fields after the message.
struct Plain;

/// The message and the other fields of an event, as text.
#[derive(Default)]
struct Line(String, Vec<String>);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => self.0 = format!("{value:?}"),
            name => self.1.push(format!("{name}={value:?}")),
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.record_debug(field, &format_args!("{value}"));
    }
}

impl<S: Subscriber> Layer<S> for Plain {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut line = Line::default();
        event.record(&mut line);
        let level = match *event.metadata().level() {
            tracing::Level::ERROR => "error",
            tracing::Level::WARN => "warning",
            _ => "note",
        };
        let fields = if line.1.is_empty() {
            String::new()
        } else {
            format!(" ({})", line.1.join(", "))
        };
        crate::ui::note_line(&format!("sterna: {level}: {}{fields}", line.0));
    }
}

/// Installs the subscriber: the command's log filtered by `STERNA_LOG` (else `default`;
/// the server's stderr and the wire have layers of their own), the server pane, the wire.
pub(crate) fn init(wire: Arc<Wire>, default: &str) {
    let custom = std::env::var("STERNA_LOG").is_ok();
    let filter = EnvFilter::try_from_env("STERNA_LOG")
        .unwrap_or_else(|_| default.into())
        .add_directive(format!("{STDERR_TARGET}=off").parse().expect("a directive"))
        .add_directive(format!("{EXIT_TARGET}=off").parse().expect("a directive"));
    // Without STERNA_LOG, warnings read as lines of the command, not as a log.
    let fmt = if custom {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .boxed()
    } else {
        Plain.boxed()
    };
    let pane = Targets::new()
        .with_target(STDERR_TARGET, tracing::Level::INFO)
        .with_target(EXIT_TARGET, tracing::Level::INFO);
    let wired = Targets::new().with_target(tap::TARGET, tracing::Level::TRACE);
    tracing_subscriber::registry()
        .with(fmt.with_filter(filter))
        .with(ServerPane.with_filter(pane))
        .with(WireLayer(wire).with_filter(wired))
        .init();
}
