//! The protected-resource metadata document (RFC 9728) and a layer that serves it at its
//! well-known path.

use super::super::body::McpBody;
use super::super::respond::{json, plain};
use super::error::ConfigError;
use futures_util::future::{Either, Ready, ready};
use http::header::{ALLOW, CACHE_CONTROL};
use http::{HeaderValue, Method, Request, Response, StatusCode, Uri};
use std::sync::Arc;
use std::task::{Context, Poll};

const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The protected-resource metadata of an MCP endpoint (RFC 9728): which authorization
/// servers issue its tokens, which scopes exist.
///
/// It is served at the path-inserted well-known URL (`https://host/mcp` →
/// `https://host/.well-known/oauth-protected-resource/mcp`), named in every challenge as
/// `resource_metadata`, and answered with `Access-Control-Allow-Origin: *` for browser
/// clients.
///
/// ```
/// use sterna_server::http::auth::ResourceMetadata;
/// let meta = ResourceMetadata::new("https://mcp.example.com/mcp", "https://auth.example.com")?
///     .scopes_supported(["mcp:read", "mcp:write"]);
/// assert_eq!(meta.url(), "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
/// # Ok::<(), sterna_server::http::auth::ConfigError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ResourceMetadata {
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    resource_name: Option<String>,
    resource_documentation: Option<String>,
    dpop_algs: Vec<String>,
    dpop_required: bool,
    at_root: bool,
    origin: String,
    path: String,
}

impl ResourceMetadata {
    /// The metadata of `resource` (the endpoint's canonical URI: the exact string
    /// tokens' `aud` must contain), whose tokens `authorization_server` issues (its
    /// issuer identifier, exactly as it publishes it).
    pub fn new(
        resource: impl Into<String>,
        authorization_server: impl Into<String>,
    ) -> Result<Self, ConfigError> {
        let resource = resource.into();
        let (origin, path) = split_resource(&resource).ok_or_else(|| ConfigError::Resource {
            value: resource.clone(),
        })?;
        let path = match path {
            "" | "/" => WELL_KNOWN.to_owned(),
            p => format!("{WELL_KNOWN}{p}"),
        };
        Ok(Self {
            origin: origin.to_owned(),
            path,
            resource,
            authorization_servers: vec![authorization_server.into()],
            scopes_supported: Vec::new(),
            resource_name: None,
            resource_documentation: None,
            dpop_algs: Vec::new(),
            dpop_required: false,
            at_root: false,
        })
    }

    /// Another authorization server.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes a client may ask for (`scopes_supported`); keep `offline_access` out.
    pub fn scopes_supported<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// A human-readable name (`resource_name`).
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// A page about the resource (`resource_documentation`).
    pub fn resource_documentation(mut self, url: impl Into<String>) -> Self {
        self.resource_documentation = Some(url.into());
        self
    }

    /// The DPoP proof algorithms accepted (`dpop_signing_alg_values_supported`, RFC 9728
    /// §2). [`AuthLayer::dpop`](super::AuthLayer::dpop) sets it from its configuration.
    pub fn dpop_signing_alg_values_supported<I, S>(mut self, algs: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.dpop_algs = algs.into_iter().map(Into::into).collect();
        self
    }

    /// Whether only DPoP-bound tokens are accepted (`dpop_bound_access_tokens_required`,
    /// RFC 9728 §2). [`AuthLayer::dpop`](super::AuthLayer::dpop) sets it from its
    /// configuration.
    pub fn dpop_bound_access_tokens_required(mut self, required: bool) -> Self {
        self.dpop_required = required;
        self
    }

    /// Also serves the document at `/.well-known/oauth-protected-resource` (only when
    /// this endpoint is the only protected resource of its origin).
    pub fn serve_at_root(mut self) -> Self {
        self.at_root = true;
        self
    }

    /// The resource identifier.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The authorization servers.
    pub fn authorization_servers(&self) -> &[String] {
        &self.authorization_servers
    }

    /// The absolute URL of the document, as challenges name it.
    pub fn url(&self) -> String {
        format!("{}{}", self.origin, self.path)
    }

    /// The path the document is served at.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The document.
    pub fn to_json(&self) -> serde_json::Value {
        let mut doc = serde_json::json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !self.scopes_supported.is_empty() {
            doc["scopes_supported"] = self.scopes_supported.clone().into();
        }
        if let Some(n) = &self.resource_name {
            doc["resource_name"] = n.clone().into();
        }
        if let Some(d) = &self.resource_documentation {
            doc["resource_documentation"] = d.clone().into();
        }
        if !self.dpop_algs.is_empty() {
            doc["dpop_signing_alg_values_supported"] = self.dpop_algs.clone().into();
        }
        if self.dpop_required {
            doc["dpop_bound_access_tokens_required"] = true.into();
        }
        doc
    }

