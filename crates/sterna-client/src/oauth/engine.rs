//! The OAuth client's state: its configuration, the token in use, and what earlier
//! authorizations asked for.

use super::error::OAuthError;
use super::jose::{ClientKey, DpopKey};
use super::nonces::Nonces;
use super::registration::Registration;
use super::secret::Secret;
use super::store::{ClientInfo, TokenStore, Tokens};
use super::ui::AuthorizationUi;
use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};

/// How tokens are obtained.
pub(crate) enum Grant {
    AuthorizationCode {
        ui: Arc<dyn AuthorizationUi>,
    },
    ClientCredentials {
        client: ClientInfo,
        key: Option<ClientKey>,
    },
    JwtBearer {
        client_id: String,
        assertion: Secret,
    },
    TokenExchange {
        idp: IdentityAssertion,
        client: ClientInfo,
    },
}

impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::AuthorizationCode { .. } => "authorization_code",
            Self::ClientCredentials { .. } => "client_credentials",
            Self::JwtBearer { .. } => "jwt-bearer",
            Self::TokenExchange { .. } => "token-exchange + jwt-bearer",
        })
    }
}

impl Grant {
    /// Whether a failure of this grant is final (no user can fix it by trying again).
    pub(crate) fn is_unattended(&self) -> bool {
        !matches!(self, Self::AuthorizationCode { .. })
    }
}

/// The enterprise identity provider's side of enterprise-managed authorization: where to
/// exchange the user's ID token for an identity assertion grant.
#[derive(Debug, Clone)]
pub struct IdentityAssertion {
    pub(crate) token_endpoint: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<Secret>,
    pub(crate) id_token: Secret,
}

impl IdentityAssertion {
    /// Exchanges `id_token` at the identity provider's `token_endpoint` as `client_id`.
    pub fn new(
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        id_token: impl Into<Secret>,
    ) -> Self {
        Self {
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
            id_token: id_token.into(),
        }
    }

    /// The client secret at the identity provider (sent with `client_secret_basic`).
    pub fn client_secret(mut self, secret: impl Into<Secret>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }
}

/// The token in use.
#[derive(Debug, Clone)]
pub(crate) struct Current {
    pub(crate) tokens: Tokens,
    pub(crate) issuer: String,
    pub(crate) resource: String,
    /// Bumped on every new token: a request that failed with generation `g` does not
    /// re-authorize if another one already did.
    pub(crate) generation: u64,
}

/// What the flows remember between authorizations.
#[derive(Debug, Default)]
pub(crate) struct Session {
    /// The scopes requested so far, by issuer (step-up asks for their union with the
    /// challenged ones).
    pub(crate) requested: std::collections::BTreeMap<String, BTreeSet<String>>,
    /// An unattended grant failed: it is not retried.
    pub(crate) failed: bool,
    pub(crate) generation: u64,
}

pub(crate) struct Engine {
    pub(crate) grant: Grant,
    pub(crate) registration: Registration,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) dpop: Option<DpopKey>,
    pub(crate) max_step_ups: u32,
    pub(crate) nonces: Nonces,
    pub(crate) current: RwLock<Option<Current>>,
    /// Held for the whole of a flow: one authorization at a time.
    pub(crate) session: tokio::sync::Mutex<Session>,
}

impl Engine {
    pub(crate) fn new(
        grant: Grant,
        registration: Registration,
        store: Arc<dyn TokenStore>,
        dpop: Option<DpopKey>,
        max_step_ups: u32,
    ) -> Self {
        Self {
            grant,
            registration,
            store,
            dpop,
            max_step_ups,
            nonces: Nonces::default(),
            current: RwLock::new(None),
            session: tokio::sync::Mutex::new(Session::default()),
        }
    }

    /// The token in use, if any.
    pub(crate) fn current(&self) -> Option<Current> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn generation(&self) -> Option<u64> {
        self.current().map(|c| c.generation)
    }

    /// Puts `tokens` in use.
    pub(crate) fn install(
        &self,
        session: &mut Session,
        tokens: Tokens,
        issuer: &str,
        resource: &str,
    ) {
        session.generation += 1;
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = Some(Current {
            tokens,
            issuer: issuer.to_owned(),
            resource: resource.to_owned(),
            generation: session.generation,
        });
    }

    /// Drops the token in use (it was refused), returning it.
    pub(crate) fn take_current(&self) -> Option<Current> {
        self.current
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// The `Authorization` (and `DPoP`) header values for a request to `url`.
    pub(crate) fn headers_for(
        &self,
        current: &Current,
        method: &str,
        url: &str,
    ) -> Result<(String, Option<String>), OAuthError> {
        let token = current.tokens.access_token.expose();
        let dpop_bound = current.tokens.token_type.eq_ignore_ascii_case("dpop");
        match (&self.dpop, dpop_bound) {
            (Some(key), true) => {
                let nonce = self.nonces.get(url);
                let proof = key.proof(method, url, Some(token), nonce.as_deref())?;
                Ok((format!("DPoP {token}"), Some(proof)))
            }
            _ => Ok((format!("Bearer {token}"), None)),
        }
    }
}
