//! Why a request was not authenticated, by category: the request itself, the token, its
//! DPoP proof, or something the validator depends on (an upstream, the proof cache).

use super::fetch::FetchError;
use super::proof_cache::ProofCacheError;
use http::StatusCode;
use std::fmt;

/// Why credentials were refused, or could not be judged.
#[derive(Debug)]
#[non_exhaustive]
pub enum AuthError {
    /// The `Authorization` header is unusable (400 with `error="invalid_request"`).
    InvalidRequest(RequestProblem),
    /// The token is wrong, expired, revoked or not meant for this resource (401 with
    /// `error="invalid_token"`).
    InvalidToken(TokenRejection),
    /// The validator could not decide, because something it depends on failed (the
    /// issuer's keys or its introspection endpoint): 503.
    Unavailable(Unavailable),
    /// The DPoP proof (RFC 9449) is missing or wrong (401 with `DPoP
    /// error="invalid_dpop_proof"`), or lacks the nonce the server asks for (401 with
    /// `error="use_dpop_nonce"` and a `DPoP-Nonce` header).
    InvalidProof(ProofRejection),
    /// The proof cache refused or failed: the caller used up its share of proofs (429),
    /// or the cache is full or unreachable (503).
    ProofCache(ProofCacheError),
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidRequest(p) => write!(f, "invalid request: {p}"),
            Self::InvalidToken(r) => write!(f, "invalid token: {r}"),
            Self::Unavailable(u) => write!(f, "authentication unavailable: {u}"),
            Self::InvalidProof(p) => write!(f, "invalid DPoP proof: {p}"),
            Self::ProofCache(e) => write!(f, "DPoP proof cache: {e}"),
        }
    }
}

impl std::error::Error for AuthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Unavailable(u) => Some(u),
            Self::ProofCache(e) => Some(e),
            _ => None,
        }
    }
}

impl From<TokenRejection> for AuthError {
    fn from(r: TokenRejection) -> Self {
        Self::InvalidToken(r)
    }
}

impl From<ProofRejection> for AuthError {
    fn from(r: ProofRejection) -> Self {
        Self::InvalidProof(r)
    }
}

impl From<Unavailable> for AuthError {
    fn from(u: Unavailable) -> Self {
        Self::Unavailable(u)
    }
}

/// What is wrong with the `Authorization` header (RFC 6750 `invalid_request`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestProblem {
    /// More than one `Authorization` header.
    SeveralCredentials,
}

impl fmt::Display for RequestProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::SeveralCredentials => "more than one Authorization header",
        })
    }
}

/// Why a token was refused. The text is safe to send back in `error_description`: it
/// never repeats the token or its claims.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenRejection {
    /// Not a bearer token of the expected shape (scheme, characters, JWT structure,
    /// JSON, base64).
    Malformed,
    /// No such token (a fixed token map, or an introspection answer `active: false`).
    Unknown,
    /// The signing algorithm is not on the allow-list (`none`, HMAC, …), or does not fit
    /// the key.
    Algorithm,
    /// The JWT `typ` is not `at+jwt` (RFC 9068), e.g. an ID token.
    Type,
    /// A critical header extension the validator does not understand.
    CriticalHeader,
    /// No key of the issuer matches the token's `kid` (after a refresh of its JWKS, when
    /// one was allowed).
    UnknownKey,
    /// The signature does not verify.
    Signature,
    /// The issuer is not one this resource trusts.
    Issuer,
    /// The token is not meant for this resource (`aud`).
    Audience,
    /// Expired (`exp`).
    Expired,
    /// Not valid yet (`nbf`).
    NotYetValid,
    /// Issued in the future (`iat`), beyond the allowed clock skew.
    IssuedInFuture,
    /// A required claim is missing.
    MissingClaim(&'static str),
    /// A claim has the wrong type.
    BadClaim(&'static str),
    /// Presented with a scheme this resource does not accept (`Bearer` where DPoP is
    /// required, `DPoP` where it is not supported).
    Scheme,
    /// A DPoP-bound token (`cnf.jkt`) presented as a bearer token (RFC 9449 §7.2).
    BoundToKey,
    /// Presented with the `DPoP` scheme, but not bound to a key.
    NotBound,
    /// The DPoP proof is signed with another key than the one the token is bound to.
    KeyMismatch,
}

impl fmt::Display for TokenRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed => f.write_str("malformed token"),
            Self::Unknown => f.write_str("unknown or inactive token"),
            Self::Algorithm => f.write_str("signing algorithm not allowed"),
            Self::Type => f.write_str("not an access token (typ)"),
            Self::CriticalHeader => f.write_str("unsupported critical header"),
            Self::UnknownKey => f.write_str("unknown signing key"),
            Self::Signature => f.write_str("bad signature"),
            Self::Issuer => f.write_str("untrusted issuer"),
            Self::Audience => f.write_str("token not issued for this resource"),
            Self::Expired => f.write_str("token expired"),
            Self::NotYetValid => f.write_str("token not valid yet"),
            Self::IssuedInFuture => f.write_str("token issued in the future"),
            Self::MissingClaim(c) => write!(f, "missing claim {c}"),
            Self::BadClaim(c) => write!(f, "malformed claim {c}"),
            Self::Scheme => f.write_str("authorization scheme not accepted here"),
            Self::BoundToKey => f.write_str("DPoP-bound token presented as a bearer token"),
            Self::NotBound => f.write_str("token not bound to a DPoP key"),
            Self::KeyMismatch => f.write_str("proof key does not match the token's binding"),
        }
    }
}

