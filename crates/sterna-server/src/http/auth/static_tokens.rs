//! A fixed map of bearer tokens, for demos and tests.

use super::credentials::Presented;
use super::error::{AuthError, TokenRejection};
use super::layer::Authenticator;
use crate::server::Principal;
use futures_util::future::BoxFuture;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// A fixed map of bearer tokens to principals, for demos and tests.
///
/// Its principals carry no [`AccessGrant`](crate::server::AccessGrant), so they hold no
/// scope: use it without a [`ScopePolicy`](super::ScopePolicy).
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
        presented: Presented<'a>,
    ) -> BoxFuture<'a, Result<Option<Principal>, AuthError>> {
        let result = match presented.access_token() {
            None => Ok(None),
            Some(t) => self
                .tokens
                .get(t)
                .cloned()
                .map(Some)
                .ok_or(AuthError::InvalidToken(TokenRejection::Unknown)),
        };
        Box::pin(std::future::ready(result))
    }
}
