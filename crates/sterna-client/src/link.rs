//! What the client talks through, and what it found at the other end.

use super::legacy::{Dispatch, Session};
use super::transport::{StdioTransport, StreamTransport, Transport};
use std::any::Any;
use std::sync::Arc;

/// A transport that can also carry a 2025-11-25 session (sterna's own: stdio, byte
/// streams, Streamable HTTP). Other transports speak 2026-07-28 only.
#[derive(Debug, Clone)]
pub(crate) enum Dual {
    Stdio(Arc<StdioTransport>),
    Stream(Arc<StreamTransport>),
    #[cfg(feature = "http")]
    Http(Arc<super::transport::HttpTransport>),
}

impl Dual {
    /// The transport as the 2026-07-28 driver uses it, and its dual-era side if it has
    /// one.
    pub(crate) fn split<T: Transport>(transport: T) -> (Arc<dyn Transport>, Option<Dual>) {
        let any: Box<dyn Any> = Box::new(transport);
        let any = match any.downcast::<StdioTransport>() {
            Ok(t) => {
                let t: Arc<StdioTransport> = Arc::from(t);
                return (t.clone(), Some(Self::Stdio(t)));
            }
            Err(other) => other,
        };
        let any = match any.downcast::<StreamTransport>() {
            Ok(t) => {
                let t: Arc<StreamTransport> = Arc::from(t);
                return (t.clone(), Some(Self::Stream(t)));
            }
            Err(other) => other,
        };
        #[cfg(feature = "http")]
        let any = match any.downcast::<super::transport::HttpTransport>() {
            Ok(t) => {
                let t: Arc<super::transport::HttpTransport> = Arc::from(t);
                return (t.clone(), Some(Self::Http(t)));
            }
            Err(other) => other,
        };
        match any.downcast::<T>() {
            Ok(t) => (Arc::new(*t), None),
            Err(_) => unreachable!("the box holds a T"),
        }
    }

    /// The key under which an HTTP endpoint's era is remembered.
    pub(crate) fn endpoint(&self) -> Option<String> {
        match self {
            #[cfg(feature = "http")]
            Self::Http(h) => Some(h.endpoint().to_string()),
            _ => None,
        }
    }
}

/// An open 2025-11-25 session and the dispatcher of what its server pushes.
#[derive(Debug)]
pub(crate) struct LegacyLink {
    pub(crate) session: Arc<Session>,
    pub(crate) dispatch: Dispatch,
}

/// The era the server was found to speak.
#[derive(Debug, Clone)]
pub(crate) enum Connected {
    /// 2026-07-28; `remembered` when the verdict came from the process-wide memory (a
    /// failure then means probing again).
    Modern { remembered: bool },
    /// A 2025-11-25 session.
    Legacy(Arc<LegacyLink>),
}
