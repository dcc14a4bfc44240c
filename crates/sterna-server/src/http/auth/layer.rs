//! The authentication layer: one layer, any [`Authenticator`]; challenges, scope checks,
//! and the principal attached to the request.

use super::super::body::McpBody;
use super::super::respond::plain;
use super::challenge::{Challenge, ErrorCode};
use super::error::AuthError;
use super::metadata::{MetadataLayer, ResourceMetadata};
use super::scope::ScopePolicy;
use crate::metrics::{Refusal as Reason, refused};
use crate::server::Principal;
use crate::server::target::Target;
use futures_util::future::BoxFuture;
use http::{HeaderMap, Request, Response, StatusCode};
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

/// The answer refusing a request.
pub(crate) type Refusal = Box<Response<McpBody>>;

/// Turns request headers into a principal: `Ok(None)` when no credentials were given.
///
/// Implementations: [`BearerTokens`](super::BearerTokens) (a fixed map),
/// [`JwtValidator`](super::JwtValidator) (JWT access tokens, with the `jwt` feature),
/// [`Introspection`](super::Introspection) (RFC 7662). A principal from an access token
/// carries its [`AccessGrant`](crate::server::AccessGrant), whose scopes the layer's
/// [`ScopePolicy`] judges.
pub trait Authenticator: Send + Sync + 'static {
    /// Authenticates a request.
    fn authenticate<'a>(
        &'a self,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, Result<Option<Principal>, AuthError>>;
}

/// A tower layer that authenticates every request, checks its scopes, and attaches its
/// [`Principal`] to the request's extensions (where [`McpService`](super::super::McpService)
/// finds it, and binds `requestState` to it).
///
/// * No credentials: `401` with `WWW-Authenticate: Bearer realm="mcp"` plus, when
///   configured, `scope="<scopes every request needs>"` and `resource_metadata="<URL>"`
///   (unless [`allow_anonymous`](Self::allow_anonymous)).
/// * Credentials refused: `401` with `error="invalid_token"` and a short
///   `error_description` (never the token).
/// * Scopes missing: `403` with `error="insufficient_scope"` and every scope the
///   operation needs (step-up).
/// * The validator's upstream down: `503`.
#[derive(Clone)]
pub struct AuthLayer {
    auth: Arc<dyn Authenticator>,
    required: bool,
    realm: Arc<str>,
    metadata: Option<(Arc<str>, MetadataLayer)>,
    scopes: Arc<ScopePolicy>,
}

impl fmt::Debug for AuthLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthLayer")
            .field("required", &self.required)
            .field("realm", &self.realm)
            .field("metadata", &self.metadata.as_ref().map(|m| &m.0))
            .field("scopes", &self.scopes)
            .finish()
    }
}

impl AuthLayer {
    /// Authenticates with `auth`; anonymous callers are refused (401) until
    /// [`allow_anonymous`](Self::allow_anonymous).
    pub fn new(auth: impl Authenticator) -> Self {
        Self {
            auth: Arc::new(auth),
            required: true,
            realm: Arc::from("mcp"),
            metadata: None,
            scopes: Arc::new(ScopePolicy::new()),
        }
    }

    /// Lets requests without credentials through as the anonymous principal (wrong
    /// credentials are still refused, and a request that needs a scope asks for one).
    pub fn allow_anonymous(mut self) -> Self {
        self.required = false;
        self
    }

    /// The realm named in `WWW-Authenticate`.
    pub fn realm(mut self, realm: impl Into<Arc<str>>) -> Self {
        self.realm = realm.into();
        self
    }

    /// The protected-resource metadata: challenges name its URL, and
    /// [`HttpServer`](super::super::HttpServer) serves it (mounting the endpoint
    /// yourself, serve it with [`ResourceMetadata::layer`]).
    pub fn resource_metadata(mut self, metadata: ResourceMetadata) -> Self {
        self.metadata = Some((metadata.url().into(), metadata.layer()));
        self
    }

    /// The scopes requests need.
    pub fn scopes(mut self, policy: ScopePolicy) -> Self {
        self.scopes = Arc::new(policy);
        self
    }

    /// The layer serving the metadata document, if there is one.
    pub(crate) fn metadata_layer(&self) -> Option<MetadataLayer> {
        self.metadata.as_ref().map(|m| m.1.clone())
    }

    fn metadata_url(&self) -> Option<&str> {
        self.metadata.as_ref().map(|m| &*m.0)
    }

