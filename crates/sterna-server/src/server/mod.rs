//! The server: a router of tools, prompts, resources and completions, built once and
//! shared by every request, independent of the transport.
//!
//! A request goes through visible stages: classify (`inbound.rs`), decode `_meta` and
//! params (`request.rs`, `prepare.rs`), route (`dispatch.rs`) to a method (`call.rs`,
//! `complete.rs`, `listen.rs`, the lists), and respond (`response.rs`). MRTR-capable
//! methods run one round (`round.rs`): open the state, resolve answers, run the handler,
//! seal the next. Every method ends in a typed [`Outcome`](outcome::Outcome) that the era
//! renders. Eras and extensions plug in as wings (`wing.rs`): the 2025-11-25 era
//! (`crate::legacy`) and the tasks extension (`crate::tasks`) live outside this folder.

mod asking;
pub(crate) mod builder;
pub(crate) mod call;
pub(crate) mod changes;
pub(crate) mod complete;
mod completion;
pub(crate) mod context;
pub(crate) mod core;
mod dispatch;
pub(crate) mod finalize;
pub(crate) mod flow;
pub(crate) mod guard;
pub(crate) mod handler;
pub(crate) mod inbound;
mod listen;
pub(crate) mod lists;
mod meta_cache;
mod notifier;
pub(crate) mod outcome;
pub(crate) mod places;
pub(crate) mod prepare;
pub(crate) mod principal;
mod prompt;
mod public;
#[cfg(feature = "http")]
mod queue;
pub(crate) mod quota;
mod registry;
pub(crate) mod request;
mod resource;
pub(crate) mod response;
pub(crate) mod round;
pub(crate) mod routes;
pub(crate) mod target;
pub(crate) mod tool;
pub(crate) mod typemap;
pub(crate) mod uri_template;
pub(crate) mod wing;

pub use builder::{KeysChosen, NeedsKeys, ServerBuilder};
pub use changes::{Change, Changes};
pub use completion::{CompletionRequest, IntoCompletion};
pub use context::{Context, RequestEnv};
pub use handler::{
    Declarative, Handler, IntoPromptResult, IntoResourceResult, IntoToolResult, Json, NoArgs,
};
pub use notifier::Notifier;
pub use places::DEFAULT_LISTENS_PER_PRINCIPAL;
pub use principal::{AccessGrant, Principal};
pub use prompt::{AskingPrompt, Prompt, PromptDef};
pub use quota::QuotaKey;
pub use resource::{AskingResource, Resource, ResourceBase, ResourceDef, ResourceTemplate};
pub use response::Response;
pub use tool::{Asking, Tool, ToolDef};
pub use wing::Era;

pub use core::Server;
pub(crate) use guard::log_panic;
#[cfg(feature = "http")]
pub(crate) use notifier::Notifications;
