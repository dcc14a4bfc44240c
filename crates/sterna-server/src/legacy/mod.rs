//! The 2025-11-25 era, server side — a wing around the core: `initialize` opens a session
//! that follows the negotiated revision; its requests are decoded here once
//! (`LegacyRequest`), the MRTR-capable methods run through the core's calls in a push
//! loop that turns each round's questions into real requests to the client, and every
//! outcome is rendered as 2025 clients read it. The transports' sides of the era live with
//! the transports (`http/legacy/`, and the session of a stdio connection).

mod changes;
mod lists;
mod pushes;
mod render;
mod serve;
mod session;
mod settings;
mod shim;

pub(crate) use changes::notification as change_notification;
pub(crate) use lists::LegacyLists;
#[cfg(feature = "http")]
pub(crate) use pushes::{PushWatch, Pushes};
#[cfg(feature = "http")]
pub(crate) use serve::LegacyRequest;
#[cfg(feature = "http")]
pub(crate) use session::Declared;
pub(crate) use session::LegacySession;
pub use session::SessionRecord;
pub use shim::LegacyLimits;

use crate::server::core::Server;
use crate::server::lists::Catalog;
use crate::server::typemap::TypeMap;
use crate::server::wing::{Era, Wing, Wings};

/// The era's state on a server: its list pages and `initialize` answer, and its limits.
pub(crate) struct LegacyWing {
    lists: LegacyLists,
    limits: LegacyLimits,
}

/// An era: it adds nothing inside the core (no method, hook or capability of 2026-07-28
/// requests); it serves its own requests around it, through `initialize`.
impl Wing<Server> for LegacyWing {
    fn versions(&self) -> &'static [&'static str] {
        &sterna_types::legacy::LEGACY_VERSIONS[..3]
    }
}

/// Adds the era, last: its `initialize` capabilities include what the other wings
/// declare for 2025 sessions.
pub(crate) fn register(
    wings: &mut Wings<Server>,
    settings: &TypeMap,
    catalog: &Catalog,
    instructions: Option<&str>,
    page_size: usize,
) {
    let mut capabilities = catalog.capabilities();
    wings.capabilities(Era::Legacy, &mut capabilities);
    let lists = LegacyLists::build(catalog, &capabilities, instructions, page_size);
    let limits = settings.get::<LegacyLimits>().copied().unwrap_or_default();
    wings.add(LegacyWing { lists, limits });
}

/// A server as its 2025-11-25 era serves it.
#[derive(Clone, Copy)]
pub(crate) struct Legacy<'s> {
    server: &'s Server,
    wing: &'s LegacyWing,
}

impl<'s> Legacy<'s> {
    /// The era of `server` (`None`: built without it).
    pub(crate) fn of(server: &'s Server) -> Option<Self> {
        let wing = server.wings().get::<LegacyWing>()?;
        Some(Self { server, wing })
    }
}
