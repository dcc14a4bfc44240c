//! Token introspection (RFC 7662): the authorization server says whether a token is
//! active, and what it grants. For opaque tokens, or to notice revocation at once.

mod cache;

use super::claims::{check_times, grant};
use super::credentials::Presented;
use super::discovery::discover;
use super::error::{AuthError, ConfigError, DocumentProblem, TokenRejection, Unavailable};
use super::fetch::{FetchError, HttpFetch, HyperFetcher};
use super::layer::Authenticator;
use super::metadata::{is_http_url, split_resource};
use crate::server::{AccessGrant, Principal};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use cache::{AnswerCache, Key};
use futures_util::future::BoxFuture;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::{Request, StatusCode};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How many grants the cache keeps (only the authorization server can make more).
const MAX_GRANTS: usize = 10_000;
/// How many refusals the cache keeps (anyone can make more, with made-up tokens; they
/// only push out other refusals).
const MAX_REFUSALS: usize = 10_000;
const DISCOVERY_RETRY: Duration = Duration::from_secs(30);

/// Validates tokens by asking the authorization server (RFC 7662).
///
/// An answer counts when `active` is `true`, its `iss` (if any) is the configured
/// issuer, its `aud` contains this resource, its `exp`/`nbf`/`iat` hold and it names a
/// `sub`. Answers are cached (by a SHA-256 of the token, never the token) for
/// [`cache_ttl`](IntrospectionBuilder::cache_ttl), at most until the token expires:
/// revocation shows within that time. The cache holds at most 10,000 grants and 10,000
/// refusals, apart: made-up tokens (refused) never push out the grants of real users;
/// a full pool drops the entry that expires first.
///
/// ```no_run
/// # fn run() -> Result<(), sterna_server::http::auth::ConfigError> {
/// use sterna_server::http::auth::{AuthLayer, Introspection};
/// let introspection = Introspection::builder("https://mcp.example.com/mcp", "https://auth.example.com")
///     .client_credentials("mcp-server", "its-secret") // endpoint from the issuer's metadata
///     .build()?;
/// let layer = AuthLayer::new(introspection);
/// # let _ = layer; Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Introspection {
    inner: Arc<Inner>,
}

struct Inner {
    audience: String,
    issuer: String,
    client: Option<(String, String)>,
    fetcher: Arc<dyn HttpFetch>,
    cache_ttl: Duration,
    leeway: u64,
    endpoint: tokio::sync::Mutex<Endpoint>,
    cache: Mutex<AnswerCache>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspection")
            .field("audience", &self.audience)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client.as_ref().map(|c| &c.0))
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Endpoint {
    url: Option<String>,
    last_discovery: Option<Instant>,
}

/// Configures an [`Introspection`] validator.
#[derive(Clone)]
pub struct IntrospectionBuilder {
    audience: String,
    issuer: String,
    endpoint: Option<String>,
    client: Option<(String, String)>,
    fetcher: Option<Arc<dyn HttpFetch>>,
    cache_ttl: Duration,
    leeway: Duration,
}

impl std::fmt::Debug for IntrospectionBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionBuilder")
            .field("audience", &self.audience)
            .field("issuer", &self.issuer)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl IntrospectionBuilder {
    /// The introspection endpoint (default: `introspection_endpoint` of the issuer's
    /// metadata, discovered on first use).
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// How this resource server authenticates to the endpoint (HTTP Basic,
    /// form-encoded as RFC 6749 §2.3.1 asks).
    pub fn client_credentials(mut self, id: impl Into<String>, secret: impl Into<String>) -> Self {
        self.client = Some((id.into(), secret.into()));
        self
    }

    /// How the endpoint is reached (default: [`HyperFetcher::new`]).
    pub fn fetcher(mut self, fetcher: impl HttpFetch) -> Self {
        self.fetcher = Some(Arc::new(fetcher));
        self
    }

    /// How long an answer is reused (default 60 s; never past the token's `exp`).
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache_ttl = ttl;
        self
    }

    /// The clock skew allowed on `exp`, `nbf` and `iat` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The validator.
    pub fn build(self) -> Result<Introspection, ConfigError> {
        if split_resource(&self.audience).is_none() {
            return Err(ConfigError::Resource {
                value: self.audience,
            });
        }
        if split_resource(&self.issuer).is_none() {
            return Err(ConfigError::Issuer { value: self.issuer });
        }
        if let Some(url) = self.endpoint.as_ref().filter(|u| !is_http_url(u)) {
            return Err(ConfigError::Url { value: url.clone() });
        }
        Ok(Introspection {
            inner: Arc::new(Inner {
                audience: self.audience,
                issuer: self.issuer,
                client: self.client,
                fetcher: self
                    .fetcher
                    .unwrap_or_else(|| Arc::new(HyperFetcher::new())),
                cache_ttl: self.cache_ttl,
                leeway: self.leeway.as_secs(),
                endpoint: tokio::sync::Mutex::new(Endpoint {
                    url: self.endpoint,
                    last_discovery: None,
                }),
                cache: Mutex::new(AnswerCache::new(MAX_GRANTS, MAX_REFUSALS)),
            }),
        })
    }
}

