//! Handler glue: what handlers look like and what they may return.

use super::context::Context;
use crate::error::HandlerError;
use crate::mrtr::{NeedsInput, Plan};
use base64::Engine;
use futures_util::FutureExt;
use futures_util::future::{Either, Map, Ready, ready};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::marker::PhantomData;
use sterna_types::content::{
    BlobResourceContents, ContentBlock, ResourceContents, TextResourceContents,
};
use sterna_types::mrtr::InputRequiredResult;
use sterna_types::mrtr::Outcome;
use sterna_types::prompts::{GetPromptResult, PromptMessage};
use sterna_types::resources::ReadResourceResult;
use sterna_types::tools::CallToolResult;

/// An async function of a [`Context`] and typed arguments.
///
/// Implemented for every `Fn(Context, A) -> impl Future` closure or `async fn`, and for
/// declarative handlers built with `ask(..).run(..)`.
pub trait Handler<A, R>: Send + Sync + 'static {
    /// The future the handler returns.
    type Future: Future<Output = R> + Send + 'static;

    /// Runs the handler.
    fn call(&self, ctx: Context, args: A) -> Self::Future;
}

impl<F, Fut, A, R> Handler<A, R> for F
where
    F: Fn(Context, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
{
    type Future = Fut;

    fn call(&self, ctx: Context, args: A) -> Fut {
        self(ctx, args)
    }
}

/// A declarative handler: the plan's questions are resolved first; the body runs only
/// when every answer is there (so its side effects happen exactly once per flow).
pub struct Declarative<A, P, B> {
    pub(crate) plan: P,
    pub(crate) body: B,
    pub(crate) _a: PhantomData<fn(A)>,
}

impl<A, P, B> std::fmt::Debug for Declarative<A, P, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Declarative")
    }
}

impl<A, P, B, Fut, R> Handler<A, Result<R, HandlerError>> for Declarative<A, P, B>
where
    A: Send + 'static,
    P: Plan<A>,
    B: Fn(Context, A, P::Answers) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: Send + 'static,
{
    type Future =
        Either<Ready<Result<R, HandlerError>>, Map<Fut, fn(R) -> Result<R, HandlerError>>>;

    fn call(&self, ctx: Context, args: A) -> Self::Future {
        let answers = ctx
            .with_resolver(|r| self.plan.resolve(&args, r))
            .unwrap_or_else(|| Err(NeedsInput::new()));
        if answers.is_ok() && ctx.phase() == super::context::Phase::QuestionsOnly {
            // Everything is answered: the body runs later, for whoever asked.
            ctx.mark_answered();
            return Either::Left(ready(Err(NeedsInput::new().into())));
        }
        match answers {
            Ok(answers) => Either::Right(
                (self.body)(ctx, args, answers).map(Ok as fn(R) -> Result<R, HandlerError>),
            ),
            Err(n) => Either::Left(ready(Err(n.into()))),
        }
    }
}

/// What a handler produced, before the SDK turns it into a response. (Not nameable
/// outside the crate: the conversion traits are implemented by sterna only.)
#[doc(hidden)]
#[expect(
    missing_debug_implementations,
    reason = "public only so the conversion traits can name it; not nameable outside the crate"
)]
pub enum Produced<T> {
    #[doc(hidden)]
    Complete(T),
    #[doc(hidden)]
    InputRequired(InputRequiredResult),
    #[doc(hidden)]
    Failed(HandlerError),
}

/// Arguments of a tool or prompt that takes none. Accepts an absent or empty `arguments`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NoArgs {}

/// Structured output: serialized into `structuredContent` (and, as JSON text, into
/// `content` for clients that only read text).
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);

/// What a tool handler may return.
///
/// Implemented for text (`String`, `&'static str`), content blocks, [`CallToolResult`],
/// [`Json<T>`], [`InputRequiredResult`] and [`Outcome`] (the low-level way to ask), and
/// `Result`s of those.
pub trait IntoToolResult: Send {
    #[doc(hidden)]
    fn into_tool(self) -> Produced<CallToolResult>;
}

/// What a prompt handler may return: [`GetPromptResult`], messages, a `String` (one user
/// message), [`InputRequiredResult`], and `Result`s of those.
pub trait IntoPromptResult: Send {
    #[doc(hidden)]
    fn into_prompt(self) -> Produced<GetPromptResult>;
}

/// What a resource handler may return: [`ReadResourceResult`], [`ResourceContents`], a
/// `String` (text contents) or `Vec<u8>` (binary contents) for the URI read,
/// [`InputRequiredResult`], and `Result`s of those.
pub trait IntoResourceResult: Send {
    #[doc(hidden)]
    fn into_resource(self, uri: &str, mime: Option<&str>) -> Produced<ReadResourceResult>;
}

impl IntoToolResult for CallToolResult {
    fn into_tool(self) -> Produced<CallToolResult> {
        Produced::Complete(self)
    }
}

