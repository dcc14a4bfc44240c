//! A session's request that sent something before its answer (a pushed question, progress),
//! driven by the SSE body of the POST that started it while its client reads: no task and
//! no hand-off between tasks per message. When that body goes away first (the client left,
//! the handler closed the stream) the request moves to a task of its own
//! ([`Task::run`]), exactly as if it had started there, so the client may resume it.

use super::log::{Reading, StreamLog};
use super::quiet::{Quiet, Quieting};
use super::running::{Handling, Task, close, drain};
use crate::legacy::LegacySession;
use crate::server::{Notifications, Response, log_panic};
use crate::wake::OnWake;
use bytes::Bytes;
use futures_util::{FutureExt, Stream};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use sterna_types::jsonrpc::RequestId;
use tokio_util::sync::CancellationToken;

/// A running request and what its task would need.
pub(super) struct Driver {
    pub(super) task: Task,
    pub(super) id: RequestId,
    pub(super) work: Handling,
    pub(super) rx: Notifications,
    pub(super) cancel: CancellationToken,
}

/// How a request ended: its answer (`None`: cancelled) and its session (`None` after a
/// panic).
type Ended = (Option<Response>, Option<LegacySession>);

impl Driver {
    /// Runs the request until it sends a message (logged) or ends.
    async fn step(&mut self) -> Option<Ended> {
        tokio::select! {
            biased;
            r = AssertUnwindSafe(&mut self.work).catch_unwind() => Some(match r {
                Ok((answer, session)) => (answer, Some(session)),
                Err(panic) => {
                    log_panic(panic.as_ref());
                    (None, None)
                }
            }),
            Some(n) = self.rx.recv() => {
                self.task.log.push(n);
                None
            }
        }
    }

    /// Ends the stream with the request's last messages and answer. A session the
    /// request changed is saved first, on a task (an await the body must not hold).
    fn finish(mut self, (answer, session): Ended) {
        drain(&mut self.rx, &self.task.log);
        let Task {
            live, log, save, ..
        } = self.task;
        let id = self.id;
        match (save, session) {
            (Some(save), Some(session)) if save.needed(&session) => {
                tokio::spawn(async move {
                    save.after(&session).await;
                    close(&live, &log, &id, answer);
                });
            }
            _ => close(&live, &log, &id, answer),
        }
    }

    /// The request goes on on a task of its own (its body went away while it ran, or
    /// there is no body to drive it).
    pub(super) fn detach(self) {
        let Driver {
            task,
            id,
            work,
            rx,
            cancel,
        } = self;
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn(task.run(id, work, rx, cancel))),
            Err(_) => tracing::warn!("a 2025 request was dropped with its runtime"),
        }
    }
}

/// The driver while the body holds it; handed to a task when dropped with it.
struct Held(Option<Driver>);

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(driver) = self.0.take() {
            driver.detach();
        }
    }
}

struct Driving {
    held: Held,
    log: Arc<StreamLog>,
    _reading: Reading,
    until: CancellationToken,
    /// The cut and the keep-alive timer, made once, polled when one of them fires.
    quiet: Pin<Box<OnWake<Quieting>>>,
    cursor: u64,
    lead: Option<Bytes>,
}

async fn step(held: &mut Held) -> Option<Ended> {
    match held.0.as_mut() {
        Some(driver) => driver.step().await,
        None => std::future::pending().await,
    }
}

/// The SSE body of a driven request: `lead`, then the log's events as the request sends
/// them, until it ends (or its handler closes the stream); a comment every `keep_alive`
/// while nothing happens.
pub(super) fn driven(
    driver: Driver,
    reading: Reading,
    lead: Bytes,
    keep_alive: Duration,
) -> impl Stream<Item = Bytes> + Send + 'static {
    let log = driver.task.log.clone();
    let until = log.cut();
    let state = Driving {
        quiet: Box::pin(OnWake::new(Quieting::new(until.clone(), keep_alive))),
        until,
        held: Held(Some(driver)),
        log,
        _reading: reading,
        cursor: 0,
        lead: Some(lead),
    };
    futures_util::stream::unfold(state, move |mut st| async move {
        if let Some(b) = st.lead.take() {
            return Some((b, st));
        }
        let log = st.log.clone();
        loop {
            // Only a request's own turns write its log while it is driven here; once it
            // ended with a session to save, a task ends the log.
            let changed = log.changed();
            tokio::pin!(changed);
            if st.held.0.is_none() {
                changed.as_mut().enable();
            }
            if st.until.is_cancelled() {
                return None;
            }
            match log.after(st.cursor) {
                Err(()) => return None,
                Ok(Some((seq, b))) => {
                    st.cursor = seq;
                    st.quiet.as_mut().inner().sent();
                    return Some((b, st));
                }
                Ok(None) => {}
            }
            tokio::select! {
                biased;
                ended = step(&mut st.held) => {
                    if let Some(ended) = ended
                        && let Some(driver) = st.held.0.take()
                    {
                        driver.finish(ended);
                    }
                }
                () = &mut changed, if st.held.0.is_none() => {}
                quiet = st.quiet.as_mut() => match quiet {
                    Quiet::Cut => return None,
                    Quiet::KeepAlive => {
                        return Some((Bytes::from_static(b": keep-alive\n\n"), st));
                    }
                },
            }
        }
    })
}
