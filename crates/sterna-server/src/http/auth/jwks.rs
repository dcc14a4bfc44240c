//! An issuer's signing keys (JWKS), cached with rotation.
//!
//! * Cached for the document's `Cache-Control: max-age`, clamped to [5 min, 24 h]
//!   (15 min without one).
//! * An unknown `kid` (or an expired set) triggers a refresh, single-flight (concurrent
//!   misses wait for the same fetch) and at most once per `min_refresh_interval` (30 s by
//!   default), so a flood of random `kid`s costs the issuer at most one fetch per interval.
//! * When a fetch fails the previous set keeps serving for `max_stale` past its expiry.

use super::alg::{KeyFamily, SigningAlg};
use super::discovery::{discover, get};
use super::error::{AuthError, DocumentProblem, TokenRejection, Unavailable};
use super::fetch::HttpFetch;
use bytes::Bytes;
use http::header::CACHE_CONTROL;
use http::{HeaderMap, Response, StatusCode};
use jsonwebtoken::DecodingKey;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

const TTL_DEFAULT: Duration = Duration::from_secs(15 * 60);
const TTL_MIN: Duration = Duration::from_secs(5 * 60);
const TTL_MAX: Duration = Duration::from_secs(24 * 60 * 60);

/// Where the keys are published.
#[derive(Debug, Clone)]
pub(crate) enum JwksSource {
    /// A known `jwks_uri`.
    Uri(String),
    /// The `jwks_uri` of this issuer's metadata, discovered on first use.
    Discover(String),
}

/// How often keys may be refetched, and how long a stale set may serve.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RefreshPolicy {
    pub(crate) min_interval: Duration,
    pub(crate) max_stale: Duration,
}

impl Default for RefreshPolicy {
    fn default() -> Self {
        Self {
            min_interval: Duration::from_secs(30),
            max_stale: Duration::from_secs(60 * 60),
        }
    }
}

/// One usable verification key.
struct Key {
    kid: Option<String>,
    alg: Option<KeyAlgorithm>,
    family: KeyFamily,
    decoding: DecodingKey,
}

impl Key {
    fn fits(&self, alg: SigningAlg) -> bool {
        self.family == alg.family() && self.alg.is_none_or(|a| a == KeyAlgorithm::from(alg.jwt()))
    }
}

/// A fetched set.
struct Snapshot {
    keys: Vec<Key>,
    expires: Instant,
    generation: u64,
}

impl Snapshot {
    /// The key for `kid` (or the only key fitting `alg` when the token names none).
    fn find(&self, kid: Option<&str>, alg: SigningAlg) -> Option<DecodingKey> {
        let mut fitting = self.keys.iter().filter(|k| k.fits(alg));
        let key = match kid {
            Some(kid) => fitting.find(|k| k.kid.as_deref() == Some(kid)),
            None => fitting.next().filter(|_| fitting.next().is_none()),
        };
        key.map(|k| k.decoding.clone())
    }
}

#[derive(Default)]
struct RefreshState {
    last_attempt: Option<Instant>,
    uri: Option<String>,
    generation: u64,
}

/// The keys of one issuer.
pub(crate) struct JwksCache {
    source: JwksSource,
    fetcher: Arc<dyn HttpFetch>,
    policy: RefreshPolicy,
    current: RwLock<Option<Arc<Snapshot>>>,
    refresh: tokio::sync::Mutex<RefreshState>,
}

impl std::fmt::Debug for JwksCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwksCache")
            .field("source", &self.source)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl JwksCache {
    pub(crate) fn new(
        source: JwksSource,
        fetcher: Arc<dyn HttpFetch>,
        policy: RefreshPolicy,
    ) -> Self {
        Self {
            source,
            fetcher,
            policy,
            current: RwLock::new(None),
            refresh: tokio::sync::Mutex::new(RefreshState::default()),
        }
    }

    fn snapshot(&self) -> Option<Arc<Snapshot>> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The key verifying a token signed with `alg` under `kid`.
    pub(crate) async fn key(
        &self,
        kid: Option<&str>,
        alg: SigningAlg,
    ) -> Result<DecodingKey, AuthError> {
        let seen = self.snapshot();
        if let Some(s) = &seen
            && Instant::now() < s.expires
            && let Some(k) = s.find(kid, alg)
        {
            return Ok(k);
        }
        let usable = self.refresh(seen.map(|s| s.generation)).await?;
        usable
            .find(kid, alg)
            .ok_or(AuthError::InvalidToken(TokenRejection::UnknownKey))
    }

    /// A set to look in after a miss: one refreshed by another request meanwhile, a new
    /// one if the rate limit allows a fetch, else the current one (if not too stale).
    async fn refresh(&self, seen: Option<u64>) -> Result<Arc<Snapshot>, Unavailable> {
        let mut state = self.refresh.lock().await;
        if let Some(now) = self.snapshot().filter(|s| Some(s.generation) != seen) {
            return Ok(now);
        }
        let allowed = state
            .last_attempt
            .is_none_or(|at| at.elapsed() >= self.policy.min_interval);
        if !allowed {
            return self.usable_or(Unavailable::Backoff);
        }
        state.last_attempt = Some(Instant::now());
        match self.fetch(&mut state).await {
            Ok(fresh) => {
                let fresh = Arc::new(fresh);
                *self.current.write().unwrap_or_else(|p| p.into_inner()) = Some(fresh.clone());
                Ok(fresh)
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not refresh the issuer's keys");
                self.usable_or(e)
            }
        }
    }

    fn usable_or(&self, e: Unavailable) -> Result<Arc<Snapshot>, Unavailable> {
        match self.snapshot() {
            Some(s) if Instant::now() < s.expires + self.policy.max_stale => Ok(s),
            _ => Err(e),
        }
    }

    async fn fetch(&self, state: &mut RefreshState) -> Result<Snapshot, Unavailable> {
        let uri = match (&self.source, &state.uri) {
            (JwksSource::Uri(u), _) | (JwksSource::Discover(_), Some(u)) => u.clone(),
            (JwksSource::Discover(issuer), None) => {
                let meta = discover(self.fetcher.as_ref(), issuer).await?;
                let uri = meta.jwks_uri.ok_or_else(|| Unavailable::Document {
                    url: issuer.clone(),
                    problem: DocumentProblem::Missing("jwks_uri"),
                })?;
                state.uri = Some(uri.clone());
                uri
            }
        };
        let response = get(self.fetcher.as_ref(), &uri).await?;
        state.generation += 1;
        parse(&uri, &response, state.generation)
    }
}

