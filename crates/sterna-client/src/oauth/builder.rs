//! Configuring the OAuth client: which grant, how to register, where tokens live.

use super::engine::{Engine, Grant, IdentityAssertion};
use super::jose::{ClientKey, DpopKey};
use super::registration::Registration;
use super::secret::Secret;
use super::store::{ClientInfo, MemoryStore, TokenStore};
use super::ui::AuthorizationUi;
use std::sync::Arc;

/// The OAuth 2.1 client of MCP authorization, attached to an
/// [`HttpTransport`](crate::transport::HttpTransport) with
/// [`HttpTransportBuilder::oauth`](crate::transport::HttpTransportBuilder::oauth).
/// Cheap to clone (clones share tokens).
#[derive(Clone)]
pub struct OAuth {
    pub(crate) engine: Arc<Engine>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("grant", &self.engine.grant)
            .finish_non_exhaustive()
    }
}

/// Builds an [`OAuth`] client.
pub struct OAuthBuilder {
    grant: Grant,
    registration: Registration,
    store: Option<Arc<dyn TokenStore>>,
    dpop: Option<DpopKey>,
    max_step_ups: u32,
}

impl std::fmt::Debug for OAuthBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthBuilder")
            .field("grant", &self.grant)
            .field("dpop", &self.dpop.is_some())
            .finish_non_exhaustive()
    }
}

impl OAuth {
    fn with(grant: Grant) -> OAuthBuilder {
        OAuthBuilder {
            grant,
            registration: Registration::default(),
            store: None,
            dpop: None,
            max_step_ups: 2,
        }
    }

    /// The authorization code grant with PKCE, for clients acting for a user: `ui` shows
    /// the authorization URL and brings back the redirect (see
    /// [`LoopbackRedirect`](super::LoopbackRedirect) for CLIs).
    pub fn authorization_code(ui: impl AuthorizationUi) -> OAuthBuilder {
        Self::with(Grant::AuthorizationCode { ui: Arc::new(ui) })
    }

    /// The client credentials grant (SEP-1046) with a client secret (`client_secret_basic`
    /// or `client_secret_post`, as the server offers).
    pub fn client_credentials(client: ClientInfo) -> OAuthBuilder {
        Self::with(Grant::ClientCredentials { client, key: None })
    }

    /// The client credentials grant authenticated with a signed assertion
    /// (`private_key_jwt`, RFC 7523).
    pub fn client_credentials_jwt(client_id: impl Into<String>, key: ClientKey) -> OAuthBuilder {
        let client = ClientInfo::public(client_id).auth_method("private_key_jwt");
        Self::with(Grant::ClientCredentials {
            client,
            key: Some(key),
        })
    }

    /// Workload identity federation (SEP-1933): the JWT-bearer grant (RFC 7523 §2.1) with
    /// a workload's JWT as the assertion. A failure is final (no retry, no other grant).
    pub fn workload_identity(
        client_id: impl Into<String>,
        assertion: impl Into<Secret>,
    ) -> OAuthBuilder {
        Self::with(Grant::JwtBearer {
            client_id: client_id.into(),
            assertion: assertion.into(),
        })
    }

    /// Enterprise-managed authorization (SEP-990): the enterprise identity provider
    /// exchanges the user's ID token for an identity assertion grant (RFC 8693), which
    /// the MCP authorization server takes as a JWT-bearer grant from `client`.
    pub fn enterprise_managed(idp: IdentityAssertion, client: ClientInfo) -> OAuthBuilder {
        Self::with(Grant::TokenExchange { idp, client })
    }
}

impl OAuthBuilder {
    /// The `client_name` registered (default `sterna MCP client`).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.registration.client_name = name.into();
        self
    }

    /// `native` or `web` in dynamic registrations (default: `native` unless the redirect
    /// URI is HTTPS on a remote host).
    pub fn application_type(mut self, kind: impl Into<String>) -> Self {
        self.registration.application_type = Some(kind.into());
        self
    }

    /// This client's Client ID Metadata Document (an HTTPS URL serving its metadata),
    /// used as its `client_id` wherever the server supports them.
    pub fn client_metadata_document(mut self, url: impl Into<String>) -> Self {
        self.registration.metadata_document = Some(url.into());
        self
    }

    /// Credentials registered beforehand with the first authorization server the
    /// resource names (they are then bound to it).
    pub fn pre_registered(mut self, client: ClientInfo) -> Self {
        self.registration.pre_registered.push((None, client));
        self
    }

    /// Credentials registered beforehand with the server whose issuer is `issuer`.
    pub fn pre_registered_for(mut self, issuer: impl Into<String>, client: ClientInfo) -> Self {
        self.registration
            .pre_registered
            .push((Some(issuer.into()), client));
        self
    }

    /// Whether to ask for refresh tokens (the `refresh_token` grant type, and
    /// `offline_access` where the server lists it); default yes.
    pub fn refresh_tokens(mut self, yes: bool) -> Self {
        self.registration.want_refresh_tokens = yes;
        self
    }

    /// Where tokens and registrations live (default: in memory).
    pub fn store(mut self, store: impl TokenStore) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// Binds tokens to `key` with DPoP (RFC 9449) where the authorization server offers
    /// it; every request then carries a fresh proof.
    pub fn dpop(mut self, key: DpopKey) -> Self {
        self.dpop = Some(key);
        self
    }

    /// How many times one request may re-authorize for more scopes after
    /// `403 insufficient_scope` (default 2).
    pub fn max_step_ups(mut self, n: u32) -> Self {
        self.max_step_ups = n;
        self
    }

    /// The client.
    pub fn build(self) -> OAuth {
        OAuth {
            engine: Arc::new(Engine::new(
                self.grant,
                self.registration,
                self.store.unwrap_or_else(|| Arc::new(MemoryStore::new())),
                self.dpop,
                self.max_step_ups,
            )),
        }
    }
}
