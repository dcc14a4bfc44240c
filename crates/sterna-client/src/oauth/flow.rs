//! What a challenge sets off: on `401`, discovery and a new token (a stored one, a
//! refreshed one, or a fresh grant); on `403 insufficient_scope`, a fresh authorization
//! for the union of the scopes asked so far and the ones challenged.

use super::challenge::Challenge;
use super::discovery;
use super::engine::{Engine, Session};
use super::error::{GaveUp, OAuthError};
use super::metadata::{ResourceMetadata, ServerMetadata};
use crate::transport::HttpClient;
use std::collections::BTreeSet;

/// What was discovered for one flow.
#[derive(Debug)]
pub(crate) struct Discovered {
    pub(crate) prm: ResourceMetadata,
    pub(crate) meta: ServerMetadata,
}

impl Engine {
    /// Handles a `401` to a request sent with the token of generation `seen`.
    pub(crate) async fn unauthorized(
        &self,
        http: &HttpClient,
        mcp_url: &str,
        challenge: Option<&Challenge>,
        seen: Option<u64>,
    ) -> Result<(), OAuthError> {
        let mut session = self.session.lock().await;
        if self.generation() != seen {
            return Ok(()); // Another request already got a new token.
        }
        if session.failed {
            return Err(GaveUp::GrantFailedBefore.into());
        }
        let rejected = self.take_current();
        // A 401 while holding a token means "re-discover": the resource may have moved
        // to another authorization server.
        let found = self.discover(http, mcp_url, challenge).await?;
        let issuer = found.meta.issuer.clone();
        let resource = found.prm.resource.clone();
        let mut creds = self.store.load().await?;
        if let Some(r) = &rejected {
            creds.forget_tokens(&r.issuer, &r.resource);
        } else if let Some(t) = creds
            .tokens(&issuer, &resource)
            .filter(|t| !t.is_expired(crate::util::unix_now()))
        {
            tracing::debug!(%issuer, "using a stored token");
            let t = t.clone();
            self.install(&mut session, t, &issuer, &resource);
            return Ok(());
        }
        let refresh = rejected
            .filter(|r| r.issuer == issuer)
            .map(|r| r.tokens)
            .or_else(|| creds.tokens(&issuer, &resource).cloned())
            .and_then(|t| t.refresh_token);
        if let Some(rt) = refresh {
            match self.refresh(http, &found, &mut creds, &rt).await {
                Ok(tokens) => return self.keep(&mut session, &mut creds, tokens, &found).await,
                Err(e) => tracing::info!(error = %e, "refresh failed: authorizing again"),
            }
        }
        let scopes = self.initial_scopes(&session, challenge, &found);
        self.authorize(http, &mut session, &mut creds, &found, scopes)
            .await
    }

    /// Handles a `403 insufficient_scope` to a request sent with the token of generation
    /// `seen`.
    pub(crate) async fn insufficient_scope(
        &self,
        http: &HttpClient,
        mcp_url: &str,
        challenge: &Challenge,
        seen: Option<u64>,
    ) -> Result<(), OAuthError> {
        let mut session = self.session.lock().await;
        if self.generation() != seen {
            return Ok(());
        }
        let challenged = challenge.scopes();
        let granted: BTreeSet<String> = self
            .current()
            .map(|c| c.tokens.scopes().into_iter().collect())
            .unwrap_or_default();
        if session.failed || challenged.iter().all(|s| granted.contains(s)) {
            // Asking again for what the token already has cannot help.
            return Err(GaveUp::InsufficientScope { scopes: challenged }.into());
        }
        let found = self.discover(http, mcp_url, Some(challenge)).await?;
        let mut scopes = session
            .requested
            .get(&found.meta.issuer)
            .cloned()
            .unwrap_or_default();
        scopes.extend(challenged);
        tracing::info!(scopes = ?scopes, "step-up: authorizing for more scopes");
        let mut creds = self.store.load().await?;
        self.authorize(http, &mut session, &mut creds, &found, scopes)
            .await
    }

    async fn discover(
        &self,
        http: &HttpClient,
        mcp_url: &str,
        challenge: Option<&Challenge>,
    ) -> Result<Discovered, OAuthError> {
        let from_challenge = challenge.and_then(Challenge::resource_metadata);
        let prm = discovery::resource_metadata(http, mcp_url, from_challenge).await?;
        let issuer = self.choose_issuer(&prm);
        let meta = discovery::server_metadata(http, &issuer).await?;
        Ok(Discovered { prm, meta })
    }

    /// The first listed server this client has pre-registered credentials for, else the
    /// first listed.
    fn choose_issuer(&self, prm: &ResourceMetadata) -> String {
        let pinned = |i: &&String| {
            self.registration
                .pre_registered
                .iter()
                .any(|(p, _)| p.as_deref() == Some(i.as_str()))
        };
        prm.authorization_servers
            .iter()
            .find(pinned)
            .unwrap_or(&prm.authorization_servers[0])
            .clone()
    }

    /// The scopes of a first authorization: the challenge's, else every scope the
    /// resource lists, else none (the parameter is then omitted); plus what was asked
    /// before at the same server, plus `offline_access` where the server offers it.
    fn initial_scopes(
        &self,
        session: &Session,
        challenge: Option<&Challenge>,
        found: &Discovered,
    ) -> BTreeSet<String> {
        let mut scopes: BTreeSet<String> = challenge
            .map(Challenge::scopes)
            .unwrap_or_default()
            .into_iter()
            .collect();
        if scopes.is_empty() {
            scopes.extend(found.prm.scopes_supported.iter().flatten().cloned());
        }
        if let Some(before) = session.requested.get(&found.meta.issuer) {
            scopes.extend(before.iter().cloned());
        }
        scopes
    }

    /// Runs the grant for `scopes` and puts the tokens in use.
    async fn authorize(
        &self,
        http: &HttpClient,
        session: &mut Session,
        creds: &mut super::store::Credentials,
        found: &Discovered,
        mut scopes: BTreeSet<String>,
    ) -> Result<(), OAuthError> {
        let offline = self.registration.want_refresh_tokens
            && !self.grant.is_unattended()
            && !scopes.is_empty()
            && found.meta.supports_scope("offline_access");
        if offline {
            scopes.insert("offline_access".into());
        }
        session
            .requested
            .insert(found.meta.issuer.clone(), scopes.clone());
        let scopes: Vec<String> = scopes.into_iter().collect();
        match self.grant(http, found, creds, &scopes).await {
            Ok(tokens) => self.keep(session, creds, tokens, found).await,
            Err(e) => {
                if self.grant.is_unattended() {
                    session.failed = true;
                }
                // Keep a registration made before the failure.
                let _ = self.store.save(creds).await;
                Err(e)
            }
        }
    }

    /// Stores `tokens` and puts them in use.
    async fn keep(
        &self,
        session: &mut Session,
        creds: &mut super::store::Credentials,
        tokens: super::store::Tokens,
        found: &Discovered,
    ) -> Result<(), OAuthError> {
        creds.set_tokens(&found.meta.issuer, &found.prm.resource, tokens.clone());
        self.store.save(creds).await?;
        tracing::info!(issuer = %found.meta.issuer, token_type = %tokens.token_type, "authorized");
        self.install(session, tokens, &found.meta.issuer, &found.prm.resource);
        Ok(())
    }
}