    /// A service answering the document's path(s), 404 elsewhere: to mount next to the
    /// endpoint in your own router (`route_service(meta.path(), meta.service())`).
    pub fn service(&self) -> MetadataService<NotFound> {
        tower_layer::Layer::layer(&self.layer(), NotFound)
    }

    /// A layer answering the document's path(s) and passing everything else on.
    pub fn layer(&self) -> MetadataLayer {
        MetadataLayer {
            served: Arc::new(Served {
                path: self.path.clone(),
                at_root: self.at_root,
                body: self.to_json().to_string().into_bytes(),
            }),
        }
    }
}

/// `scheme://authority` and the path of an absolute http(s) URI without query or
/// fragment.
pub(crate) fn split_resource(s: &str) -> Option<(&str, &str)> {
    if s.contains(['#', '?']) {
        return None;
    }
    let uri: Uri = s.parse().ok()?;
    let scheme = uri.scheme_str()?;
    if !matches!(scheme, "http" | "https") || uri.authority().is_none() {
        return None;
    }
    let after = s.find("://")? + 3;
    let path_at = s[after..].find('/').map_or(s.len(), |i| after + i);
    Some((&s[..path_at], &s[path_at..]))
}

/// An absolute `http(s)` URL.
pub(crate) fn is_http_url(s: &str) -> bool {
    s.parse::<Uri>()
        .is_ok_and(|u| matches!(u.scheme_str(), Some("http" | "https")) && u.authority().is_some())
}

#[derive(Debug)]
struct Served {
    path: String,
    at_root: bool,
    body: Vec<u8>,
}

impl Served {
    fn matches(&self, path: &str) -> bool {
        path == self.path || (self.at_root && path == WELL_KNOWN)
    }

    fn answer(&self, method: &Method) -> Response<McpBody> {
        let mut r = match *method {
            Method::GET => json(StatusCode::OK, self.body.clone()),
            Method::HEAD => plain(StatusCode::OK),
            Method::OPTIONS => plain(StatusCode::NO_CONTENT),
            _ => plain(StatusCode::METHOD_NOT_ALLOWED),
        };
        let h = r.headers_mut();
        h.insert("access-control-allow-origin", HeaderValue::from_static("*"));
        h.insert(
            "access-control-allow-methods",
            HeaderValue::from_static("GET, HEAD, OPTIONS"),
        );
        h.insert(ALLOW, HeaderValue::from_static("GET, HEAD, OPTIONS"));
        h.insert(CACHE_CONTROL, HeaderValue::from_static("max-age=300"));
        r
    }
}

/// Serves a [`ResourceMetadata`] document; made by [`ResourceMetadata::layer`].
#[derive(Debug, Clone)]
pub struct MetadataLayer {
    served: Arc<Served>,
}

impl<S> tower_layer::Layer<S> for MetadataLayer {
    type Service = MetadataService<S>;

    fn layer(&self, inner: S) -> MetadataService<S> {
        MetadataService {
            inner,
            served: self.served.clone(),
        }
    }
}

/// The service [`MetadataLayer`] wraps around an inner service.
#[derive(Debug, Clone)]
pub struct MetadataService<S> {
    inner: S,
    served: Arc<Served>,
}

impl<S, B> tower_service::Service<Request<B>> for MetadataService<S>
where
    S: tower_service::Service<Request<B>, Response = Response<McpBody>>,
{
    type Response = Response<McpBody>;
    type Error = S::Error;
    type Future = Either<Ready<Result<Response<McpBody>, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        if self.served.matches(req.uri().path()) {
            return Either::Left(ready(Ok(self.served.answer(req.method()))));
        }
        Either::Right(self.inner.call(req))
    }
}

/// A service answering 404 to everything (behind [`ResourceMetadata::service`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct NotFound;

impl<B> tower_service::Service<Request<B>> for NotFound {
    type Response = Response<McpBody>;
    type Error = std::convert::Infallible;
    type Future = Ready<Result<Response<McpBody>, std::convert::Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: Request<B>) -> Self::Future {
        ready(Ok(plain(StatusCode::NOT_FOUND)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_url_is_path_inserted() {
        let m = ResourceMetadata::new("http://127.0.0.1:8080/mcp", "http://as").unwrap();
        assert_eq!(m.path(), "/.well-known/oauth-protected-resource/mcp");
        assert_eq!(
            m.url(),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
        );
        let root = ResourceMetadata::new("https://mcp.example.com", "https://as").unwrap();
        assert_eq!(
            root.url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        for bad in [
            "mcp.example.com/mcp",
            "ftp://x/mcp",
            "https://x/mcp#f",
            "https://x/mcp?q=1",
        ] {
            assert!(ResourceMetadata::new(bad, "https://as").is_err(), "{bad}");
        }
    }
}
