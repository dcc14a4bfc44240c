//! The server side of [sterna](https://docs.rs/sterna): an MCP server for revision
//! 2026-07-28 built around Multi Round-Trip Requests, with the 2025-11-25 era and the
//! tasks extension as wings around its core. Most users depend on the `sterna` facade
//! (feature `server`) and reach this crate as `sterna_server`.
//!
//! The public interface is: the server and its builder, handlers and their context
//! ([`Server`], [`ServerBuilder`], [`Tool`], [`Prompt`], [`Resource`], [`Context`] …) at
//! the root; asking the client in [`mrtr`]; `requestState` protection in [`state`]; the
//! stdio transport in [`transport`]; Streamable HTTP and the resource server in `http`
//! (feature `http`); tracing in [`trace`]; the wings' own items in `legacy` (feature
//! `legacy`), `tasks` (feature `tasks`) and `skills` (feature `skills`).

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
#[path = "fuzz/mod.rs"]
pub mod __fuzz;
mod definition;
mod error;
mod fast_map;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "legacy")]
pub mod legacy;
pub mod metrics;
pub mod mrtr;
mod server;
#[cfg(feature = "skills")]
pub mod skills;
pub mod state;
#[cfg(feature = "tasks")]
pub mod tasks;
pub mod trace;
pub mod transport;
mod wake;

pub use definition::{DefinitionError, TemplateProblem, Unfit};
pub use error::{BuildError, HandlerError};
pub use server::{
    AccessGrant, Asking, AskingPrompt, AskingResource, Change, Changes, CompletionRequest, Context,
    DEFAULT_LISTENS_PER_PRINCIPAL, Declarative, Era, Handler, IntoCompletion, IntoPromptResult,
    IntoResourceResult, IntoToolResult, Json, KeysChosen, NeedsKeys, NoArgs, Notifier, Principal,
    Prompt, PromptDef, QuotaKey, RequestEnv, Resource, ResourceBase, ResourceDef, ResourceTemplate,
    Response, Server, ServerBuilder, Tool, ToolDef,
};
