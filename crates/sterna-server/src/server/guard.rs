//! What stands between a request and the code that serves it: cancellation, and panics
//! caught so that they cost only the request they happened in.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use std::panic::AssertUnwindSafe;
use sterna_types::error::ErrorObject;
use tokio_util::sync::CancellationToken;

/// Runs a handler future, stopping it on cancellation (`None`) and catching panics
/// (`Some(Err(()))`). A request cancelled before it starts never runs, and one
/// cancelled by the time it ends has no outcome (as when the cancellation comes first);
/// a handler that ends on its first poll (most do) never registers with the token.
pub(crate) async fn guarded<T>(
    fut: BoxFuture<'static, T>,
    cancel: &CancellationToken,
) -> Option<Result<T, ()>> {
    if cancel.is_cancelled() {
        return None;
    }
    let fut = AssertUnwindSafe(fut).catch_unwind();
    let r = tokio::select! {
        biased;
        r = fut => r.map_err(|panic| log_panic(panic.as_ref())),
        _ = cancel.cancelled() => return None,
    };
    (!cancel.is_cancelled()).then_some(r)
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

        // One still waiting when the token is cancelled is stopped.
        let token = CancellationToken::new();
        let cancel = token.clone();
        tokio::spawn(async move { cancel.cancel() });
        let never = Box::pin(std::future::pending::<()>());
        assert_eq!(guarded(never, &token).await, None);
    }
}