impl Introspection {
    /// A validator for tokens meant for `audience` (this resource's canonical URI),
    /// issued by `issuer`.
    pub fn builder(audience: impl Into<String>, issuer: impl Into<String>) -> IntrospectionBuilder {
        IntrospectionBuilder {
            audience: audience.into(),
            issuer: issuer.into(),
            endpoint: None,
            client: None,
            fetcher: None,
            cache_ttl: Duration::from_secs(60),
            leeway: Duration::from_secs(30),
        }
    }

    /// Validates `token`: from the cache, or by asking the authorization server.
    pub async fn validate(&self, token: &str) -> Result<AccessGrant, AuthError> {
        let key: Key = Sha256::digest(token.as_bytes()).into();
        if let Some(answer) = self.cached(&key) {
            return answer.map_err(AuthError::InvalidToken);
        }
        let claims = self.introspect(token).await?;
        let answer = self.judge(claims);
        self.remember(key, &answer);
        answer.map_err(AuthError::InvalidToken)
    }

    fn cached(&self, key: &Key) -> Option<Result<AccessGrant, TokenRejection>> {
        let mut cache = self.inner.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.get(key, Instant::now())
    }

    fn remember(&self, key: Key, answer: &Result<AccessGrant, TokenRejection>) {
        let now = Instant::now();
        let mut until = now + self.inner.cache_ttl;
        if let Some(exp) = answer.as_ref().ok().and_then(AccessGrant::expires_at) {
            let left = exp
                .duration_since(std::time::SystemTime::now())
                .unwrap_or_default();
            until = until.min(now + left);
        }
        let mut cache = self.inner.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.insert(key, answer.clone(), until);
    }

    /// Whether the answer makes a grant for this resource.
    fn judge(&self, claims: Map<String, Value>) -> Result<AccessGrant, TokenRejection> {
        let inner = &*self.inner;
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(TokenRejection::Unknown);
        }
        match claims.get("iss") {
            None => {}
            Some(Value::String(iss)) if *iss == inner.issuer => {}
            Some(_) => return Err(TokenRejection::Issuer),
        }
        let for_us = match claims.get("aud") {
            Some(Value::String(a)) => *a == inner.audience,
            Some(Value::Array(a)) => a.iter().any(|v| v.as_str() == Some(&inner.audience)),
            _ => false,
        };
        if !for_us {
            return Err(TokenRejection::Audience);
        }
        check_times(&claims, inner.leeway, false)?;
        grant(&inner.issuer, claims)
    }

    /// Asks the endpoint about `token`; the answer's members.
    async fn introspect(&self, token: &str) -> Result<Map<String, Value>, Unavailable> {
        let url = self.endpoint().await?;
        let form = format!("token={}&token_type_hint=access_token", form_encode(token));
        let mut request = Request::post(&url)
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(ACCEPT, "application/json");
        if let Some((id, secret)) = &self.inner.client {
            let basic = STANDARD.encode(format!("{}:{}", form_encode(id), form_encode(secret)));
            request = request.header(AUTHORIZATION, format!("Basic {basic}"));
        }
        let request = request
            .body(Bytes::from(form))
            .map_err(|_| Unavailable::Fetch {
                url: url.clone(),
                source: FetchError::Refused { url: url.clone() },
            })?;
        let fetched = self.inner.fetcher.fetch(request).await;
        let response = fetched.map_err(|source| Unavailable::Fetch {
            url: url.clone(),
            source,
        })?;
        if response.status() != StatusCode::OK {
            let status = response.status();
            return Err(Unavailable::Status { url, status });
        }
        serde_json::from_slice(response.body()).map_err(|_| Unavailable::Document {
            url,
            problem: DocumentProblem::NotJson,
        })
    }

    /// The endpoint: configured, discovered earlier, or discovered now (at most once per
    /// 30 s while discovery fails).
    async fn endpoint(&self) -> Result<String, Unavailable> {
        let mut state = self.inner.endpoint.lock().await;
        if let Some(url) = &state.url {
            return Ok(url.clone());
        }
        if state
            .last_discovery
            .is_some_and(|at| at.elapsed() < DISCOVERY_RETRY)
        {
            return Err(Unavailable::Backoff);
        }
        state.last_discovery = Some(Instant::now());
        let issuer = &self.inner.issuer;
        let meta = discover(self.inner.fetcher.as_ref(), issuer).await?;
        let url = meta
            .introspection_endpoint
            .filter(|u| is_http_url(u))
            .ok_or_else(|| Unavailable::Document {
                url: issuer.clone(),
                problem: DocumentProblem::Missing("introspection_endpoint"),
            })?;
        state.url = Some(url.clone());
        Ok(url)
    }
}

impl Authenticator for Introspection {
    fn authenticate<'a>(
        &'a self,
        presented: Presented<'a>,
    ) -> BoxFuture<'a, Result<Option<Principal>, AuthError>> {
        Box::pin(async move {
            let Some(token) = presented.access_token() else {
                return Ok(None);
            };
            let grant = self.validate(token).await?;
            Ok(Some(Principal::from_grant(grant)))
        })
    }
}

/// `application/x-www-form-urlencoded` for one value.
fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(b as char);
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::form_encode;

    #[test]
    fn form_encoding() {
        assert_eq!(form_encode("a+b/c=d e~"), "a%2Bb%2Fc%3Dd+e%7E");
    }
}
