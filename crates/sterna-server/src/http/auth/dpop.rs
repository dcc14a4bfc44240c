//! DPoP at the resource server (RFC 9449 §7): access tokens bound to a client's key are
//! accepted only with `Authorization: DPoP <token>` and a fresh proof signed by that key,
//! made for this request (method and URL), this token (`ath`), now (`iat`), and used once
//! (`jti`, remembered in a [`ProofReplayCache`]).

mod nonce;
mod proof;
mod url;

pub use nonce::DpopNonces;

use super::alg::SigningAlg;
use super::error::{AuthError, ConfigError, ProofRejection, TokenRejection};
use super::proof_cache::{MemoryProofCache, ProofReplayCache, ProofUse};
use http::{HeaderMap, Method};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Seconds a proof is remembered past its window, for replicas whose clocks differ a bit.
const CLOCK_SLACK: u64 = 5;

/// DPoP (RFC 9449) at the resource server, given to
/// [`AuthLayer::dpop`](super::AuthLayer::dpop): which schemes it accepts and how proofs
/// are checked.
///
/// * [`Dpop::required`]: only DPoP-bound tokens, each request with a fresh proof
///   (a bearer token is answered `401` with a `DPoP` challenge).
/// * [`Dpop::allowed`]: bearer tokens and DPoP-bound tokens.
/// * No `Dpop` on the layer: bearer tokens only.
///
/// Whatever the choice, a token bound to a key (`cnf.jkt` in a JWT, or in an
/// introspection answer) is never accepted as a bearer token (RFC 9449 §7.2): a thief
/// holding the token but not the key gets `401`.
///
/// A proof must be a JWS with `typ: dpop+jwt`, an algorithm of the allow-list (asymmetric
/// only), its public key in `jwk`; `htm` the request's method; `htu` this resource's
/// URL (query and fragment ignored, compared after RFC 3986 normalization); `iat` within
/// the [`proof window`](DpopBuilder::proof_window) of now (default 60 s, either way);
/// `ath` the hash of the access token; its key's thumbprint the token's `cnf.jkt`; and
/// its `jti` not seen before within the window (per principal, in the
/// [`replay cache`](DpopBuilder::replay_cache)). With [`nonces`](DpopBuilder::nonces),
/// it must also carry a recent server nonce.
///
/// `htu` is compared with the URL given here: the resource's canonical URL, as clients
/// use it (behind a proxy, the external URL), never one rebuilt from the `Host` header.
///
/// ```
/// # fn run() -> Result<(), sterna_server::http::auth::ConfigError> {
/// use sterna_server::http::auth::{AuthLayer, Dpop, JwtValidator, ResourceMetadata};
/// let resource = "https://mcp.example.com/mcp";
/// let issuer = "https://auth.example.com";
/// let layer = AuthLayer::new(JwtValidator::builder(resource).issuer(issuer).build()?)
///     .resource_metadata(ResourceMetadata::new(resource, issuer)?)
///     .dpop(Dpop::required(resource).build()?);
/// # let _ = layer; Ok(()) }
/// ```
#[derive(Clone)]
pub struct Dpop {
    required: bool,
    url: String,
    algorithms: Vec<SigningAlg>,
    window: u64,
    cache: Arc<dyn ProofReplayCache>,
    nonces: Option<DpopNonces>,
}

impl fmt::Debug for Dpop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dpop")
            .field("required", &self.required)
            .field("url", &self.url)
            .field("algorithms", &self.algorithms)
            .field("window_secs", &self.window)
            .field("nonces", &self.nonces.is_some())
            .finish_non_exhaustive()
    }
}

/// Configures a [`Dpop`].
pub struct DpopBuilder {
    required: bool,
    resource: String,
    algorithms: Vec<SigningAlg>,
    window: Duration,
    cache: Option<Arc<dyn ProofReplayCache>>,
    nonces: Option<DpopNonces>,
}

