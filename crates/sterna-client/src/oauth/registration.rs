//! Obtaining client credentials at an authorization server, in the order MCP gives:
//! stored for that issuer, pre-registered, a Client ID Metadata Document URL, then
//! dynamic client registration (RFC 7591).

use super::error::{DiscoveryError, OAuthError, Rejection, ServerError};
use super::fetch::Call;
use super::metadata::ServerMetadata;
use super::secret::Secret;
use super::store::{ClientInfo, Credentials};
use super::urls;
use crate::transport::HttpClient;
use serde_json::{Value, json};

/// How this client identifies itself to authorization servers.
#[derive(Debug, Clone)]
pub(crate) struct Registration {
    pub(crate) client_name: String,
    pub(crate) application_type: Option<String>,
    pub(crate) want_refresh_tokens: bool,
    /// A Client ID Metadata Document URL (used where the server supports them).
    pub(crate) metadata_document: Option<String>,
    /// Pre-registered credentials: for one issuer, or (`None`) for whichever the
    /// resource names first.
    pub(crate) pre_registered: Vec<(Option<String>, ClientInfo)>,
}

impl Default for Registration {
    fn default() -> Self {
        Self {
            client_name: "sterna MCP client".into(),
            application_type: None,
            want_refresh_tokens: true,
            metadata_document: None,
            pre_registered: Vec::new(),
        }
    }
}

impl Registration {
    /// The pre-registered credentials for `issuer`, if any.
    pub(crate) fn pre_registered_for(&self, issuer: &str) -> Option<&ClientInfo> {
        self.pre_registered
            .iter()
            .find(|(i, _)| i.as_deref() == Some(issuer))
            .or_else(|| self.pre_registered.iter().find(|(i, _)| i.is_none()))
            .map(|(_, c)| c)
    }

    /// The grant types this client declares.
    fn grant_types(&self) -> Vec<&'static str> {
        if self.want_refresh_tokens {
            vec!["authorization_code", "refresh_token"]
        } else {
            vec!["authorization_code"]
        }
    }

    /// `native` for loopback and custom-scheme redirects (CLIs, desktop apps), else `web`.
    fn application_type(&self, redirect_uri: &str) -> String {
        if let Some(t) = &self.application_type {
            return t.clone();
        }
        let web = urls::parts(redirect_uri)
            .is_some_and(|p| p.scheme == "https" && !urls::is_loopback(redirect_uri));
        if web { "web" } else { "native" }.to_owned()
    }
}

/// The client's credentials at `meta.issuer`, registering if needed (and recording them
/// in `creds`).
pub(crate) async fn client_for(
    http: &HttpClient,
    reg: &Registration,
    meta: &ServerMetadata,
    creds: &mut Credentials,
    redirect_uri: &str,
) -> Result<ClientInfo, OAuthError> {
    let issuer = meta.issuer.as_str();
    if let Some(c) = creds.client(issuer) {
        return Ok(c.clone());
    }
    let client = if let Some(c) = reg.pre_registered_for(issuer) {
        tracing::debug!(%issuer, "using pre-registered client credentials");
        c.clone()
    } else if let Some(url) = reg
        .metadata_document
        .as_ref()
        .filter(|_| meta.client_id_metadata_document_supported)
    {
        tracing::debug!(%issuer, client_id = %url, "using a client ID metadata document");
        ClientInfo::public(url.clone()).auth_method("none")
    } else if let Some(endpoint) = &meta.registration_endpoint {
        register(http, reg, endpoint, redirect_uri).await?
    } else if !reg.pre_registered.is_empty() {
        return Err(Rejection::CredentialsForAnotherIssuer {
            issuer: issuer.to_owned(),
        }
        .into());
    } else {
        return Err(DiscoveryError::NoRegistration {
            issuer: issuer.to_owned(),
        }
        .into());
    };
    creds.set_client(issuer, client.clone());
    Ok(client)
}

/// Dynamic client registration (RFC 7591), with `application_type` (SEP-837).
async fn register(
    http: &HttpClient,
    reg: &Registration,
    endpoint: &str,
    redirect_uri: &str,
) -> Result<ClientInfo, OAuthError> {
    if !urls::is_secure_or_loopback(endpoint) {
        return Err(Rejection::InsecureEndpoint {
            url: endpoint.to_owned(),
        }
        .into());
    }
    let body = json!({
        "client_name": reg.client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": reg.grant_types(),
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": reg.application_type(redirect_uri),
    });
    let answer = Call::json(endpoint, &body).send(http).await?;
    let doc = answer.json().unwrap_or_default();
    let text = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_owned);
    match (answer.status.is_success(), text("client_id")) {
        (true, Some(client_id)) => {
            tracing::info!(%endpoint, %client_id, "registered");
            Ok(ClientInfo {
                client_id,
                client_secret: text("client_secret").map(Secret::new),
                token_endpoint_auth_method: text("token_endpoint_auth_method"),
            })
        }
        _ => Err(OAuthError::Server(ServerError {
            endpoint: "registration",
            status: answer.status.as_u16(),
            error: text("error").unwrap_or_else(|| "invalid_client_metadata".into()),
            description: text("error_description"),
        })),
    }
}
