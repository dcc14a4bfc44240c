//! Requests a legacy session pushes to its client (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`), and the client's answers routed back to them.
//! A session has a bounded number of pushes waiting for answers: one more waits for a
//! slot (within its leg time) instead of growing the session without bound.

use crate::fast_map::FastMap;
use crate::server::Notifier;
use crate::wake::OnWake;
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::value::RawValue;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::RequestId;
use tokio::sync::{Semaphore, TryAcquireError, oneshot};
use tokio_util::sync::CancellationToken;

/// The default of how many pushes of one session may wait for answers at once.
pub(crate) const DEFAULT_MAX_PENDING: usize = 32;

/// Told when a push is sent and when it stops waiting, so a fleet relays answers only
/// to pushes that wait (the HTTP endpoint's bus).
pub(crate) trait PushWatch: Send + Sync + std::fmt::Debug {
    /// `id` is about to be sent and waits at most `within`.
    fn sent<'a>(&'a self, id: &'a RequestId, within: Duration) -> BoxFuture<'a, ()>;
    /// `id` no longer waits.
    fn ended(&self, id: &RequestId);
}

/// Why a pushed request got no usable answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PushFailure {
    /// No answer within the leg's time.
    TimedOut,
    /// The originating request was cancelled (or its client went away).
    Cancelled,
    /// The client answered with a JSON-RPC error.
    Refused(ErrorObject),
}

type Waiter = oneshot::Sender<Result<Box<RawValue>, ErrorObject>>;

/// The pushes of one session that wait for an answer. Their ids start with a random
/// part, so that ids of one session on several replicas never collide.
#[derive(Debug)]
pub(crate) struct Pushes {
    origin: String,
    next: AtomicU64,
    waiting: Mutex<FastMap<RequestId, Waiter>>,
    closed: std::sync::atomic::AtomicBool,
    /// One permit per push that may wait for an answer.
    slots: Semaphore,
    watch: Option<Arc<dyn PushWatch>>,
}

#[derive(Serialize)]
struct Request<'a, P: ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

/// The id of this process's `n`th push in a session: `sterna-{origin}-{n}`.
fn push_id(origin: &str, n: u64) -> String {
    let mut n_ = itoa::Buffer::new();
    let n = n_.format(n);
    let mut id = String::with_capacity(8 + origin.len() + n.len());
    id.push_str("sterna-");
    id.push_str(origin);
    id.push('-');
    id.push_str(n);
    id
}

/// Removes a waiter however its push ends (answered, timed out, cancelled, dropped).
struct Forget<'a>(&'a Pushes, &'a RequestId);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.lock().remove(self.1);
        if let Some(watch) = &self.0.watch {
            watch.ended(self.1);
        }
    }
}

impl Default for Pushes {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_PENDING, None)
    }
}