/// The usable signature keys of a JWKS answer.
fn parse(url: &str, response: &Response<Bytes>, generation: u64) -> Result<Snapshot, Unavailable> {
    if response.status() != StatusCode::OK {
        let status = response.status();
        return Err(Unavailable::Status {
            url: url.to_owned(),
            status,
        });
    }
    let problem = |problem| Unavailable::Document {
        url: url.to_owned(),
        problem,
    };
    #[derive(serde::Deserialize)]
    struct Set {
        keys: Vec<serde_json::Value>,
    }
    let set: Set =
        serde_json::from_slice(response.body()).map_err(|_| problem(DocumentProblem::NotJson))?;
    let keys: Vec<Key> = set.keys.into_iter().filter_map(key).collect();
    if keys.is_empty() {
        return Err(problem(DocumentProblem::NoUsableKeys));
    }
    Ok(Snapshot {
        keys,
        expires: Instant::now() + ttl(response.headers()),
        generation,
    })
}

/// A verification key, or `None` for keys that cannot verify a signature here:
/// encryption keys, symmetric keys, unknown types and curves.
fn key(value: serde_json::Value) -> Option<Key> {
    let jwk: Jwk = serde_json::from_value(value).ok()?;
    if jwk.common.public_key_use == Some(PublicKeyUse::Encryption) {
        return None;
    }
    let family = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => KeyFamily::Rsa,
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => KeyFamily::P256,
            EllipticCurve::P384 => KeyFamily::P384,
            _ => return None,
        },
        AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => {
            KeyFamily::Ed25519
        }
        _ => return None,
    };
    Some(Key {
        decoding: DecodingKey::from_jwk(&jwk).ok()?,
        kid: jwk.common.key_id,
        alg: jwk.common.key_algorithm,
        family,
    })
}

/// `max-age` clamped to [5 min, 24 h]; 15 min without one.
fn ttl(headers: &HeaderMap) -> Duration {
    headers
        .get(CACHE_CONTROL)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.split(',')
                .find_map(|d| d.trim().strip_prefix("max-age=")?.parse::<u64>().ok())
        })
        .map_or(TTL_DEFAULT, |s| {
            Duration::from_secs(s).clamp(TTL_MIN, TTL_MAX)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn ttl_follows_max_age_within_bounds() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(CACHE_CONTROL, HeaderValue::from_str(v).unwrap());
            ttl(&h)
        };
        assert_eq!(ttl(&HeaderMap::new()), TTL_DEFAULT);
        assert_eq!(with("public, max-age=3600"), Duration::from_secs(3600));
        assert_eq!(with("max-age=1"), TTL_MIN);
        assert_eq!(with("max-age=999999999"), TTL_MAX);
    }

    #[test]
    fn only_signature_keys_of_known_families_are_kept() {
        let oct = serde_json::json!({"kty": "oct", "k": "c2VjcmV0", "kid": "h"});
        assert!(
            key(oct).is_none(),
            "symmetric keys never verify access tokens"
        );
        let enc = serde_json::json!({"kty": "EC", "crv": "P-256", "use": "enc",
            "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"});
        assert!(key(enc).is_none());
        let sig = serde_json::json!({"kty": "EC", "crv": "P-256", "kid": "k",
            "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"});
        let k = key(sig).unwrap();
        assert!(
            k.fits(SigningAlg::Es256) && !k.fits(SigningAlg::Es384) && !k.fits(SigningAlg::Rs256)
        );
    }
}
