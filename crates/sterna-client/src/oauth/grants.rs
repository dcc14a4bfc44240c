//! Running each grant against the discovered authorization server.

use super::engine::{Engine, Grant, IdentityAssertion};
use super::error::{DiscoveryError, OAuthError, Rejection, ServerError};
use super::flow::Discovered;
use super::metadata::ServerMetadata;
use super::pkce::{Pkce, random_string};
use super::registration;
use super::secret::Secret;
use super::store::{ClientInfo, Credentials, Tokens};
use super::token::{self, Auth, TokenRequest, choose_method};
use super::ui::{AuthorizationRequest, AuthorizationResponse};
use super::urls;
use crate::transport::HttpClient;

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

fn endpoint<'a>(e: &'a Option<String>, name: &'static str) -> Result<&'a str, OAuthError> {
    e.as_deref()
        .ok_or_else(|| DiscoveryError::MissingEndpoint { endpoint: name }.into())
}

/// One token request's grant-specific part.
struct Ask<'a> {
    grant_type: &'static str,
    params: Vec<(&'static str, String)>,
    secrets: Vec<(&'static str, &'a Secret)>,
    client: &'a ClientInfo,
    key: Option<&'a super::jose::ClientKey>,
    scope: Option<String>,
}

impl<'a> Ask<'a> {
    fn new(grant_type: &'static str, client: &'a ClientInfo) -> Self {
        Self {
            grant_type,
            params: Vec::new(),
            secrets: Vec::new(),
            client,
            key: None,
            scope: None,
        }
    }
}

impl Engine {
    /// Obtains tokens for `scopes` (empty: the `scope` parameter is left out).
    pub(crate) async fn grant(
        &self,
        http: &HttpClient,
        found: &Discovered,
        creds: &mut Credentials,
        scopes: &[String],
    ) -> Result<Tokens, OAuthError> {
        let scope = (!scopes.is_empty()).then(|| scopes.join(" "));
        match &self.grant {
            Grant::AuthorizationCode { .. } => {
                self.authorization_code(http, found, creds, scope).await
            }
            Grant::ClientCredentials { client, key } => {
                let mut ask = Ask::new("client_credentials", client);
                ask.key = key.as_ref();
                ask.scope = scope;
                self.send_token(http, found, ask).await
            }
            Grant::JwtBearer {
                client_id,
                assertion,
            } => {
                let client = ClientInfo::public(client_id.clone()).auth_method("none");
                let mut ask = Ask::new(JWT_BEARER, &client);
                ask.secrets.push(("assertion", assertion));
                ask.scope = scope;
                self.send_token(http, found, ask).await
            }
            Grant::TokenExchange { idp, client } => {
                let grant = self
                    .identity_assertion(http, idp, found, scope.as_deref())
                    .await?;
                let mut ask = Ask::new(JWT_BEARER, client);
                ask.secrets.push(("assertion", &grant));
                ask.scope = scope;
                self.send_token(http, found, ask).await
            }
        }
    }

    /// One token request: the grant's parameters, `scope`, `resource`, client
    /// authentication, and a DPoP proof where the server offers DPoP.
    async fn send_token(
        &self,
        http: &HttpClient,
        found: &Discovered,
        ask: Ask<'_>,
    ) -> Result<Tokens, OAuthError> {
        let meta = &found.meta;
        let endpoint = endpoint(&meta.token_endpoint, "token_endpoint")?;
        let mut params = vec![("grant_type", ask.grant_type.to_owned())];
        params.extend(ask.params);
        if let Some(s) = &ask.scope {
            params.push(("scope", s.clone()));
        }
        params.push(("resource", found.prm.resource.clone()));
        let req = TokenRequest {
            endpoint,
            issuer: &meta.issuer,
            params,
            secrets: ask.secrets,
            label: "token",
        };
        let supported = meta.token_endpoint_auth_methods_supported.as_deref();
        let auth = Auth {
            client: ask.client,
            key: ask.key,
            method: choose_method(ask.client, ask.key.is_some(), supported),
        };
        let dpop = self
            .dpop
            .as_ref()
            .filter(|_| meta.supports_dpop())
            .map(|k| (k, &self.nonces));
        token::request(http, &req, Some(auth), dpop, ask.scope.as_deref()).await
    }