impl Pushes {
    /// The pushes of a session that may have `max_pending` of them waiting at once,
    /// telling `watch` about each.
    pub(crate) fn new(max_pending: usize, watch: Option<Arc<dyn PushWatch>>) -> Self {
        Self {
            origin: crate::state::random_id::<16>()[..8].to_owned(),
            next: AtomicU64::new(0),
            waiting: Mutex::default(),
            closed: std::sync::atomic::AtomicBool::new(false),
            slots: Semaphore::new(max_pending.clamp(1, Semaphore::MAX_PERMITS)),
            watch,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FastMap<RequestId, Waiter>> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The client is gone: every waiting push fails, and later ones fail at once.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
        self.slots.close();
        self.lock().clear();
    }

    /// How many pushes wait for an answer.
    #[cfg(test)]
    pub(crate) fn pending(&self) -> usize {
        self.lock().len()
    }

    /// Sends a request to the client through `out` (the originating request's stream)
    /// and waits for its answer; first for a free slot when the session already has as
    /// many pushes waiting as it may. `within` bounds both waits together.
    pub(crate) async fn ask<P: Serialize + ?Sized>(
        &self,
        out: &Notifier,
        method: &str,
        params: Option<&P>,
        within: Duration,
        cancel: &CancellationToken,
    ) -> Result<Box<RawValue>, PushFailure> {
        if self.closed.load(Ordering::Relaxed) || cancel.is_cancelled() {
            return Err(PushFailure::Cancelled);
        }
        let deadline = tokio::time::Instant::now() + within;
        // A free slot is taken at once; only a full session waits for one.
        let _slot = match self.slots.try_acquire() {
            Ok(permit) => permit,
            Err(TryAcquireError::Closed) => return Err(PushFailure::Cancelled),
            Err(TryAcquireError::NoPermits) => tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(PushFailure::Cancelled),
                slot = tokio::time::timeout_at(deadline, self.slots.acquire()) => match slot {
                    Err(_) => return Err(PushFailure::TimedOut),
                    Ok(Err(_)) => return Err(PushFailure::Cancelled),
                    Ok(Ok(permit)) => permit,
                },
            },
        };
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::String(push_id(&self.origin, n));
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id.clone(), tx);
        let _forget = Forget(self, &id);
        if let Some(watch) = &self.watch {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            watch.sent(&id, left).await;
        }
        // Written once, into a buffer the size of a typical question.
        let mut bytes = Vec::with_capacity(1024);
        let request = Request {
            jsonrpc: "2.0",
            id: &id,
            method,
            params,
        };
        serde_json::to_writer(&mut bytes, &request).expect("requests serialize");
        out.send(bytes).await;
        // The request's task wakes at each read and write of its stream while the answer
        // is awaited: the cancellation and the deadline are polled only on their own wakes.
        let given_up = OnWake::new(async {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => PushFailure::Cancelled,
                () = tokio::time::sleep_until(deadline) => PushFailure::TimedOut,
            }
        });
        tokio::select! {
            biased;
            // An answer beats the deadline, as it came in time; a cancellation beats both.
            answer = rx => match answer {
                _ if cancel.is_cancelled() => Err(PushFailure::Cancelled),
                Err(_) => Err(PushFailure::Cancelled),
                Ok(Ok(v)) => Ok(v),
                Ok(Err(e)) => Err(PushFailure::Refused(e)),
            },
            failure = given_up => Err(failure),
        }
    }

    /// Routes the client's answer to the push it answers. False when nothing waits for
    /// that id (unknown, answered twice, or too late).
    pub(crate) fn answer(&self, id: &RequestId, outcome: Result<&RawValue, ErrorObject>) -> bool {
        let Some(waiter) = self.lock().remove(id) else {
            return false;
        };
        // Kept as the client wrote it: the round that reads it checks its shape.
        waiter.send(outcome.map(ToOwned::to_owned)).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn push_ids_name_the_process_then_count() {
        assert_eq!(push_id("Ab3_", 0), "sterna-Ab3_-0");
        assert_eq!(push_id("x", u64::MAX), "sterna-x-18446744073709551615");
    }

    /// A `roots/list` push (no params), waiting at most `within`.
    async fn ask_roots(
        p: &Pushes,
        out: &Notifier,
        within: Duration,
        cancel: &CancellationToken,
    ) -> Result<Box<RawValue>, PushFailure> {
        p.ask(out, "roots/list", None::<&RawValue>, within, cancel)
            .await
    }

    #[tokio::test]
    async fn answers_reach_their_push_and_nothing_is_left_behind() {
        let pushes = std::sync::Arc::new(Pushes::default());
        let (out, mut sent) = Notifier::channel(4);
        let cancel = CancellationToken::new();
        let p = pushes.clone();
        let asking =
            tokio::spawn(async move { ask_roots(&p, &out, Duration::from_secs(5), &cancel).await });
        let request: Value = serde_json::from_slice(&sent.recv().await.unwrap()).unwrap();
        let id: RequestId = serde_json::from_value(request["id"].clone()).unwrap();
        assert!(!pushes.answer(&RequestId::from("other"), Err(ErrorObject::internal("x"))));
        let raw = RawValue::from_string(r#"{"roots":[]}"#.into()).unwrap();
        assert!(pushes.answer(&id, Ok(&raw)));
        assert_eq!(asking.await.unwrap().unwrap().get(), r#"{"roots":[]}"#);
        assert!(!pushes.answer(&id, Ok(&raw)), "answered twice");
        assert_eq!(pushes.pending(), 0);
    }

    #[tokio::test]
    async fn timeouts_and_cancellation_forget_the_push() {
        let pushes = Pushes::default();
        let (out, _sent) = Notifier::channel(4);
        let cancel = CancellationToken::new();
        let r = ask_roots(&pushes, &out, Duration::from_millis(10), &cancel).await;
        assert_eq!(r.err(), Some(PushFailure::TimedOut));
        cancel.cancel();
        let r = ask_roots(&pushes, &out, Duration::from_secs(5), &cancel).await;
        assert_eq!(r.err(), Some(PushFailure::Cancelled));
        assert_eq!(pushes.pending(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_session_has_a_bounded_number_of_pushes_waiting() {
        let pushes = std::sync::Arc::new(Pushes::default());
        let (out, mut sent) = Notifier::channel(64);
        let cancel = CancellationToken::new();
        let mut asking = Vec::new();
        for _ in 0..33 {
            let (p, out, cancel) = (pushes.clone(), out.clone(), cancel.clone());
            asking.push(tokio::spawn(async move {
                ask_roots(&p, &out, Duration::from_secs(60), &cancel).await
            }));
        }
        let mut ids = Vec::new();
        for _ in 0..32 {
            let request: Value = serde_json::from_slice(&sent.recv().await.unwrap()).unwrap();
            ids.push(serde_json::from_value::<RequestId>(request["id"].clone()).unwrap());
        }
        // The clock is paused: the wait ends only once every task is idle.
        let more = tokio::time::timeout(Duration::from_secs(1), sent.recv()).await;
        assert!(more.is_err(), "the 33rd push waits for a slot");
        assert_eq!(pushes.pending(), 32);
        let raw = RawValue::from_string(r#"{"roots":[]}"#.into()).unwrap();
        assert!(pushes.answer(&ids[0], Ok(&raw)));
        let next = tokio::time::timeout(Duration::from_secs(1), sent.recv()).await;
        assert!(next.is_ok(), "an answer frees a slot");
        // Cancelling ends every push, waiting for a slot or for an answer.
        cancel.cancel();
        for a in asking {
            let _ = a.await.unwrap();
        }
        assert_eq!(pushes.pending(), 0);
    }
}
