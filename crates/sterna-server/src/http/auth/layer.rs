//! The authentication layer: one layer, any [`Authenticator`]; challenges, scope checks,
//! DPoP, and the principal attached to the request.

use super::super::body::McpBody;
use super::credentials::{Presented, TokenScheme};
#[cfg(feature = "jwt")]
use super::dpop::Dpop;
use super::error::AuthError;
use super::metadata::{MetadataLayer, ResourceMetadata};
use super::scope::ScopePolicy;
use crate::server::Principal;
use crate::server::target::Target;
use futures_util::future::BoxFuture;
use http::{HeaderValue, Request, Response};
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

/// The answer refusing a request.
pub(crate) type Refusal = Box<Response<McpBody>>;

/// Turns what a request presented into a principal: `Ok(None)` when it gave no
/// credentials this authenticator knows.
///
/// [`AuthLayer`] reads the `Authorization` header once ([`Presented`]): the access token
/// an authenticator validates is the one whose scheme, binding and DPoP proof the layer
/// judges. Implementations: [`BearerTokens`](super::BearerTokens) (a fixed map),
/// [`JwtValidator`](super::JwtValidator) (JWT access tokens, with the `jwt` feature),
/// [`Introspection`](super::Introspection) (RFC 7662). A principal from an access token
/// carries its [`AccessGrant`](crate::server::AccessGrant), whose scopes the layer's
/// [`ScopePolicy`] judges and whose `cnf.jkt` binds it to a DPoP key.
pub trait Authenticator: Send + Sync + 'static {
    /// Authenticates a request.
    fn authenticate<'a>(
        &'a self,
        presented: Presented<'a>,
    ) -> BoxFuture<'a, Result<Option<Principal>, AuthError>>;
}

/// A tower layer that authenticates every request, checks its scopes, and attaches its
/// [`Principal`] to the request's extensions (where [`McpService`](super::super::McpService)
/// finds it, and binds `requestState` to it).
///
/// * No credentials: `401` with `WWW-Authenticate: Bearer realm="mcp"` (and/or `DPoP
///   algs="…"`, see [`dpop`](Self::dpop)) plus, when configured, `scope="<scopes every
///   request needs>"` and `resource_metadata="<URL>"` (unless
///   [`allow_anonymous`](Self::allow_anonymous)).
/// * Credentials refused: `401` with `error="invalid_token"` (or, for a DPoP proof,
///   `invalid_dpop_proof`, or `use_dpop_nonce` with a `DPoP-Nonce` header) and a short
///   `error_description` (never the token).
/// * Scopes missing: `403` with `error="insufficient_scope"` and every scope the
///   operation needs (step-up).
/// * A token bound to a DPoP key (`cnf.jkt`) presented as a bearer token: `401`, whatever
///   the configuration.
/// * The validator's upstream or the proof cache down: `503`; a principal over its share
///   of the proof cache: `429`.
#[derive(Clone)]
pub struct AuthLayer {
    pub(super) auth: Arc<dyn Authenticator>,
    pub(super) required: bool,
    pub(super) realm: Arc<str>,
    metadata: Option<ResourceMetadata>,
    served: Option<(Arc<str>, MetadataLayer)>,
    pub(super) scopes: Arc<ScopePolicy>,
    #[cfg(feature = "jwt")]
    pub(super) dpop: Option<Arc<Dpop>>,
}

impl fmt::Debug for AuthLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("AuthLayer");
        d.field("required", &self.required)
            .field("realm", &self.realm)
            .field("metadata", &self.metadata_url())
            .field("scopes", &self.scopes);
        #[cfg(feature = "jwt")]
        d.field("dpop", &self.dpop);
        d.finish()
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
            served: None,
            scopes: Arc::new(ScopePolicy::new()),
            #[cfg(feature = "jwt")]
            dpop: None,
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
    /// yourself, serve it with [`metadata_layer`](Self::metadata_layer), which adds
    /// this layer's DPoP settings).
    pub fn resource_metadata(mut self, metadata: ResourceMetadata) -> Self {
        self.metadata = Some(metadata);
        self.serve_metadata();
        self
    }

    /// Accepts DPoP-bound tokens (RFC 9449), or requires them: see [`Dpop`]. The
    /// challenges then include `DPoP algs="…"`, and the metadata document
    /// `dpop_signing_alg_values_supported` and `dpop_bound_access_tokens_required`.
    #[cfg(feature = "jwt")]
    pub fn dpop(mut self, dpop: Dpop) -> Self {
        self.dpop = Some(Arc::new(dpop));
        self.serve_metadata();
        self
    }

    /// The scopes requests need.
    pub fn scopes(mut self, policy: ScopePolicy) -> Self {
        self.scopes = Arc::new(policy);
        self
    }

    /// The layer serving the metadata document (with this layer's DPoP settings), if
    /// there is one.
    pub fn metadata_layer(&self) -> Option<MetadataLayer> {
        self.served.as_ref().map(|m| m.1.clone())
    }

    pub(super) fn metadata_url(&self) -> Option<&str> {
        self.served.as_ref().map(|m| &*m.0)
    }

    /// Renders the metadata document once, with the DPoP settings as configured.
    fn serve_metadata(&mut self) {
        self.served = self.metadata.as_ref().map(|m| {
            #[cfg_attr(not(feature = "jwt"), allow(unused_mut))]
            let mut m = m.clone();
            #[cfg(feature = "jwt")]
            if let Some(d) = &self.dpop {
                m = m
                    .dpop_signing_alg_values_supported(d.algorithm_names())
                    .dpop_bound_access_tokens_required(d.is_required());
            }
            (Arc::from(m.url()), m.layer())
        });
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
            let found = match layer.authenticate(req.method(), req.headers()).await {
                Ok(found) => found,
                Err(refused) => return Ok(*refused),
            };
            let principal = found.principal;
            if let Err(refused) = layer.check(&principal, found.scheme, layer.scopes.base()) {
                return Ok(*refused);
            }
            if layer.scopes.has_target_rules() {
                // The endpoint judges the target once it has decoded the request it
                // runs (either era): see `ScopeCheck`.
                let check = ScopeCheck(layer.clone(), found.scheme);
                req.extensions_mut().insert(check);
            }
            req.extensions_mut().insert(principal);
            let mut response = inner.call(req).await?;
            if let Some(nonce) = found.nonce.and_then(|n| HeaderValue::from_str(&n).ok()) {
                response.headers_mut().insert("dpop-nonce", nonce);
            }
            Ok(response)
        })
    }
}

/// The per-target part of a [`ScopePolicy`], left by [`AuthLayer`] in the request's
/// extensions for the endpoint: it judges the target of the request **as decoded for
/// execution** ([`Target`]), so the scopes checked are those of the tool (prompt,
/// resource) that runs, whatever the era or shape of the body. It remembers the scheme
/// the token came with, for the challenge.
#[derive(Clone)]
pub(crate) struct ScopeCheck(AuthLayer, Option<TokenScheme>);

impl ScopeCheck {
    /// `Err` is the `403` (or, anonymous, `401`) challenge refusing the request.
    pub(crate) fn authorize(
        &self,
        principal: &Principal,
        target: Target<'_>,
    ) -> Result<(), Refusal> {
        self.0
            .check(principal, self.1, self.0.scopes.required(target))
    }
}