impl fmt::Debug for DpopBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DpopBuilder")
            .field("required", &self.required)
            .field("resource", &self.resource)
            .field("algorithms", &self.algorithms)
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl Dpop {
    /// Only DPoP-bound tokens, for the resource at `resource` (its canonical URL, as
    /// clients use it: the `htu` of their proofs).
    pub fn required(resource: impl Into<String>) -> DpopBuilder {
        DpopBuilder::new(true, resource.into())
    }

    /// Bearer tokens and DPoP-bound tokens, for the resource at `resource`.
    pub fn allowed(resource: impl Into<String>) -> DpopBuilder {
        DpopBuilder::new(false, resource.into())
    }

    /// Whether bearer tokens are refused.
    pub fn is_required(&self) -> bool {
        self.required
    }

    /// The accepted proof algorithms, by JOSE name (challenges' `algs`, metadata's
    /// `dpop_signing_alg_values_supported`).
    pub fn algorithm_names(&self) -> Vec<&'static str> {
        self.algorithms.iter().map(|a| a.name()).collect()
    }

    /// How long a proof's owner must wait for its share of the replay cache to free up.
    pub(crate) fn window_secs(&self) -> u64 {
        self.window
    }

    /// The nonce to hand out with an answer, when nonces are on.
    pub(crate) fn nonce(&self) -> Option<String> {
        self.nonces.as_ref().map(DpopNonces::current)
    }

    /// Checks the `DPoP` proof of a request presenting `token`, which is bound to the
    /// key whose thumbprint is `bound`, for `owner` (its principal).
    pub(crate) async fn verify(
        &self,
        method: &Method,
        headers: &HeaderMap,
        token: &str,
        owner: &str,
        bound: &str,
    ) -> Result<(), AuthError> {
        let text = one_proof(headers)?;
        let expected = proof::Expected {
            method: method.as_str(),
            url: &self.url,
            access_token: token,
            algorithms: &self.algorithms,
            window: self.window,
            now: crate::state::unix_now(),
        };
        let proof = proof::check(text, &expected)?;
        if proof.jkt != bound {
            return Err(TokenRejection::KeyMismatch.into());
        }
        if let Some(nonces) = &self.nonces
            && !proof.nonce.as_deref().is_some_and(|n| nonces.accepts(n))
        {
            return Err(ProofRejection::NonceRequired.into());
        }
        let until = proof.iat + self.window + CLOCK_SLACK;
        match self
            .cache
            .first_use(ProofUse::new(owner, &proof.jti, until))
            .await
        {
            Ok(true) => Ok(()),
            Ok(false) => Err(ProofRejection::Replayed.into()),
            Err(e) => Err(AuthError::ProofCache(e)),
        }
    }
}

/// The request's one `DPoP` header.
fn one_proof(headers: &HeaderMap) -> Result<&str, ProofRejection> {
    let mut values = headers.get_all("dpop").iter();
    let first = values.next().ok_or(ProofRejection::Missing)?;
    if values.next().is_some() {
        return Err(ProofRejection::Several);
    }
    first.to_str().map_err(|_| ProofRejection::Malformed)
}

impl DpopBuilder {
    fn new(required: bool, resource: String) -> Self {
        Self {
            required,
            resource,
            algorithms: SigningAlg::ALL.to_vec(),
            window: Duration::from_secs(60),
            cache: None,
            nonces: None,
        }
    }

    /// The accepted proof algorithms (default: all of [`SigningAlg::ALL`]; `none` and
    /// HMAC cannot be named).
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = SigningAlg>) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// How far a proof's `iat` may be from now, either way (default 60 s; 1 s to 1 h).
    /// Its `jti` is remembered that long after `iat`.
    pub fn proof_window(mut self, window: Duration) -> Self {
        self.window = window;
        self
    }

    /// Where used proofs are remembered (default: a [`MemoryProofCache`], for one
    /// replica; a fleet shares one, such as `sterna-redis`'s).
    pub fn replay_cache(mut self, cache: impl ProofReplayCache) -> Self {
        self.cache = Some(Arc::new(cache));
        self
    }

    /// Requires server-provided nonces in proofs (RFC 9449 §9).
    pub fn nonces(mut self, nonces: DpopNonces) -> Self {
        self.nonces = Some(nonces);
        self
    }

    /// The configuration.
    pub fn build(self) -> Result<Dpop, ConfigError> {
        let url = url::normalize(&self.resource)
            .filter(|_| !self.resource.contains(['?', '#']))
            .ok_or(ConfigError::Resource {
                value: self.resource,
            })?;
        if self.algorithms.is_empty() {
            return Err(ConfigError::NoAlgorithm);
        }
        let window = self.window.as_secs();
        if !(1..=3600).contains(&window) {
            return Err(ConfigError::ProofWindow);
        }
        Ok(Dpop {
            required: self.required,
            url,
            algorithms: self.algorithms,
            window,
            cache: self
                .cache
                .unwrap_or_else(|| Arc::new(MemoryProofCache::new())),
            nonces: self.nonces,
        })
    }
}
