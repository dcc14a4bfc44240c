#![doc = include_str!("../docs/guide.md")]

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
#[path = "fuzz/mod.rs"]
pub mod __fuzz;
pub mod client;
mod definition;
mod error;
pub mod guides;
pub mod header_value;
#[cfg(feature = "http")]
pub mod http;
mod mirror;
pub mod mrtr;
pub mod server;
pub mod state;
pub mod trace;
pub mod transport;

pub use definition::{DefinitionError, HeaderProblem, TemplateProblem, Unfit};
pub use error::{BuildError, HandlerError};
pub use mrtr::{Elicitation, NeedsInput};
pub use server::{Context, Server};
pub use state::StateKeys;

/// The wire types (re-exported from `sterna-types`).
pub use sterna_types as types;

/// Derive macros and traits handlers need: `serde` and `schemars` re-exported so the
/// versions always match the SDK's.
pub use schemars;
pub use serde;
pub use serde_json;
