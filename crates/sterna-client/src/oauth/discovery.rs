//! Finding the authorization server: protected-resource metadata (from the challenge's
//! `resource_metadata`, else the well-known URLs), then the server's own metadata, each
//! validated before use.

use super::error::{DiscoveryError, OAuthError, Rejection};
use super::fetch::{Answer, Call};
use super::metadata::{ResourceMetadata, ServerMetadata};
use super::urls;
use crate::transport::HttpClient;

/// Fetches and validates the protected-resource metadata of the MCP endpoint `mcp_url`.
pub(crate) async fn resource_metadata(
    client: &HttpClient,
    mcp_url: &str,
    from_challenge: Option<&str>,
) -> Result<ResourceMetadata, OAuthError> {
    let candidates = match from_challenge {
        Some(url) => vec![url.to_owned()],
        None => urls::resource_metadata_urls(mcp_url),
    };
    let mut tried = Vec::new();
    for url in candidates {
        tried.push(url.clone());
        let answer = Call::get(&url).send(client).await?;
        let Some(prm) = document::<ResourceMetadata>(&url, &answer)? else {
            continue;
        };
        if !urls::resource_covers(&prm.resource, mcp_url) {
            return Err(Rejection::ResourceMismatch {
                resource: prm.resource,
                endpoint: mcp_url.to_owned(),
            }
            .into());
        }
        if prm.authorization_servers.is_empty() {
            return Err(DiscoveryError::NoAuthorizationServer.into());
        }
        tracing::debug!(%url, resource = %prm.resource, "protected-resource metadata");
        return Ok(prm);
    }
    Err(DiscoveryError::NoResourceMetadata { tried }.into())
}

/// Fetches the metadata of `issuer` from its well-known URLs, in order; a document that
/// declares another issuer is not used.
pub(crate) async fn server_metadata(
    client: &HttpClient,
    issuer: &str,
) -> Result<ServerMetadata, OAuthError> {
    let mut tried = Vec::new();
    let mut mismatch = None;
    for url in urls::server_metadata_urls(issuer) {
        tried.push(url.clone());
        let answer = Call::get(&url).send(client).await?;
        let Some(meta) = document::<ServerMetadata>(&url, &answer)? else {
            continue;
        };
        if meta.issuer != issuer {
            tracing::warn!(%url, expected = %issuer, found = %meta.issuer, "metadata for another issuer: not used");
            mismatch = Some(Rejection::IssuerMismatch {
                expected: issuer.to_owned(),
                found: meta.issuer,
            });
            continue;
        }
        tracing::debug!(%url, %issuer, "authorization-server metadata");
        return Ok(meta);
    }
    match mismatch {
        Some(r) => Err(r.into()),
        None => Err(DiscoveryError::NoServerMetadata {
            issuer: issuer.to_owned(),
            tried,
        }
        .into()),
    }
}

/// The document in a `2xx` answer; `None` for a `4xx` (try the next URL).
fn document<T: serde::de::DeserializeOwned>(
    url: &str,
    answer: &Answer,
) -> Result<Option<T>, OAuthError> {
    let status = answer.status.as_u16();
    if (400..500).contains(&status) {
        return Ok(None);
    }
    if !answer.status.is_success() {
        return Err(super::error::HttpFailure::Status {
            url: url.to_owned(),
            status,
        }
        .into());
    }
    serde_json::from_slice(&answer.body).map(Some).map_err(|e| {
        DiscoveryError::Malformed {
            url: url.to_owned(),
            reason: e.to_string(),
        }
        .into()
    })
}
