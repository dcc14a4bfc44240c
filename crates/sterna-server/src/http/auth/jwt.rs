//! JWT access tokens (RFC 9068) validated at the resource server: the issuer's keys from
//! its JWKS, an asymmetric algorithm allow-list, `typ`, `iss`, `aud`, `exp`/`nbf`/`iat`.

use super::alg::SigningAlg;
use super::claims::{check_times, grant};
use super::credentials::Presented;
use super::error::{AuthError, ConfigError, TokenRejection};
use super::fetch::{HttpFetch, HyperFetcher};
use super::jwks::{JwksCache, JwksSource, RefreshPolicy};
use super::layer::Authenticator;
use super::metadata::{is_http_url, split_resource};
use crate::server::{AccessGrant, Principal};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::future::BoxFuture;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Validation, decode};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// Tokens longer than this are refused unread.
const MAX_TOKEN: usize = 16 * 1024;

/// Validates JWT access tokens against the keys of the issuers this resource trusts.
///
/// For each token: the header's `alg` must be on the allow-list (asymmetric only: `none`
/// and HMAC cannot be configured), `typ` must be `at+jwt` (RFC 9068) unless
/// [`accept_untyped_tokens`](JwtValidatorBuilder::accept_untyped_tokens), no `crit`
/// extension; `iss` must be exactly a configured issuer, whose JWKS holds the key (by
/// `kid`); the signature must verify; `aud` must contain this resource's identifier;
/// `exp` (required), `nbf` and `iat` must hold within the leeway (30 s); `sub` is
/// required. The principal is `<iss>#<sub>`, carrying the token's
/// [`AccessGrant`].
///
/// ```no_run
/// # fn run() -> Result<(), sterna_server::http::auth::ConfigError> {
/// use sterna_server::http::auth::{AuthLayer, JwtValidator, ResourceMetadata, ScopePolicy};
/// let resource = "https://mcp.example.com/mcp";
/// let jwt = JwtValidator::builder(resource)
///     .issuer("https://auth.example.com") // jwks_uri from its metadata
///     .build()?;
/// let layer = AuthLayer::new(jwt)
///     .resource_metadata(ResourceMetadata::new(resource, "https://auth.example.com")?)
///     .scopes(ScopePolicy::new().always(["mcp:read"]).tool("provision_database", ["mcp:write"]));
/// # let _ = layer; Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct JwtValidator {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    audience: String,
    issuers: Vec<(String, JwksCache)>,
    algorithms: Vec<SigningAlg>,
    leeway: Duration,
    typed: bool,
}

/// Configures a [`JwtValidator`].
#[derive(Clone)]
pub struct JwtValidatorBuilder {
    audience: String,
    issuers: Vec<(String, Option<String>)>,
    algorithms: Vec<SigningAlg>,
    leeway: Duration,
    typed: bool,
    fetcher: Option<Arc<dyn HttpFetch>>,
    refresh: RefreshPolicy,
}

impl std::fmt::Debug for JwtValidatorBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtValidatorBuilder")
            .field("audience", &self.audience)
            .field("issuers", &self.issuers)
            .field("algorithms", &self.algorithms)
            .finish_non_exhaustive()
    }
}

impl JwtValidator {
    /// A validator for tokens meant for `audience`: this resource's canonical URI, the
    /// same string as its [`ResourceMetadata`](super::ResourceMetadata)'s `resource`.
    pub fn builder(audience: impl Into<String>) -> JwtValidatorBuilder {
        JwtValidatorBuilder {
            audience: audience.into(),
            issuers: Vec::new(),
            algorithms: SigningAlg::ALL.to_vec(),
            leeway: Duration::from_secs(30),
            typed: true,
            fetcher: None,
            refresh: RefreshPolicy::default(),
        }
    }

