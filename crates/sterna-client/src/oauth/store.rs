//! Where tokens and client registrations live between requests (and, with
//! [`FileStore`](super::FileStore), between runs). Everything is keyed by the
//! authorization server's issuer: credentials never cross from one server to another.

use super::error::StoreError;
use super::secret::Secret;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Tokens from a token endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Tokens {
    /// The access token.
    pub access_token: Secret,
    /// `Bearer` or `DPoP`.
    pub token_type: String,
    /// When it expires (Unix seconds), if the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes granted (space-delimited; the scopes requested when the server did not
    /// say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<Secret>,
}

impl Tokens {
    /// Whether the access token is past its expiry (with 30 s of margin).
    pub fn is_expired(&self, now: u64) -> bool {
        self.expires_at.is_some_and(|t| now + 30 >= t)
    }

    /// The granted scopes.
    pub fn scopes(&self) -> Vec<String> {
        super::challenge::split_scopes(self.scope.as_deref())
    }
}

/// This client's credentials at one authorization server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientInfo {
    /// The client ID.
    pub client_id: String,
    /// The client secret, for confidential clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    /// How to authenticate at the token endpoint, as the server registered it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
}

impl ClientInfo {
    /// A public client (no secret).
    pub fn public(client_id: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: None,
            token_endpoint_auth_method: None,
        }
    }

    /// A confidential client with a secret.
    pub fn confidential(client_id: impl Into<String>, secret: impl Into<Secret>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: Some(secret.into()),
            token_endpoint_auth_method: None,
        }
    }

    /// The token endpoint authentication method (`client_secret_basic`,
    /// `client_secret_post`, `none`, `private_key_jwt`).
    pub fn auth_method(mut self, method: impl Into<String>) -> Self {
        self.token_endpoint_auth_method = Some(method.into());
        self
    }
}

/// Everything a store holds: client registrations by issuer, tokens by issuer and
/// resource.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    #[serde(default)]
    clients: BTreeMap<String, ClientInfo>,
    #[serde(default)]
    tokens: BTreeMap<String, BTreeMap<String, Tokens>>,
}

impl Credentials {
    /// The client registered at `issuer`.
    pub fn client(&self, issuer: &str) -> Option<&ClientInfo> {
        self.clients.get(issuer)
    }

    /// Records the client registered at `issuer`.
    pub fn set_client(&mut self, issuer: &str, client: ClientInfo) {
        self.clients.insert(issuer.to_owned(), client);
    }

    /// Forgets the client registered at `issuer`, and its tokens.
    pub fn forget_client(&mut self, issuer: &str) {
        self.clients.remove(issuer);
        self.tokens.remove(issuer);
    }

    /// The tokens `issuer` issued for `resource`.
    pub fn tokens(&self, issuer: &str, resource: &str) -> Option<&Tokens> {
        self.tokens.get(issuer).and_then(|m| m.get(resource))
    }

    /// Records the tokens `issuer` issued for `resource`.
    pub fn set_tokens(&mut self, issuer: &str, resource: &str, tokens: Tokens) {
        self.tokens
            .entry(issuer.to_owned())
            .or_default()
            .insert(resource.to_owned(), tokens);
    }

    /// Forgets the tokens `issuer` issued for `resource`.
    pub fn forget_tokens(&mut self, issuer: &str, resource: &str) {
        if let Some(m) = self.tokens.get_mut(issuer) {
            m.remove(resource);
        }
    }
}

/// Keeps [`Credentials`]. The OAuth client loads them before a flow and saves them after
/// every change (a rotated refresh token included); a failed save fails the flow.
pub trait TokenStore: Send + Sync + 'static {
    /// Everything stored (empty when nothing is).
    fn load(&self) -> BoxFuture<'_, Result<Credentials, StoreError>>;
    /// Replaces everything stored.
    fn save<'a>(&'a self, credentials: &'a Credentials) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// A store in memory, for the life of the process (the default).
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Credentials>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// A store holding `credentials` (pre-registered clients, tokens from elsewhere).
    pub fn with(credentials: Credentials) -> Self {
        Self {
            inner: Mutex::new(credentials),
        }
    }
}

impl TokenStore for MemoryStore {
    fn load(&self) -> BoxFuture<'_, Result<Credentials, StoreError>> {
        let c = self.inner.lock().unwrap_or_else(|p| p.into_inner()).clone();
        Box::pin(std::future::ready(Ok(c)))
    }

    fn save<'a>(&'a self, credentials: &'a Credentials) -> BoxFuture<'a, Result<(), StoreError>> {
        *self.inner.lock().unwrap_or_else(|p| p.into_inner()) = credentials.clone();
        Box::pin(std::future::ready(Ok(())))
    }
}