impl IntoToolResult for String {
    fn into_tool(self) -> Produced<CallToolResult> {
        Produced::Complete(CallToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool(self) -> Produced<CallToolResult> {
        Produced::Complete(CallToolResult::text(self))
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool(self) -> Produced<CallToolResult> {
        Produced::Complete(CallToolResult::success(vec![self]))
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool(self) -> Produced<CallToolResult> {
        Produced::Complete(CallToolResult::success(self))
    }
}

impl<T: Serialize + Send> IntoToolResult for Json<T> {
    fn into_tool(self) -> Produced<CallToolResult> {
        match serde_json::to_value(&self.0) {
            Ok(v) => {
                let text = v.to_string();
                Produced::Complete(CallToolResult {
                    content: vec![ContentBlock::text(text)],
                    structured_content: Some(v),
                    ..CallToolResult::default()
                })
            }
            Err(e) => Produced::Failed(e.into()),
        }
    }
}

impl IntoToolResult for InputRequiredResult {
    fn into_tool(self) -> Produced<CallToolResult> {
        Produced::InputRequired(self)
    }
}

impl<T: IntoToolResult, E: Into<HandlerError> + Send> IntoToolResult for Result<T, E> {
    fn into_tool(self) -> Produced<CallToolResult> {
        match self {
            Ok(t) => t.into_tool(),
            Err(e) => Produced::Failed(e.into()),
        }
    }
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt(self) -> Produced<GetPromptResult> {
        Produced::Complete(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt(self) -> Produced<GetPromptResult> {
        Produced::Complete(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt(self) -> Produced<GetPromptResult> {
        Produced::Complete(GetPromptResult::new(vec![self]))
    }
}

impl IntoPromptResult for String {
    fn into_prompt(self) -> Produced<GetPromptResult> {
        Produced::Complete(GetPromptResult::new(vec![PromptMessage::user(self)]))
    }
}

impl IntoPromptResult for InputRequiredResult {
    fn into_prompt(self) -> Produced<GetPromptResult> {
        Produced::InputRequired(self)
    }
}

impl<T: IntoPromptResult, E: Into<HandlerError> + Send> IntoPromptResult for Result<T, E> {
    fn into_prompt(self) -> Produced<GetPromptResult> {
        match self {
            Ok(t) => t.into_prompt(),
            Err(e) => Produced::Failed(e.into()),
        }
    }
}

impl IntoResourceResult for ReadResourceResult {
    fn into_resource(self, _: &str, _: Option<&str>) -> Produced<ReadResourceResult> {
        Produced::Complete(self)
    }
}

impl IntoResourceResult for ResourceContents {
    fn into_resource(self, _: &str, _: Option<&str>) -> Produced<ReadResourceResult> {
        Produced::Complete(ReadResourceResult::new(vec![self]))
    }
}

impl IntoResourceResult for Vec<ResourceContents> {
    fn into_resource(self, _: &str, _: Option<&str>) -> Produced<ReadResourceResult> {
        Produced::Complete(ReadResourceResult::new(self))
    }
}

impl IntoResourceResult for String {
    fn into_resource(self, uri: &str, mime: Option<&str>) -> Produced<ReadResourceResult> {
        Produced::Complete(ReadResourceResult::new(vec![ResourceContents::Text(
            TextResourceContents {
                uri: uri.to_owned(),
                mime_type: mime.map(str::to_owned),
                text: self,
                meta: None,
            },
        )]))
    }
}

impl IntoResourceResult for Vec<u8> {
    fn into_resource(self, uri: &str, mime: Option<&str>) -> Produced<ReadResourceResult> {
        Produced::Complete(ReadResourceResult::new(vec![ResourceContents::Blob(
            BlobResourceContents {
                uri: uri.to_owned(),
                mime_type: mime.map(str::to_owned),
                blob: base64::engine::general_purpose::STANDARD.encode(self),
                meta: None,
            },
        )]))
    }
}

impl IntoResourceResult for InputRequiredResult {
    fn into_resource(self, _: &str, _: Option<&str>) -> Produced<ReadResourceResult> {
        Produced::InputRequired(self)
    }
}

impl<T: IntoResourceResult, E: Into<HandlerError> + Send> IntoResourceResult for Result<T, E> {
    fn into_resource(self, uri: &str, mime: Option<&str>) -> Produced<ReadResourceResult> {
        match self {
            Ok(t) => t.into_resource(uri, mime),
            Err(e) => Produced::Failed(e.into()),
        }
    }
}

impl IntoToolResult for Outcome<CallToolResult> {
    fn into_tool(self) -> Produced<CallToolResult> {
        match self {
            Outcome::Complete(r) => Produced::Complete(r),
            Outcome::InputRequired(r) => Produced::InputRequired(r),
        }
    }
}

impl IntoPromptResult for Outcome<GetPromptResult> {
    fn into_prompt(self) -> Produced<GetPromptResult> {
        match self {
            Outcome::Complete(r) => Produced::Complete(r),
            Outcome::InputRequired(r) => Produced::InputRequired(r),
        }
    }
}

impl IntoResourceResult for Outcome<ReadResourceResult> {
    fn into_resource(self, _: &str, _: Option<&str>) -> Produced<ReadResourceResult> {
        match self {
            Outcome::Complete(r) => Produced::Complete(r),
            Outcome::InputRequired(r) => Produced::InputRequired(r),
        }
    }
}