    fn challenge<'a>(
        &'a self,
        error: Option<(ErrorCode, String)>,
        scope: Vec<&'a str>,
        url: Option<&'a str>,
    ) -> Refusal {
        Box::new(
            Challenge {
                realm: &self.realm,
                error,
                scope,
                resource_metadata: url,
            }
            .response(),
        )
    }

    /// The principal of a request, or the answer refusing it.
    async fn principal(&self, headers: &HeaderMap) -> Result<Principal, Refusal> {
        let url = self.metadata_url();
        let refuse = |code: ErrorCode, e: &AuthError| {
            tracing::debug!(reason = %e, "credentials refused");
            refused(Reason::InvalidToken, 401);
            let scope = self.scopes.base();
            Err(self.challenge(Some((code, e.to_string())), scope, url))
        };
        match self.auth.authenticate(headers).await {
            Ok(Some(p)) => Ok(p),
            Ok(None) if self.required => {
                refused(Reason::Unauthenticated, 401);
                Err(self.challenge(None, self.scopes.base(), url))
            }
            Ok(None) => Ok(Principal::anonymous()),
            Err(e @ AuthError::InvalidRequest(_)) => refuse(ErrorCode::InvalidRequest, &e),
            Err(e @ AuthError::InvalidToken(_)) => refuse(ErrorCode::InvalidToken, &e),
            Err(e @ AuthError::Unavailable(_)) => {
                tracing::warn!(error = %e, "authentication unavailable");
                refused(Reason::AuthUnavailable, 503);
                Err(Box::new(plain(StatusCode::SERVICE_UNAVAILABLE)))
            }
        }
    }

    fn check(&self, principal: &Principal, required: Vec<&str>) -> Result<(), Refusal> {
        if self.scopes.satisfied(principal.grant(), &required) {
            return Ok(());
        }
        let url = self.metadata_url();
        if principal.id().is_none() {
            // Anonymous: authenticate first (401), asking for what this request needs.
            refused(Reason::Unauthenticated, 401);
            return Err(self.challenge(None, required, url));
        }
        refused(Reason::InsufficientScope, 403);
        tracing::debug!(principal = ?principal.id(), required = ?required, "insufficient scope");
        let error = Some((
            ErrorCode::InsufficientScope,
            "the token lacks a scope this operation needs".to_owned(),
        ));
        Err(self.challenge(error, required, url))
    }
}

impl<S> tower_layer::Layer<S> for AuthLayer {
    type Service = AuthService<S>;

    fn layer(&self, inner: S) -> AuthService<S> {
        AuthService {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service [`AuthLayer`] wraps around an inner service.
#[derive(Clone, Debug)]
pub struct AuthService<S> {
    inner: S,
    layer: AuthLayer,
}

impl<S, B> tower_service::Service<Request<B>> for AuthService<S>
where
    S: tower_service::Service<Request<B>, Response = Response<McpBody>> + Clone + Send + 'static,
    S::Future: Send,
    B: Send + 'static,
{
    type Response = Response<McpBody>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Response<McpBody>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let layer = self.layer.clone();
        Box::pin(async move {
            let principal = match layer.principal(req.headers()).await {
                Ok(p) => p,
                Err(refused) => return Ok(*refused),
            };
            if let Err(refused) = layer.check(&principal, layer.scopes.base()) {
                return Ok(*refused);
            }
            if layer.scopes.has_target_rules() {
                // The endpoint judges the target once it has decoded the request it
                // runs (either era): see `ScopeCheck`.
                req.extensions_mut().insert(ScopeCheck(layer));
            }
            req.extensions_mut().insert(principal);
            inner.call(req).await
        })
    }
}

/// The per-target part of a [`ScopePolicy`], left by [`AuthLayer`] in the request's
/// extensions for the endpoint: it judges the target of the request **as decoded for
/// execution** ([`Target`]), so the scopes checked are those of the tool (prompt,
/// resource) that runs, whatever the era or shape of the body.
#[derive(Clone)]
pub(crate) struct ScopeCheck(AuthLayer);

impl ScopeCheck {
    /// `Err` is the `403` (or, anonymous, `401`) challenge refusing the request.
    pub(crate) fn authorize(
        &self,
        principal: &Principal,
        target: Target<'_>,
    ) -> Result<(), Refusal> {
        self.0.check(principal, self.0.scopes.required(target))
    }
}
