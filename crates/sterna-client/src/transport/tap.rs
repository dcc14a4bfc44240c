//! The wire tap: every JSON-RPC message the client writes or reads, on any transport and
//! in either era, as a `trace` event with the target [`TARGET`] (`sterna::wire`).
//!
//! Fields: `dir` (`"send"` or `"recv"`), `via` (`"stdio"` or `"http"`) and `json` (the
//! message as received or sent, not redacted). Off, and not even formatted, unless a
//! subscriber enables the target (`STERNA_LOG=sterna::wire=trace`); the `sterna` command's
//! `--wire` and `--record` read these events.

/// The target of the wire events.
pub const TARGET: &str = "sterna::wire";

/// A message the client wrote (a request, a notification, an answer to a server request).
pub(crate) fn sent(via: &'static str, message: &[u8]) {
    tracing::trace!(target: TARGET, dir = "send", via, json = %String::from_utf8_lossy(message));
}

/// A message the client read (a response, a notification, a request of the server).
pub(crate) fn received(via: &'static str, message: &[u8]) {
    tracing::trace!(target: TARGET, dir = "recv", via, json = %String::from_utf8_lossy(message));
}