    /// The authorization code grant: register if needed, PKCE, the user's step, `iss`
    /// and `state` checks, then the code for tokens.
    async fn authorization_code(
        &self,
        http: &HttpClient,
        found: &Discovered,
        creds: &mut Credentials,
        scope: Option<String>,
    ) -> Result<Tokens, OAuthError> {
        let Grant::AuthorizationCode { ui } = &self.grant else {
            unreachable!("called for the authorization code grant only");
        };
        let meta = &found.meta;
        let authorize_at = endpoint(&meta.authorization_endpoint, "authorization_endpoint")?;
        endpoint(&meta.token_endpoint, "token_endpoint")?;
        if !meta.supports_pkce_s256() {
            return Err(DiscoveryError::NoPkce.into());
        }
        let redirect_uri = ui.redirect_uri();
        let client =
            registration::client_for(http, &self.registration, meta, creds, &redirect_uri).await?;
        let pkce = Pkce::new();
        let state = random_string(16);
        let mut query = vec![
            ("response_type", "code"),
            ("client_id", client.client_id.as_str()),
            ("redirect_uri", redirect_uri.as_str()),
            ("code_challenge", pkce.challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("state", state.as_str()),
            ("resource", found.prm.resource.as_str()),
        ];
        if let Some(s) = &scope {
            query.push(("scope", s.as_str()));
            if s.split(' ').any(|x| x == "offline_access") {
                query.push(("prompt", "consent"));
            }
        }
        let request = AuthorizationRequest {
            url: urls::with_query(authorize_at, &query),
            redirect_uri: redirect_uri.clone(),
            state: state.clone(),
        };
        tracing::info!(issuer = %meta.issuer, scope = ?scope, "authorization request");
        let response = ui.authorize(&request).await?;
        let code = check_response(response, &state, meta)?;
        let mut ask = Ask::new("authorization_code", &client);
        ask.params.push(("redirect_uri", redirect_uri));
        ask.secrets
            .extend([("code", &code), ("code_verifier", &pkce.verifier)]);
        let mut tokens = self.send_token(http, found, ask).await?;
        if tokens.scope.is_none() {
            tokens.scope = scope;
        }
        Ok(tokens)
    }

    /// Refreshes with `refresh_token` (same client, same resource).
    pub(crate) async fn refresh(
        &self,
        http: &HttpClient,
        found: &Discovered,
        creds: &mut Credentials,
        refresh_token: &Secret,
    ) -> Result<Tokens, OAuthError> {
        let client =
            match &self.grant {
                Grant::ClientCredentials { client, .. } | Grant::TokenExchange { client, .. } => {
                    client.clone()
                }
                Grant::JwtBearer { client_id, .. } => ClientInfo::public(client_id.clone()),
                Grant::AuthorizationCode { .. } => creds
                    .client(&found.meta.issuer)
                    .cloned()
                    .ok_or(DiscoveryError::NoRegistration {
                        issuer: found.meta.issuer.clone(),
                    })?,
            };
        let mut ask = Ask::new("refresh_token", &client);
        ask.secrets.push(("refresh_token", refresh_token));
        let mut tokens = self.send_token(http, found, ask).await?;
        if tokens.refresh_token.is_none() {
            tokens.refresh_token = Some(refresh_token.clone());
        }
        Ok(tokens)
    }

    /// RFC 8693 at the enterprise identity provider: the user's ID token for an identity
    /// assertion grant (ID-JAG) for this authorization server and resource.
    async fn identity_assertion(
        &self,
        http: &HttpClient,
        idp: &IdentityAssertion,
        found: &Discovered,
        scope: Option<&str>,
    ) -> Result<Secret, OAuthError> {
        let mut params = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange".to_owned(),
            ),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:id-jag".to_owned(),
            ),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:id_token".to_owned(),
            ),
            ("audience", found.meta.issuer.clone()),
            ("resource", found.prm.resource.clone()),
        ];
        if let Some(s) = scope {
            params.push(("scope", s.to_owned()));
        }
        let req = TokenRequest {
            endpoint: &idp.token_endpoint,
            issuer: &idp.token_endpoint,
            params,
            secrets: vec![("subject_token", &idp.id_token)],
            label: "token exchange",
        };
        let client = match &idp.client_secret {
            Some(s) => ClientInfo::confidential(idp.client_id.clone(), s.clone()),
            None => ClientInfo::public(idp.client_id.clone()),
        };
        let method = choose_method(&client, false, None);
        let auth = Auth {
            client: &client,
            key: None,
            method,
        };
        let tokens = token::request(http, &req, Some(auth), None, None).await?;
        Ok(tokens.access_token)
    }
}

