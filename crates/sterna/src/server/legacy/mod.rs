//! Serving 2025-11-25 clients with the same handlers: `initialize` opens a session that
//! follows the negotiated revision; the MRTR-capable methods run through a push loop that
//! turns each round's questions into real requests to the client.

mod pushes;
mod render;
mod serve;
mod session;
mod shim;

pub(crate) use pushes::{PushWatch, Pushes};
pub(crate) use session::LegacySession;
pub use session::SessionRecord;
pub use shim::LegacyLimits;
pub(crate) use shim::UrlIds;

/// A result without the 2026 decorations (for pre-rendered pages).
pub(crate) fn strip(raw: &serde_json::value::RawValue) -> Box<serde_json::value::RawValue> {
    render::result(raw)
}
