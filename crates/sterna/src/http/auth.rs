//! Authentication: a tower layer that turns a request's credentials into the
//! [`Principal`] that `requestState` is bound to.

use super::body::McpBody;
use crate::server::Principal;
use futures_util::future::BoxFuture;
use http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

/// Why credentials were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthError {
    /// The credentials are wrong, expired or revoked (401 with `error="invalid_token"`).
    InvalidToken,
    /// The authenticator could not decide (an identity provider is down): 503.
    Unavailable(String),
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidToken => f.write_str("invalid token"),
            Self::Unavailable(e) => write!(f, "authentication unavailable: {e}"),
        }
    }
}

impl std::error::Error for AuthError {}

/// Turns request headers into a principal: `Ok(None)` when no credentials were given.
pub trait Authenticator: Send + Sync + 'static {
    /// Authenticates a request.
    fn authenticate<'a>(
        &'a self,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, Result<Option<Principal>, AuthError>>;
}

/// A fixed map of bearer tokens to principals, for demos and tests.
#[derive(Clone, Default)]
pub struct BearerTokens {
    tokens: HashMap<String, Principal>,
}

impl fmt::Debug for BearerTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerTokens")
            .field("count", &self.tokens.len())
            .finish()
    }
}

impl BearerTokens {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// `Authorization: Bearer <token>` authenticates as `principal`.
    pub fn with(mut self, token: impl Into<String>, principal: impl Into<Arc<str>>) -> Self {
        self.tokens.insert(token.into(), Principal::new(principal));
        self
    }
}

impl Authenticator for BearerTokens {
    fn authenticate<'a>(
        &'a self,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, Result<Option<Principal>, AuthError>> {
        let result = match headers.get(AUTHORIZATION) {
            None => Ok(None),
            Some(v) => {
                let token = v
                    .to_str()
                    .ok()
                    .and_then(|s| {
                        s.strip_prefix("Bearer ")
                            .or_else(|| s.strip_prefix("bearer "))
                    })
                    .map(str::trim);
                match token.and_then(|t| self.tokens.get(t)) {
                    Some(p) => Ok(Some(p.clone())),
                    None => Err(AuthError::InvalidToken),
                }
            }
        };
        Box::pin(std::future::ready(result))
    }
}

/// A tower layer that authenticates every request and attaches its [`Principal`] to the
/// request's extensions (where [`McpService`](super::McpService) finds it).
#[derive(Clone)]
pub struct AuthLayer {
    auth: Arc<dyn Authenticator>,
    required: bool,
    realm: Arc<str>,
}

impl fmt::Debug for AuthLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthLayer")
            .field("required", &self.required)
            .field("realm", &self.realm)
            .finish()
    }
}

impl AuthLayer {
    /// Authenticates with `auth`; anonymous callers are refused (401 with
    /// `WWW-Authenticate: Bearer`) until [`allow_anonymous`](Self::allow_anonymous).
    pub fn new(auth: impl Authenticator) -> Self {
        Self {
            auth: Arc::new(auth),
            required: true,
            realm: Arc::from("mcp"),
        }
    }

    /// Lets requests without credentials through as the anonymous principal (wrong
    /// credentials are still refused).
    pub fn allow_anonymous(mut self) -> Self {
        self.required = false;
        self
    }

    /// The realm named in `WWW-Authenticate`.
    pub fn realm(mut self, realm: impl Into<Arc<str>>) -> Self {
        self.realm = realm.into();
        self
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

fn unauthorized(realm: &str, invalid: bool) -> Response<McpBody> {
    let mut r = Response::new(McpBody::empty());
    *r.status_mut() = StatusCode::UNAUTHORIZED;
    let value = if invalid {
        format!("Bearer realm=\"{realm}\", error=\"invalid_token\"")
    } else {
        format!("Bearer realm=\"{realm}\"")
    };
    if let Ok(v) = HeaderValue::from_str(&value) {
        r.headers_mut().insert(WWW_AUTHENTICATE, v);
    }
    r
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
            match layer.auth.authenticate(req.headers()).await {
                Ok(Some(p)) => {
                    req.extensions_mut().insert(p);
                }
                Ok(None) if layer.required => return Ok(unauthorized(&layer.realm, false)),
                Ok(None) => {
                    req.extensions_mut().insert(Principal::anonymous());
                }
                Err(AuthError::InvalidToken) => return Ok(unauthorized(&layer.realm, true)),
                Err(AuthError::Unavailable(e)) => {
                    tracing::error!(error = %e, "authentication unavailable");
                    let mut r = Response::new(McpBody::empty());
                    *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
                    return Ok(r);
                }
            }
            inner.call(req).await
        })
    }
}
