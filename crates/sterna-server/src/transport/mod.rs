//! Transports: newline-delimited JSON over any byte stream (stdio, an in-memory duplex
//! for tests, a Unix socket …).

mod connection;
#[cfg(feature = "legacy")]
mod legacy;
#[cfg(not(feature = "legacy"))]
#[path = "no_legacy.rs"]
mod legacy;
mod stream;

pub use stream::{StreamOptions, duplex, serve_stdio, serve_stream};
