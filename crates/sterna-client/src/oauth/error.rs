//! OAuth errors, by category. The umbrella [`OAuthError`] and its [`HttpFailure`] contain
//! a [`TransportError`](crate::TransportError) that contains them back, so they are
//! defined with it (`error/transport.rs`) and re-exported here.

pub use crate::error::{HttpFailure, OAuthError};

use std::fmt;

/// Discovery found nothing usable.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiscoveryError {
    /// No protected-resource metadata at the challenge's URL or the well-known URLs.
    NoResourceMetadata {
        /// The URLs tried, in order.
        tried: Vec<String>,
    },
    /// The protected-resource metadata names no authorization server.
    NoAuthorizationServer,
    /// No authorization-server metadata at any well-known URL of the issuer.
    NoServerMetadata {
        /// The issuer.
        issuer: String,
        /// The URLs tried, in order.
        tried: Vec<String>,
    },
    /// The metadata lacks an endpoint this grant needs.
    MissingEndpoint {
        /// `authorization_endpoint`, `token_endpoint` …
        endpoint: &'static str,
    },
    /// The authorization server does not offer PKCE with `S256` (or does not say so).
    NoPkce,
    /// No client credentials for this authorization server: nothing pre-registered, no
    /// client ID metadata document support and no registration endpoint.
    NoRegistration {
        /// The issuer.
        issuer: String,
    },
    /// A document that is not the JSON expected.
    Malformed {
        /// Its URL.
        url: String,
        /// What did not parse.
        reason: String,
    },
    /// The challenge cannot be parsed.
    Challenge(super::challenge::ChallengeError),
}

impl fmt::Display for DiscoveryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoResourceMetadata { tried } => {
                write!(f, "no protected-resource metadata (tried {tried:?})")
            }
            Self::NoAuthorizationServer => {
                f.write_str("the protected-resource metadata names no authorization server")
            }
            Self::NoServerMetadata { issuer, tried } => {
                write!(
                    f,
                    "no metadata for the authorization server {issuer} (tried {tried:?})"
                )
            }
            Self::MissingEndpoint { endpoint } => write!(f, "the metadata has no {endpoint}"),
            Self::NoPkce => f.write_str("the authorization server does not offer PKCE S256"),
            Self::NoRegistration { issuer } => write!(
                f,
                "no client credentials for {issuer} and no way to register (pre-register this client)"
            ),
            Self::Malformed { url, reason } => write!(f, "{url}: {reason}"),
            Self::Challenge(e) => write!(f, "WWW-Authenticate: {e}"),
        }
    }
}

/// A security check failed: the client refused to go on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rejection {
    /// The protected-resource metadata is for another resource than the server called.
    ResourceMismatch {
        /// The metadata's `resource`.
        resource: String,
        /// The URL the client called.
        endpoint: String,
    },
    /// The authorization-server metadata names another issuer than the one it was
    /// fetched for (RFC 8414 §3.3).
    IssuerMismatch {
        /// The issuer the metadata was fetched for.
        expected: String,
        /// The `issuer` it declares.
        found: String,
    },
    /// The authorization response's `iss` differs from the issuer (RFC 9207).
    IssMismatch {
        /// The recorded issuer.
        expected: String,
        /// The `iss` received.
        found: String,
    },
    /// The authorization server promised `iss` in its responses, and this one has none.
    IssMissing,
    /// The authorization response's `state` is missing or not the one sent.
    StateMismatch,
    /// The authorization response has neither a code nor an error.
    MissingCode,
    /// Credentials would go to a token or registration endpoint over plain HTTP on a
    /// non-loopback host.
    InsecureEndpoint {
        /// The endpoint.
        url: String,
    },
    /// Pre-registered credentials are bound to another authorization server.
    CredentialsForAnotherIssuer {
        /// The issuer now in use.
        issuer: String,
    },
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ResourceMismatch { resource, endpoint } => write!(
                f,
                "the protected-resource metadata is for {resource}, not for {endpoint}"
            ),
            Self::IssuerMismatch { expected, found } => {
                write!(f, "metadata for {expected} declares the issuer {found}")
            }
            Self::IssMismatch { expected, found } => {
                write!(
                    f,
                    "the authorization response comes from {found}, not {expected}"
                )
            }
            Self::IssMissing => f.write_str("the authorization response lacks the promised iss"),
            Self::StateMismatch => f.write_str("the authorization response's state does not match"),
            Self::MissingCode => f.write_str("the authorization response has no code"),
            Self::InsecureEndpoint { url } => {
                write!(f, "refusing to send credentials over plain HTTP to {url}")
            }
            Self::CredentialsForAnotherIssuer { issuer } => write!(
                f,
                "the pre-registered credentials belong to another authorization server than {issuer}"
            ),
        }
    }
}

/// An OAuth error response (RFC 6749 §4.1.2.1, §5.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    /// Which endpoint answered: `authorization`, `token`, `registration`,
    /// `token exchange`.
    pub endpoint: &'static str,
    /// The HTTP status (0 for an authorization response).
    pub status: u16,
    /// The `error` code (`invalid_grant`, `access_denied` …).
    pub error: String,
    /// The `error_description`, if any.
    pub description: Option<String>,
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} endpoint: {}", self.endpoint, self.error)?;
        if self.status != 0 {
            write!(f, " (HTTP {})", self.status)?;
        }
        if let Some(d) = &self.description {
            write!(f, ": {d}")?;
        }
        Ok(())
    }
}

/// The user-facing step failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum UiError {
    /// Listening for the redirect, or reading it, failed.
    Io(std::io::Error),
    /// The user did not finish in time.
    Timeout,
    /// The redirect never came back to the redirect URI.
    NoRedirect {
        /// The last status seen.
        status: u16,
    },
    /// The redirect URI cannot be used.
    BadRedirectUri {
        /// The URI.
        uri: String,
    },
    /// Fetching the authorization endpoint failed (headless).
    Http(HttpFailure),
}

impl fmt::Display for UiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => write!(f, "I/O: {e}"),
            Self::Timeout => f.write_str("the authorization was not completed in time"),
            Self::NoRedirect { status } => {
                write!(f, "no redirect to the redirect URI (last status {status})")
            }
            Self::BadRedirectUri { uri } => write!(f, "unusable redirect URI {uri}"),
            Self::Http(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for UiError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            Self::Http(e) => Some(e),
            _ => None,
        }
    }
}

/// The token store failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// Reading or writing the file failed.
    Io(std::io::Error),
    /// The file is not a token store.
    Corrupt(serde_json::Error),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => write!(f, "I/O: {e}"),
            Self::Corrupt(e) => write!(f, "unreadable: {e}"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            Self::Corrupt(e) => Some(e),
        }
    }
}

/// Why the client stopped re-authorizing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GaveUp {
    /// Still `401` with a fresh token.
    StillUnauthorized,
    /// Still `403 insufficient_scope` after the allowed number of step-ups, or for scopes
    /// the token already has.
    InsufficientScope {
        /// The scopes the server asked for.
        scopes: Vec<String>,
    },
    /// An earlier attempt with a non-interactive grant failed; it is not retried.
    GrantFailedBefore,
}

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::StillUnauthorized => f.write_str("still unauthorized with a fresh token"),
            Self::InsufficientScope { scopes } => {
                write!(f, "still insufficient scope (the server wants {scopes:?})")
            }
            Self::GrantFailedBefore => f.write_str("the grant failed before and is not retried"),
        }
    }
}