/// The code from an authorization response, after the RFC 9207 `iss` check (before
/// anything else in the response is believed) and the `state` check.
pub(crate) fn check_response(
    r: AuthorizationResponse,
    state: &str,
    meta: &ServerMetadata,
) -> Result<Secret, OAuthError> {
    match &r.iss {
        Some(iss) if *iss != meta.issuer => {
            return Err(Rejection::IssMismatch {
                expected: meta.issuer.clone(),
                found: iss.clone(),
            }
            .into());
        }
        None if meta.authorization_response_iss_parameter_supported => {
            return Err(Rejection::IssMissing.into());
        }
        _ => {}
    }
    if r.state.as_deref() != Some(state) {
        return Err(Rejection::StateMismatch.into());
    }
    if let Some(error) = r.error {
        return Err(OAuthError::Server(ServerError {
            endpoint: "authorization",
            status: 0,
            error,
            description: r.error_description,
        }));
    }
    r.code.ok_or_else(|| Rejection::MissingCode.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(iss_supported: bool) -> ServerMetadata {
        serde_json::from_value(serde_json::json!({
            "issuer": "http://localhost:9",
            "authorization_response_iss_parameter_supported": iss_supported,
        }))
        .unwrap()
    }

    fn response(iss: Option<&str>, state: &str) -> AuthorizationResponse {
        let mut url = format!("http://cb/?code=c&state={state}");
        if let Some(i) = iss {
            url = urls::with_query(&url, &[("iss", i)]);
        }
        AuthorizationResponse::from_redirect(&url)
    }

    #[test]
    fn iss_is_compared_as_a_raw_string() {
        // Advertised and present: equal passes; anything else fails, "/" included.
        assert!(
            check_response(response(Some("http://localhost:9"), "s"), "s", &meta(true)).is_ok()
        );
        for wrong in [
            "http://localhost:9/",
            "HTTP://localhost:9",
            "http://localhost:09",
            "https://evil.example.com",
        ] {
            let r = check_response(response(Some(wrong), "s"), "s", &meta(true));
            assert!(
                matches!(r, Err(OAuthError::Rejected(Rejection::IssMismatch { .. }))),
                "{wrong}"
            );
        }
        // Advertised and absent: rejected.
        let r = check_response(response(None, "s"), "s", &meta(true));
        assert!(matches!(
            r,
            Err(OAuthError::Rejected(Rejection::IssMissing))
        ));
        // Not advertised: absent passes, present is still compared.
        assert!(check_response(response(None, "s"), "s", &meta(false)).is_ok());
        let r = check_response(
            response(Some("https://evil.example.com"), "s"),
            "s",
            &meta(false),
        );
        assert!(matches!(
            r,
            Err(OAuthError::Rejected(Rejection::IssMismatch { .. }))
        ));
    }

    #[test]
    fn state_and_errors() {
        let r = check_response(response(None, "other"), "s", &meta(false));
        assert!(matches!(
            r,
            Err(OAuthError::Rejected(Rejection::StateMismatch))
        ));
        // An error behind a wrong iss is not believed.
        let bad = AuthorizationResponse::from_redirect(
            "http://cb/?error=access_denied&state=s&iss=https%3A%2F%2Fx",
        );
        assert!(matches!(
            check_response(bad, "s", &meta(true)),
            Err(OAuthError::Rejected(Rejection::IssMismatch { .. }))
        ));
        let denied = AuthorizationResponse::from_redirect("http://cb/?error=access_denied&state=s");
        assert!(
            matches!(check_response(denied, "s", &meta(false)), Err(OAuthError::Server(e)) if e.error == "access_denied")
        );
        let code = check_response(response(None, "s"), "s", &meta(false)).unwrap();
        assert_eq!(code.expose(), "c");
    }
}
