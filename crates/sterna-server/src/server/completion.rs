//! Argument completion (`completion/complete`).

use super::context::Context;
use crate::HandlerError;
use futures_util::future::BoxFuture;
use std::collections::BTreeMap;
use std::future::Future;
use sterna_types::completion::Completion;

/// What the client is completing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionRequest {
    /// The argument (or template variable) name.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Other arguments already given.
    pub context: BTreeMap<String, String>,
}

/// What a completion handler may return: values (`Vec<String>`), a [`Completion`], or a
/// `Result` of those. More than 100 values are cut to 100 with `hasMore: true`.
pub trait IntoCompletion: Send {
    #[doc(hidden)]
    fn into_completion(self) -> Result<Completion, HandlerError>;
}

impl IntoCompletion for Vec<String> {
    fn into_completion(self) -> Result<Completion, HandlerError> {
        Ok(Completion {
            values: self,
            total: None,
            has_more: None,
        })
    }
}

impl IntoCompletion for Completion {
    fn into_completion(self) -> Result<Completion, HandlerError> {
        Ok(self)
    }
}

impl<T: IntoCompletion, E: Into<HandlerError> + Send> IntoCompletion for Result<T, E> {
    fn into_completion(self) -> Result<Completion, HandlerError> {
        self.map_err(Into::into)
            .and_then(IntoCompletion::into_completion)
    }
}

pub(crate) trait Completer: Send + Sync {
    fn complete(
        &self,
        ctx: Context,
        req: CompletionRequest,
    ) -> BoxFuture<'static, Result<Completion, HandlerError>>;
}

struct Fnc<F>(F);

impl<F, Fut, R> Completer for Fnc<F>
where
    F: Fn(Context, CompletionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoCompletion + 'static,
{
    fn complete(
        &self,
        ctx: Context,
        req: CompletionRequest,
    ) -> BoxFuture<'static, Result<Completion, HandlerError>> {
        let fut = (self.0)(ctx, req);
        Box::pin(async move {
            let mut c = fut.await.into_completion()?;
            if c.values.len() > 100 {
                c.total.get_or_insert(c.values.len() as u64);
                c.values.truncate(100);
                c.has_more = Some(true);
            }
            Ok(c)
        })
    }
}

pub(crate) fn boxed_completer<F, Fut, R>(f: F) -> std::sync::Arc<dyn Completer>
where
    F: Fn(Context, CompletionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoCompletion + 'static,
{
    std::sync::Arc::new(Fnc(f))
}
