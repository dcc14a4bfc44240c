// The crate's front page: its README (the quick start, the features; what crates.io shows),
// then the guide.
#![doc = include_str!("../README.md")]
#![doc = include_str!("../docs/guide.md")]

#[cfg(feature = "client")]
pub use sterna_client as client;
#[cfg(feature = "http")]
pub use sterna_net as net;
#[cfg(feature = "server")]
pub use sterna_server as server;
/// The wire types of the Model Context Protocol (2026-07-28, and the 2025-11-25 shapes
/// the eras share).
pub use sterna_types as types;

#[cfg(all(feature = "server", feature = "client"))]
pub mod guides;

/// The fuzz targets' bodies, both sides (feature `fuzzing`; not a stable API).
#[cfg(all(feature = "fuzzing", feature = "server", feature = "client"))]
#[doc(hidden)]
pub mod __fuzz {
    pub use sterna_client::__fuzz::{jsonrpc_client, sse};
    pub use sterna_server::__fuzz::{
        Target, form, forwarded, header_value, jsonrpc_server, state_open, uri_template,
    };

    /// Every target, by the name of its `fuzz/fuzz_targets/<name>.rs` and corpus folder.
    pub const TARGETS: &[(&str, Target)] = &[
        ("jsonrpc_server", jsonrpc_server),
        ("jsonrpc_client", jsonrpc_client),
        ("sse", sse),
        ("state_open", state_open),
        ("form", form),
        ("header_value", header_value),
        ("uri_template", uri_template),
        ("forwarded", forwarded),
    ];
}
