//! The 2025-11-25 half of the client: a session opened by `initialize`, on stdio or
//! Streamable HTTP, whose server pushes requests that the client's handlers answer.
//!
//! The same [`Client`](super::Client) API serves both eras; what changes underneath:
//! requests carry no 2026-07-28 `_meta` or headers; `elicitation/create`,
//! `sampling/createMessage` and `roots/list` arrive as real requests (on the call's own
//! response stream, the GET stream or stdio) and are answered by the handlers that answer
//! MRTR questions; a lost session (404) is initialized again; `-32042` is resolved with the
//! URL handler and `notifications/elicitation/complete`.

mod handshake;
#[cfg(feature = "http")]
mod http;
mod live;
mod push;
pub(crate) mod rounds;
mod session;
mod url;
mod wire;
mod wire_error;

pub(crate) use handshake::Hello;
#[cfg(feature = "http")]
pub(crate) use http::{LegacyHttp, probe as probe_http};
pub(crate) use live::{Held, Live, Turn};
pub(crate) use push::Dispatch;
pub(crate) use session::Session;
pub(crate) use url::{MAX_URL_RETRIES, Required, completion, consent, required};
pub(crate) use wire::Wire;