/// Why a DPoP proof (RFC 9449 §4.3) was refused. The text is safe to send back in
/// `error_description`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProofRejection {
    /// No `DPoP` header.
    Missing,
    /// More than one `DPoP` header.
    Several,
    /// Not a compact JWS with a JSON header and claims.
    Malformed,
    /// The header's `typ` is not `dpop+jwt`.
    Type,
    /// The signing algorithm is not on the allow-list (`none`, HMAC, …), or does not fit
    /// the key.
    Algorithm,
    /// No usable public key in the header's `jwk`.
    Key,
    /// The header's `jwk` holds a private key.
    PrivateKey,
    /// The signature does not verify with the header's key.
    Signature,
    /// A required claim is missing.
    MissingClaim(&'static str),
    /// A claim has the wrong type or size.
    BadClaim(&'static str),
    /// `htm` is not this request's method.
    Method,
    /// `htu` is not this resource's URL.
    Url,
    /// `iat` is outside the accepted window.
    IssuedAt,
    /// `ath` is not the hash of the access token presented with it.
    TokenHash,
    /// The proof (its `jti`) was used before.
    Replayed,
    /// The server asks for a proof with its current nonce (`use_dpop_nonce`).
    NonceRequired,
}

impl fmt::Display for ProofRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing => f.write_str("no DPoP proof"),
            Self::Several => f.write_str("more than one DPoP header"),
            Self::Malformed => f.write_str("malformed proof"),
            Self::Type => f.write_str("not a DPoP proof (typ)"),
            Self::Algorithm => f.write_str("signing algorithm not allowed"),
            Self::Key => f.write_str("no usable public key (jwk)"),
            Self::PrivateKey => f.write_str("the jwk holds a private key"),
            Self::Signature => f.write_str("bad signature"),
            Self::MissingClaim(c) => write!(f, "missing claim {c}"),
            Self::BadClaim(c) => write!(f, "malformed claim {c}"),
            Self::Method => f.write_str("proof for another method (htm)"),
            Self::Url => f.write_str("proof for another URL (htu)"),
            Self::IssuedAt => f.write_str("proof too old or from the future (iat)"),
            Self::TokenHash => f.write_str("proof for another access token (ath)"),
            Self::Replayed => f.write_str("proof already used (jti)"),
            Self::NonceRequired => f.write_str("a proof with the server's nonce is required"),
        }
    }
}

/// Why a validator could not decide: an upstream it depends on failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Unavailable {
    /// Fetching a document failed (connection, time, size, URL policy).
    Fetch {
        /// What was fetched.
        url: String,
        /// How it failed.
        source: FetchError,
    },
    /// The upstream answered with an unexpected status.
    Status {
        /// What was fetched.
        url: String,
        /// The status it answered.
        status: StatusCode,
    },
    /// The upstream's document is unusable.
    Document {
        /// What was fetched.
        url: String,
        /// What is wrong with it.
        problem: DocumentProblem,
    },
    /// An earlier attempt failed moments ago; the next one waits (rate limit).
    Backoff,
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fetch { url, source } => write!(f, "fetching {url} failed: {source}"),
            Self::Status { url, status } => write!(f, "{url} answered {status}"),
            Self::Document { url, problem } => write!(f, "{url}: {problem}"),
            Self::Backoff => f.write_str("upstream failed recently; not retrying yet"),
        }
    }
}

impl std::error::Error for Unavailable {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Fetch { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What is wrong with an upstream document (JWKS, metadata, introspection answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DocumentProblem {
    /// Not a JSON object of the expected shape.
    NotJson,
    /// Authorization-server metadata whose `issuer` differs from the issuer it was
    /// fetched for (RFC 8414 §3.3).
    IssuerMismatch,
    /// A required member is missing.
    Missing(&'static str),
    /// A JWKS without a single usable signature key.
    NoUsableKeys,
}

impl fmt::Display for DocumentProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotJson => f.write_str("not the expected JSON document"),
            Self::IssuerMismatch => f.write_str("metadata for another issuer"),
            Self::Missing(m) => write!(f, "missing {m}"),
            Self::NoUsableKeys => f.write_str("no usable signature key"),
        }
    }
}

/// A validator that cannot be built as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The resource identifier is not an absolute `http(s)` URI without query or fragment.
    Resource {
        /// The value given.
        value: String,
    },
    /// An issuer identifier is not an absolute `http(s)` URL without query or fragment.
    Issuer {
        /// The value given.
        value: String,
    },
    /// A URL (JWKS, introspection endpoint) is not an absolute `http(s)` URL.
    Url {
        /// The value given.
        value: String,
    },
    /// No issuer was configured.
    NoIssuer,
    /// The algorithm allow-list is empty.
    NoAlgorithm,
    /// Introspection needs an endpoint, or an issuer to discover it from.
    NoEndpoint,
    /// A DPoP proof window of zero, or of more than an hour.
    ProofWindow,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Resource { value } => write!(
                f,
                "resource {value:?} is not an absolute http(s) URI without query or fragment"
            ),
            Self::Issuer { value } => write!(
                f,
                "issuer {value:?} is not an absolute http(s) URL without query or fragment"
            ),
            Self::Url { value } => write!(f, "{value:?} is not an absolute http(s) URL"),
            Self::NoIssuer => f.write_str("no issuer configured"),
            Self::NoAlgorithm => f.write_str("no signing algorithm allowed"),
            Self::NoEndpoint => {
                f.write_str("no introspection endpoint (nor issuer to discover it)")
            }
            Self::ProofWindow => f.write_str("the DPoP proof window must be 1 s to 1 h"),
        }
    }
}

impl std::error::Error for ConfigError {}