    /// Validates `token`; the grant it carries, or why it is refused.
    pub async fn validate(&self, token: &str) -> Result<AccessGrant, AuthError> {
        let inner = &*self.inner;
        let (header, claims) = read(token)?;
        let alg = SigningAlg::from_name(&header.alg)
            .filter(|a| inner.algorithms.contains(a))
            .ok_or(TokenRejection::Algorithm)?;
        if header.crit.is_some() {
            return Err(TokenRejection::CriticalHeader.into());
        }
        let typ = header.typ.as_deref().unwrap_or("");
        let access_typ =
            typ.eq_ignore_ascii_case("at+jwt") || typ.eq_ignore_ascii_case("application/at+jwt");
        if inner.typed && !access_typ {
            return Err(TokenRejection::Type.into());
        }
        let (issuer, keys) = match claims.get("iss") {
            Some(Value::String(iss)) => inner
                .issuers
                .iter()
                .find(|(i, _)| i == iss)
                .ok_or(TokenRejection::Issuer)?,
            Some(_) => return Err(TokenRejection::BadClaim("iss").into()),
            None => return Err(TokenRejection::MissingClaim("iss").into()),
        };
        let key = keys.key(header.kid.as_deref(), alg).await?;
        let mut validation = Validation::new(alg.jwt());
        validation.set_issuer(&[issuer]);
        validation.set_audience(&[&inner.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = inner.leeway.as_secs();
        let verified = decode::<Map<String, Value>>(token, &key, &validation).map_err(rejection)?;
        check_times(&verified.claims, inner.leeway.as_secs(), true)?;
        Ok(grant(issuer, verified.claims)?)
    }
}

impl Authenticator for JwtValidator {
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

#[derive(Deserialize)]
struct Header {
    alg: String,
    #[serde(default)]
    typ: Option<String>,
    #[serde(default)]
    kid: Option<String>,
    #[serde(default)]
    crit: Option<Value>,
}

/// The header and the (not yet verified) claims of a compact JWS.
fn read(token: &str) -> Result<(Header, Map<String, Value>), TokenRejection> {
    if token.len() > MAX_TOKEN {
        return Err(TokenRejection::Malformed);
    }
    let mut parts = token.split('.');
    let (Some(h), Some(p), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenRejection::Malformed);
    };
    let json = |part: &str| {
        URL_SAFE_NO_PAD
            .decode(part)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            .ok_or(TokenRejection::Malformed)
    };
    let header = serde_json::from_value(json(h)?).map_err(|_| TokenRejection::Malformed)?;
    match json(p)? {
        Value::Object(claims) => Ok((header, claims)),
        _ => Err(TokenRejection::Malformed),
    }
}

/// The category of a `jsonwebtoken` refusal.
fn rejection(e: jsonwebtoken::errors::Error) -> TokenRejection {
    let claim = |c: &str| match c {
        "exp" => "exp",
        "iss" => "iss",
        "aud" => "aud",
        "sub" => "sub",
        "nbf" => "nbf",
        _ => "claim",
    };
    match e.kind() {
        ErrorKind::InvalidSignature
        | ErrorKind::InvalidEcdsaKey
        | ErrorKind::InvalidEddsaKey
        | ErrorKind::InvalidRsaKey(_)
        | ErrorKind::InvalidKeyFormat => TokenRejection::Signature,
        ErrorKind::ExpiredSignature => TokenRejection::Expired,
        ErrorKind::ImmatureSignature => TokenRejection::NotYetValid,
        ErrorKind::InvalidIssuer => TokenRejection::Issuer,
        ErrorKind::InvalidAudience => TokenRejection::Audience,
        ErrorKind::MissingRequiredClaim(c) => TokenRejection::MissingClaim(claim(c)),
        ErrorKind::InvalidClaimFormat(c) => TokenRejection::BadClaim(claim(c)),
        ErrorKind::InvalidAlgorithm
        | ErrorKind::UnsupportedAlgorithm
        | ErrorKind::MissingAlgorithm
        | ErrorKind::InvalidAlgorithmName => TokenRejection::Algorithm,
        _ => TokenRejection::Malformed,
    }
}

impl JwtValidatorBuilder {
    /// Trusts tokens of `issuer` (its identifier, exactly as its tokens' `iss` and its
    /// metadata's `issuer` spell it); its `jwks_uri` is discovered from its metadata
    /// (RFC 8414, then OpenID Connect Discovery) on first use.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuers.push((issuer.into(), None));
        self
    }

    /// Trusts tokens of `issuer`, whose keys are published at `jwks_uri`.
    pub fn issuer_with_jwks(
        mut self,
        issuer: impl Into<String>,
        jwks_uri: impl Into<String>,
    ) -> Self {
        self.issuers.push((issuer.into(), Some(jwks_uri.into())));
        self
    }

    /// The accepted algorithms (default: all of [`SigningAlg::ALL`]).
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = SigningAlg>) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// The clock skew allowed on `exp`, `nbf` and `iat` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Accepts tokens whose `typ` is not `at+jwt` (issuers that predate RFC 9068). ID
    /// tokens of the same issuer then pass as access tokens if their `aud` names this
    /// resource.
    pub fn accept_untyped_tokens(mut self) -> Self {
        self.typed = false;
        self
    }

    /// How JWKS and metadata are fetched (default: [`HyperFetcher::new`], plain HTTP to
    /// loopback only; give it a TLS connector for `https://` issuers).
    pub fn fetcher(mut self, fetcher: impl HttpFetch) -> Self {
        self.fetcher = Some(Arc::new(fetcher));
        self
    }

    /// The shortest time between two fetches of an issuer's keys (default 30 s): an
    /// unknown `kid` refetches at most this often.
    pub fn jwks_refresh_interval(mut self, interval: Duration) -> Self {
        self.refresh.min_interval = interval;
        self
    }

    /// How long past its expiry a key set keeps serving while its issuer cannot be
    /// reached (default 1 h).
    pub fn jwks_max_stale(mut self, grace: Duration) -> Self {
        self.refresh.max_stale = grace;
        self
    }

    /// The validator.
    pub fn build(self) -> Result<JwtValidator, ConfigError> {
        if split_resource(&self.audience).is_none() {
            return Err(ConfigError::Resource {
                value: self.audience,
            });
        }
        if self.issuers.is_empty() {
            return Err(ConfigError::NoIssuer);
        }
        if self.algorithms.is_empty() {
            return Err(ConfigError::NoAlgorithm);
        }
        let fetcher = self
            .fetcher
            .unwrap_or_else(|| Arc::new(HyperFetcher::new()));
        let mut issuers = Vec::with_capacity(self.issuers.len());
        for (issuer, jwks) in self.issuers {
            let source = issuer_source(issuer.clone(), jwks)?;
            issuers.push((
                issuer,
                JwksCache::new(source, fetcher.clone(), self.refresh),
            ));
        }
        Ok(JwtValidator {
            inner: Arc::new(Inner {
                audience: self.audience,
                issuers,
                algorithms: self.algorithms,
                leeway: self.leeway,
                typed: self.typed,
            }),
        })
    }
}

/// Where `issuer`'s keys come from, after checking both identifiers.
pub(crate) fn issuer_source(
    issuer: String,
    jwks: Option<String>,
) -> Result<JwksSource, ConfigError> {
    if split_resource(&issuer).is_none() {
        return Err(ConfigError::Issuer { value: issuer });
    }
    match jwks {
        None => Ok(JwksSource::Discover(issuer)),
        Some(uri) if is_http_url(&uri) => Ok(JwksSource::Uri(uri)),
        Some(uri) => Err(ConfigError::Url { value: uri }),
    }
}
