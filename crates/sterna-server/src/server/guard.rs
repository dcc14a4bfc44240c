//! What stands between a request and the code that serves it: cancellation, and panics
//! caught so that they cost only the request they happened in.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use std::panic::AssertUnwindSafe;
use sterna_types::error::ErrorObject;
use tokio_util::sync::CancellationToken;

/// Runs a handler future, stopping it on cancellation (`None`) and catching panics
/// (`Some(Err(()))`).
pub(crate) async fn guarded<T>(
    fut: BoxFuture<'static, T>,
    cancel: &CancellationToken,
) -> Option<Result<T, ()>> {
    let fut = AssertUnwindSafe(fut).catch_unwind();
    tokio::select! {
        biased;
        _ = cancel.cancelled() => None,
        r = fut => Some(r.map_err(|panic| log_panic(panic.as_ref()))),
    }
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
