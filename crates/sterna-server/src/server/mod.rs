//! The server: a router of tools, prompts, resources and completions, built once and
//! shared by every request, independent of the transport.
//!
//! A request goes through visible stages: classify (`inbound.rs`), decode `_meta` and
//! params (`request.rs`, `prepare.rs`), route (`dispatch.rs`) to a method (`call.rs`,
//! `complete.rs`, `listen.rs`, the lists), and respond (`response.rs`). MRTR-capable
//! methods run one round (`round.rs`): open the state, resolve answers, run the handler,
//! seal the next. A 2025-11-25 session's requests go through `legacy/` instead, which runs
//! the same methods and pushes each round's questions to the client.

mod asking;
mod builder;
mod call;
mod changes;
mod complete;
mod completion;
mod context;
mod core;
mod dispatch;
mod finalize;
mod guard;
mod handler;
pub(crate) mod inbound;
pub(crate) mod legacy;
mod listen;
mod lists;
pub(crate) mod outcome;
pub(crate) mod prepare;
mod principal;
mod prompt;
pub(crate) mod quota;
mod registry;
pub(crate) mod request;
mod resource;
mod response;
mod round;
pub(crate) mod target;
pub(crate) mod tasks;
mod tool;
pub(crate) mod typemap;
pub(crate) mod uri_template;
pub(crate) mod wing;

pub use crate::mirror::ParamKind;
pub use builder::{NeedsKeys, ServerBuilder};
pub use changes::{Change, Changes};
pub use completion::{CompletionRequest, IntoCompletion};
pub use context::{Context, Notifier, RequestEnv};
pub use handler::{
    Declarative, Handler, IntoPromptResult, IntoResourceResult, IntoToolResult, Json, NoArgs,
};
pub use principal::{AccessGrant, Principal};
pub use prompt::{AskingPrompt, Prompt, PromptDef};
pub use quota::QuotaKey;
pub use resource::{AskingResource, Resource, ResourceBase, ResourceDef, ResourceTemplate};
pub use response::Response;
pub use tasks::{MemoryTaskStore, StoredTask, TaskStore, TaskStoreError, TaskSupport};
pub use tool::{Asking, Tool, ToolDef};
pub use wing::Era;

pub use core::Server;
pub(crate) use guard::log_panic;

pub use legacy::LegacyLimits;
