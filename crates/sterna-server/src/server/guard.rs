//! What stands between a request and the code that serves it: cancellation, and panics
//! caught so that they cost only the request they happened in.

use crate::wake::OnWake;
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::task::Poll;
use sterna_types::error::ErrorObject;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

/// Runs a handler future, stopping it on cancellation (`None`) and catching panics
/// (`Some(Err(()))`). The cancellation is checked before each poll of the handler (a
/// cancelled request is never polled again). A handler that ends on its first poll (most
/// do) never registers with the token; one that waits registers once, and its later polls
/// (at every wake of the task that runs it: a stream's reads and writes) read a flag the
/// token's wake sets instead of taking the token's lock.
pub(crate) async fn guarded<T>(
    fut: BoxFuture<'static, T>,
    cancel: &CancellationToken,
) -> Option<Result<T, ()>> {
    let mut fut = AssertUnwindSafe(fut).catch_unwind();
    let waiting = None::<OnWake<WaitForCancellationFuture<'_>>>;
    tokio::pin!(waiting);
    std::future::poll_fn(|cx| {
        let cancelled = match waiting.as_mut().as_pin_mut() {
            None => cancel.is_cancelled(),
            Some(w) => w.poll(cx).is_ready(),
        };
        if cancelled {
            return Poll::Ready(None);
        }
        if let Poll::Ready(r) = fut.poll_unpin(cx) {
            return Poll::Ready(Some(r.map_err(|panic| log_panic(panic.as_ref()))));
        }
        if waiting.is_none() {
            waiting.set(Some(OnWake::new(cancel.cancelled())));
            let w = waiting.as_mut().as_pin_mut().expect("just set");
            return w.poll(cx).map(|()| None);
        }
        Poll::Pending
    })
    .await
}

/// Runs the synchronous start of a handler (argument decoding, a declarative handler's
/// `ask` closures and answer validation), turning a panic into `-32603`.
pub(crate) fn started<T>(start: impl FnOnce() -> Result<T, ErrorObject>) -> Result<T, ErrorObject> {
    std::panic::catch_unwind(AssertUnwindSafe(start)).unwrap_or_else(|panic| {
        log_panic(panic.as_ref());
        Err(ErrorObject::internal("Internal error"))
    })
}

/// Logs a caught panic with its message.
pub(crate) fn log_panic(panic: &(dyn std::any::Any + Send)) {
    let msg = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    tracing::error!(panic = %msg, "a panic while serving a request");
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[tokio::test]
    async fn a_handler_runs_unless_cancelled_and_a_cancelled_one_has_no_outcome() {
        let live = CancellationToken::new();
        assert_eq!(guarded(Box::pin(async { 7 }), &live).await, Some(Ok(7)));
        let panicked = guarded(Box::pin(async { panic!("boom") }), &live).await;
        assert_eq!(panicked, Some(Err::<(), ()>(())));

        // Cancelled before it starts: never polled.
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        let gone = CancellationToken::new();
        gone.cancel();
        let fut = Box::pin(async move { r.store(true, Ordering::SeqCst) });
        assert_eq!(guarded(fut, &gone).await, None);
        assert!(!ran.load(Ordering::SeqCst));

        // A handler that ends because it saw the cancellation: no outcome either.
        let token = CancellationToken::new();
        let seen = token.clone();
        let fut = Box::pin(async move {
            seen.cancelled().await;
            "stopped"
        });
        let cancel = token.clone();
        tokio::spawn(async move { cancel.cancel() });
        assert_eq!(guarded(fut, &token).await, None);

        // Woken by its own event as the request is cancelled: not polled again.
        let token = CancellationToken::new();
        let polls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let waker = Arc::new(std::sync::Mutex::new(None::<std::task::Waker>));
        let (p, w) = (polls.clone(), waker.clone());
        let fut = Box::pin(std::future::poll_fn(move |cx| {
            p.fetch_add(1, Ordering::SeqCst);
            *w.lock().unwrap() = Some(cx.waker().clone());
            Poll::<()>::Pending
        }));
        let g = guarded(fut, &token);
        tokio::pin!(g);
        let first = std::future::poll_fn(|cx| Poll::Ready(g.as_mut().poll(cx))).await;
        assert!(first.is_pending());
        token.cancel();
        waker.lock().unwrap().take().unwrap().wake();
        assert_eq!(g.await, None);
        assert_eq!(
            polls.load(Ordering::SeqCst),
            1,
            "not polled after the cancellation"
        );

        // One still waiting when the token is cancelled is stopped.
        let token = CancellationToken::new();
        let cancel = token.clone();
        tokio::spawn(async move { cancel.cancel() });
        let never = Box::pin(std::future::pending::<()>());
        assert_eq!(guarded(never, &token).await, None);
    }
}
