//! A session's request while it runs: its handler's future, the task it moves to when it
//! does not finish at once (it then outlives its connection, so that the client may resume
//! its stream), and what is saved once it ends.

use super::live::Live;
use super::log::StreamLog;
use super::{SessionStore, StreamStore};
use crate::legacy::{Legacy, LegacyRequest, LegacySession, SessionRecord};
use crate::server::{Notifications, RequestEnv, Response, Server};
use crate::trace::Ending as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use sterna_types::jsonrpc::RequestId;
use tokio_util::sync::CancellationToken;

/// A request's handling: its answer (`None`: cancelled), and the session it ran in (whose
/// changes are saved after).
pub(super) type Handling = Pin<Box<dyn Future<Output = (Option<Response>, LegacySession)> + Send>>;

/// The handling of `request` in `session`; it owns what it runs on, so it can start where
/// the request arrived and go on on a task of its own.
pub(super) fn handle(
    server: &Server,
    session: LegacySession,
    id: RequestId,
    request: LegacyRequest,
    env: RequestEnv,
) -> Handling {
    let server = server.clone();
    Box::pin(async move {
        let Some(era) = Legacy::of(&server) else {
            return (None, session);
        };
        let counts = server.metrics().of(request.method());
        let answer = era.serve(&session, id, request, env).await;
        counts.ended(answer.as_ref().map(|r| r.ending().0));
        (answer, session)
    })
}

/// Where a request's changes to its session (log level, subscriptions) are stored.
pub(super) struct Save {
    pub(super) store: Arc<dyn SessionStore>,
    pub(super) id: String,
    pub(super) before: Arc<SessionRecord>,
    pub(super) idle: Duration,
}

impl Save {
    /// Whether the request changed what a request can change in its session (the rest of
    /// the record is never written by a request).
    pub(super) fn needed(&self, session: &LegacySession) -> bool {
        session.changed_since(&self.before)
    }

    /// Stores the session again when the request changed it ([`Save::needed`]).
    pub(super) async fn after(self, session: &LegacySession) {
        if !self.needed(session) {
            return;
        }
        let before = &self.before;
        let now = session.record(before.principal.clone(), before.dpop_jkt.clone());
        if let Err(e) = self.store.update(&self.id, now, self.idle).await {
            tracing::error!(error = %e, "the session store failed");
        }
    }
}

/// A request that did not finish at once, on a task of its own: its messages go into the
/// stream's log, which any number of readers follow.
pub(super) struct Task {
    pub(super) live: Arc<Live>,
    pub(super) log: Arc<StreamLog>,
    pub(super) window: Duration,
    pub(super) save: Option<Save>,
    /// The shared store and session, where a client may read the stream on another
    /// replica.
    pub(super) read_elsewhere: Option<(Arc<dyn StreamStore>, String)>,
}

/// Whether a client reads `stream` on another replica.
async fn read_elsewhere(shared: Option<&(Arc<dyn StreamStore>, String)>, stream: u64) -> bool {
    let Some((store, session)) = shared else {
        return false;
    };
    store.is_read(session, stream).await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the stream store failed");
        // Unknown: the client is not taken for gone while the store is away.
        true
    })
}

impl Task {
    pub(super) async fn run(
        self,
        id: RequestId,
        mut work: Handling,
        mut rx: Notifications,
        cancel: CancellationToken,
    ) {
        let Task {
            live,
            log,
            window,
            save,
            read_elsewhere: shared,
        } = self;
        // Nobody came back for the stream, here or elsewhere: the client is gone.
        let gone = log.abandoned(window, || read_elsewhere(shared.as_ref(), log.id));
        tokio::pin!(gone);
        let mut given_up = false;
        let (answer, session) = loop {
            tokio::select! {
                biased;
                r = &mut work => break r,
                Some(n) = rx.recv() => log.push(n),
                () = &mut gone, if !given_up => {
                    given_up = true;
                    cancel.cancel();
                }
            }
        };
        drain(&mut rx, &log);
        if let Some(save) = save {
            save.after(&session).await;
        }
        close(&live, &log, &id, answer);
    }
}

/// Logs what the request sent so far.
pub(super) fn drain(rx: &mut Notifications, log: &StreamLog) {
    while let Some(n) = rx.try_recv() {
        log.push(n);
    }
}

/// Ends the request's stream with its answer and frees its id. The log stays for a client
/// that resumes late; the next stream of the session (or the end of the session) forgets
/// it once the window has passed.
pub(super) fn close(live: &Live, log: &StreamLog, id: &RequestId, answer: Option<Response>) {
    log.finish(answer.map(|r| r.to_bytes().into()));
    live.release(id);
}
