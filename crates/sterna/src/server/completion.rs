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

impl super::Server {
    /// `completion/complete`: the registered completer of a prompt argument or a template
    /// variable; no completer, no values.
    pub(crate) async fn complete(
        &self,
        id: sterna_types::jsonrpc::RequestId,
        meta: std::sync::Arc<sterna_types::meta::RequestMeta>,
        p: super::request::CompleteParams,
        env: super::context::RequestEnv,
    ) -> Option<super::response::Response> {
        use super::guard::{guarded, started};
        use sterna_types::error::ErrorObject;
        let (completer, target) = self.completer(&p);
        let ctx = Context::from_inner(super::context::Inner::request(
            self,
            id.clone(),
            "completion/complete",
            target.into(),
            meta,
            &env,
        ));
        let completion = match completer {
            None => Ok(Completion::default()),
            Some(c) => {
                let req = CompletionRequest {
                    argument: p.argument.name,
                    value: p.argument.value,
                    context: p.context.and_then(|c| c.arguments).unwrap_or_default(),
                };
                match started(|| Ok(c.complete(ctx, req))) {
                    Err(e) => Err(e),
                    Ok(fut) => match guarded(fut, &env.cancel).await? {
                        Ok(Ok(c)) => Ok(c),
                        Ok(Err(e)) => Err(super::finalize::rpc_error(e)),
                        Err(()) => Err(ErrorObject::internal("Internal error")),
                    },
                }
            }
        };
        let body = completion.map(|completion| self.complete_result(completion));
        Some(super::response::Response::with(id, body))
    }

    fn completer(
        &self,
        p: &super::request::CompleteParams,
    ) -> (Option<&std::sync::Arc<dyn Completer>>, String) {
        use sterna_types::completion::CompletionReference;
        match &p.reference {
            CompletionReference::Prompt { name, .. } => (
                self.inner
                    .prompts
                    .get(name.as_str())
                    .and_then(|e| e.completions.get(&p.argument.name)),
                name.clone(),
            ),
            CompletionReference::Resource { uri } => (
                self.inner
                    .templates
                    .iter()
                    .find(|t| t.template == *uri)
                    .and_then(|t| t.completions.get(&p.argument.name)),
                uri.clone(),
            ),
        }
    }

    fn complete_result(&self, completion: Completion) -> Box<serde_json::value::RawValue> {
        use sterna_types::completion::CompleteResult;
        use sterna_types::meta::ResultMeta;
        use sterna_types::result::ResultType;
        serde_json::value::to_raw_value(&CompleteResult {
            result_type: ResultType::Complete,
            completion,
            meta: Some(ResultMeta {
                server_info: Some(self.inner.info.clone()),
                ..ResultMeta::default()
            }),
        })
        .expect("results serialize")
    }
}
