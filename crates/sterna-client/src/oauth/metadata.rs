//! Protected-resource metadata (RFC 9728) and authorization-server metadata (RFC 8414 /
//! OpenID Connect Discovery): the fields MCP clients use. Identifiers are kept exactly as
//! received.

use serde::{Deserialize, Serialize};

/// An MCP server's protected-resource metadata (RFC 9728 §2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceMetadata {
    /// The resource identifier, as published (sent verbatim as `resource`).
    pub resource: String,
    /// The issuers of the authorization servers that protect it.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// The scopes it knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// DPoP proof algorithms it accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

/// An authorization server's metadata (RFC 8414 §2; OpenID Connect Discovery).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerMetadata {
    /// The issuer identifier (equal, as a string, to the one it was looked up for).
    pub issuer: String,
    /// Where the user authorizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Where codes and grants become tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// Dynamic client registration (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// The scopes it knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// `code` …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_types_supported: Option<Vec<String>>,
    /// `authorization_code`, `refresh_token`, `client_credentials` …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// PKCE methods (`S256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Client authentication methods at the token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Whether authorization responses carry `iss` (RFC 9207).
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// Whether URL client IDs (Client ID Metadata Documents) are accepted.
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// DPoP proof algorithms it accepts (RFC 9449 §5.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl ServerMetadata {
    /// Whether `scope` is in `scopes_supported`.
    pub fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == scope))
    }

    /// Whether it accepts ES256 DPoP proofs.
    pub fn supports_dpop(&self) -> bool {
        self.dpop_signing_alg_values_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == "ES256"))
    }

    /// Whether it offers PKCE with S256 (a document that does not say is refused).
    pub fn supports_pkce_s256(&self) -> bool {
        self.code_challenge_methods_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == "S256"))
    }
}
