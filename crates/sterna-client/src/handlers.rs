//! What the client can answer: elicitation (form, URL), sampling, roots.
//!
//! The capabilities a client declares are derived from the handlers registered: a client
//! never declares what it cannot do.

use super::error::Refusal;
use futures_util::future::BoxFuture;
use std::future::Future;
use std::sync::Arc;
use sterna_types::elicitation::{ElicitFormParams, ElicitResult, ElicitUrlParams};
use sterna_types::roots::Root;
use sterna_types::sampling::{CreateMessageRequestParams, CreateMessageResult};

type Fut<T> = BoxFuture<'static, T>;

/// Answers form elicitations (ask the user; offer decline and cancel).
pub trait FormHandler: Send + Sync + 'static {
    /// Shows the form and returns what the user did.
    fn elicit(&self, form: ElicitFormParams) -> Fut<ElicitResult>;
}

/// Answers URL elicitations (show the full URL, get consent, open it outside the client).
pub trait UrlHandler: Send + Sync + 'static {
    /// Returns `accept` once the user agreed to open the URL.
    fn elicit_url(&self, request: ElicitUrlParams) -> Fut<ElicitResult>;
}

/// Answers sampling requests (a deprecated feature): run the model, or refuse.
pub trait SamplingHandler: Send + Sync + 'static {
    /// Samples the model. A refusal abandons the call.
    fn sample(
        &self,
        request: CreateMessageRequestParams,
    ) -> Fut<Result<CreateMessageResult, Refusal>>;
}

/// Answers roots requests (a deprecated feature).
pub trait RootsHandler: Send + Sync + 'static {
    /// The roots to expose (`file://` URIs only). A refusal abandons the call.
    fn roots(&self) -> Fut<Result<Vec<Root>, Refusal>>;
}

impl<F, R> FormHandler for F
where
    F: Fn(ElicitFormParams) -> R + Send + Sync + 'static,
    R: Future<Output = ElicitResult> + Send + 'static,
{
    fn elicit(&self, form: ElicitFormParams) -> Fut<ElicitResult> {
        Box::pin(self(form))
    }
}

impl<F, R> UrlHandler for F
where
    F: Fn(ElicitUrlParams) -> R + Send + Sync + 'static,
    R: Future<Output = ElicitResult> + Send + 'static,
{
    fn elicit_url(&self, request: ElicitUrlParams) -> Fut<ElicitResult> {
        Box::pin(self(request))
    }
}

impl<F, R> SamplingHandler for F
where
    F: Fn(CreateMessageRequestParams) -> R + Send + Sync + 'static,
    R: Future<Output = Result<CreateMessageResult, Refusal>> + Send + 'static,
{
    fn sample(
        &self,
        request: CreateMessageRequestParams,
    ) -> Fut<Result<CreateMessageResult, Refusal>> {
        Box::pin(self(request))
    }
}

impl<F, R> RootsHandler for F
where
    F: Fn() -> R + Send + Sync + 'static,
    R: Future<Output = Result<Vec<Root>, Refusal>> + Send + 'static,
{
    fn roots(&self) -> Fut<Result<Vec<Root>, Refusal>> {
        Box::pin(self())
    }
}

/// A fixed list of roots.
#[derive(Debug, Clone)]
pub(crate) struct StaticRoots(pub(crate) Arc<Vec<Root>>);

impl RootsHandler for StaticRoots {
    fn roots(&self) -> Fut<Result<Vec<Root>, Refusal>> {
        let r = self.0.clone();
        Box::pin(async move { Ok((*r).clone()) })
    }
}

/// The handlers of a client.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) form: Option<Arc<dyn FormHandler>>,
    pub(crate) url: Option<Arc<dyn UrlHandler>>,
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    pub(crate) sampling_tools: bool,
    pub(crate) roots: Option<Arc<dyn RootsHandler>>,
}
