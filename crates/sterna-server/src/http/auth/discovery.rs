//! Authorization-server metadata (RFC 8414, OpenID Connect Discovery): where an issuer
//! publishes its keys and its introspection endpoint.

use super::error::{DocumentProblem, Unavailable};
use super::fetch::{FetchError, HttpFetch};
use super::metadata::split_resource;
use bytes::Bytes;
use http::header::ACCEPT;
use http::{Request, Response, StatusCode};
use serde::Deserialize;

/// The members of an issuer's metadata the validators use.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct IssuerMetadata {
    issuer: String,
    #[serde(default)]
    #[cfg_attr(
        not(feature = "jwt"),
        allow(dead_code, reason = "read by the JWT validator")
    )]
    pub(crate) jwks_uri: Option<String>,
    #[serde(default)]
    pub(crate) introspection_endpoint: Option<String>,
}

/// Fetches and validates `issuer`'s metadata, trying the RFC 8414 path-inserted URL,
/// then OpenID Connect's (inserted, then appended for an issuer with a path). A 4xx
/// moves on to the next URL; the document's `issuer` must equal `issuer` exactly.
pub(crate) async fn discover(
    fetcher: &dyn HttpFetch,
    issuer: &str,
) -> Result<IssuerMetadata, Unavailable> {
    let mut last = None;
    for url in metadata_urls(issuer) {
        let response = get(fetcher, &url).await?;
        let status = response.status();
        if status.is_client_error() {
            last = Some(Unavailable::Status { url, status });
            continue;
        }
        if status != StatusCode::OK {
            return Err(Unavailable::Status { url, status });
        }
        let doc: IssuerMetadata =
            serde_json::from_slice(response.body()).map_err(|_| Unavailable::Document {
                url: url.clone(),
                problem: DocumentProblem::NotJson,
            })?;
        if doc.issuer != issuer {
            let problem = DocumentProblem::IssuerMismatch;
            return Err(Unavailable::Document { url, problem });
        }
        return Ok(doc);
    }
    Err(last.unwrap_or(Unavailable::Document {
        url: issuer.to_owned(),
        problem: DocumentProblem::Missing("metadata"),
    }))
}

/// The metadata URLs of `issuer`, in the order to try them.
pub(crate) fn metadata_urls(issuer: &str) -> Vec<String> {
    let Some((origin, path)) = split_resource(issuer) else {
        return Vec::new();
    };
    let path = path.trim_end_matches('/');
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    urls
}

/// GETs `url` as JSON.
pub(crate) async fn get(
    fetcher: &dyn HttpFetch,
    url: &str,
) -> Result<Response<Bytes>, Unavailable> {
    let fail = |source| Unavailable::Fetch {
        url: url.to_owned(),
        source,
    };
    let request = Request::get(url)
        .header(ACCEPT, "application/json")
        .body(Bytes::new())
        .map_err(|_| {
            fail(FetchError::Refused {
                url: url.to_owned(),
            })
        })?;
    fetcher.fetch(request).await.map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_in_the_order_rfc_8414_and_oidc_ask() {
        assert_eq!(
            metadata_urls("http://127.0.0.1:9"),
            [
                "http://127.0.0.1:9/.well-known/oauth-authorization-server",
                "http://127.0.0.1:9/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            metadata_urls("https://as.example/tenant1"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration"
            ]
        );
    }
}
