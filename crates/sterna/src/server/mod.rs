//! The server: a router of tools, prompts, resources and completions, built once and
//! shared by every request, independent of the transport.

//!
//! A request goes through visible stages: classify ([`inbound`]), decode `_meta` and
//! params ([`request`], [`prepare`]), route ([`dispatch`]) to a method ([`call`],
//! `completion`, `listen`, the lists), and respond ([`response`]). MRTR-capable methods
//! run one [`round`]: open the state, resolve answers, run the handler, seal the next.

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
mod listen;
mod lists;
pub(crate) mod prepare;
mod prompt;
mod registry;
pub(crate) mod request;
mod resource;
mod response;
mod round;
mod tool;
pub(crate) mod uri_template;

pub use crate::mirror::ParamKind;
pub use builder::{NeedsKeys, ServerBuilder};
pub use changes::{Change, Changes};
pub use completion::{CompletionRequest, IntoCompletion};
pub use context::{Context, Notifier, Principal, RequestEnv};
pub use handler::{
    Declarative, Handler, IntoPromptResult, IntoResourceResult, IntoToolResult, Json, NoArgs,
};
pub use prompt::{AskingPrompt, Prompt, PromptDef};
pub use resource::{AskingResource, Resource, ResourceBase, ResourceDef, ResourceTemplate};
pub use response::Response;
pub use tool::{Asking, Tool, ToolDef};

pub use core::Server;
pub(crate) use guard::log_panic;
