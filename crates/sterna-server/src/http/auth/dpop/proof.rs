//! One DPoP proof checked as RFC 9449 §4.3 asks (`typ`, an allowed asymmetric `alg`, a
//! public `jwk`, the signature, `htm`, `htu`, `iat`, `ath`, `jti`), with `jsonwebtoken`
//! verifying the JWS. The nonce and the replay cache are the caller's.

use super::super::alg::{KeyFamily, SigningAlg};
use super::super::error::ProofRejection;
use super::url::normalize;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, ThumbprintHash};
use jsonwebtoken::{DecodingKey, Validation};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Proofs longer than this are refused unread.
const MAX_PROOF: usize = 8 * 1024;
/// The longest `jti` accepted.
const MAX_JTI: usize = 256;
/// JWK members that only a private (or symmetric) key has.
const PRIVATE_MEMBERS: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// What a proof must match.
#[derive(Debug)]
pub(crate) struct Expected<'a> {
    /// The request's method.
    pub(crate) method: &'a str,
    /// The resource's URL, normalized.
    pub(crate) url: &'a str,
    /// The access token presented with the proof.
    pub(crate) access_token: &'a str,
    /// The accepted algorithms.
    pub(crate) algorithms: &'a [SigningAlg],
    /// How far `iat` may be from now, either way (seconds).
    pub(crate) window: u64,
    /// Now (Unix seconds).
    pub(crate) now: u64,
}

/// A proof that passed every check but the nonce and the replay cache.
#[derive(Debug)]
pub(crate) struct Proof {
    /// The RFC 7638 thumbprint (SHA-256) of its key.
    pub(crate) jkt: String,
    pub(crate) jti: String,
    pub(crate) iat: u64,
    pub(crate) nonce: Option<String>,
}

/// Checks `proof` against `expected`.
pub(crate) fn check(proof: &str, expected: &Expected<'_>) -> Result<Proof, ProofRejection> {
    if proof.len() > MAX_PROOF {
        return Err(ProofRejection::Malformed);
    }
    let alg = screen_header(proof, expected.algorithms)?;
    let header = jsonwebtoken::decode_header(proof).map_err(|_| ProofRejection::Malformed)?;
    let jwk = header.jwk.ok_or(ProofRejection::Key)?;
    if key_family(&jwk) != Some(alg.family()) {
        return Err(ProofRejection::Algorithm);
    }
    let key = DecodingKey::from_jwk(&jwk).map_err(|_| ProofRejection::Key)?;
    let mut validation = Validation::new(alg.jwt());
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_aud = false;
    let claims = jsonwebtoken::decode::<Map<String, Value>>(proof, &key, &validation)
        .map_err(|e| {
            use jsonwebtoken::errors::ErrorKind as K;
            match e.kind() {
                K::InvalidSignature => ProofRejection::Signature,
                K::InvalidEcdsaKey | K::InvalidRsaKey(_) | K::InvalidEddsaKey => {
                    ProofRejection::Key
                }
                K::InvalidKeyFormat => ProofRejection::Key,
                _ => ProofRejection::Malformed,
            }
        })?
        .claims;
    let jkt = jwk
        .thumbprint(ThumbprintHash::SHA256)
        .map_err(|_| ProofRejection::Key)?;
    let (jti, iat) = check_claims(&claims, expected)?;
    Ok(Proof {
        jkt,
        jti,
        iat,
        nonce: match claims.get("nonce") {
            None => None,
            Some(Value::String(n)) => Some(n.clone()),
            Some(_) => return Err(ProofRejection::BadClaim("nonce")),
        },
    })
}

/// The header, read before any key is trusted: `typ` must be `dpop+jwt`, `alg` on the
/// allow-list, and `jwk` a public key. (`jsonwebtoken`'s `Jwk` drops the members it does
/// not model, `d` among them, so a private key can only be seen in the JSON itself.)
fn screen_header(proof: &str, algorithms: &[SigningAlg]) -> Result<SigningAlg, ProofRejection> {
    let first = proof.split('.').next().unwrap_or("");
    let header: Map<String, Value> = URL_SAFE_NO_PAD
        .decode(first)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or(ProofRejection::Malformed)?;
    let typ = header.get("typ").and_then(Value::as_str).unwrap_or("");
    if !typ.eq_ignore_ascii_case("dpop+jwt") {
        return Err(ProofRejection::Type);
    }
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .and_then(SigningAlg::from_name)
        .filter(|a| algorithms.contains(a))
        .ok_or(ProofRejection::Algorithm)?;
    match header.get("jwk") {
        Some(Value::Object(jwk)) if PRIVATE_MEMBERS.iter().any(|m| jwk.contains_key(*m)) => {
            Err(ProofRejection::PrivateKey)
        }
        Some(Value::Object(_)) => Ok(alg),
        _ => Err(ProofRejection::Key),
    }
}

/// The family of a public JWK (`None`: not a signature key this server verifies).
fn key_family(jwk: &Jwk) -> Option<KeyFamily> {
    match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Some(KeyFamily::Rsa),
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => Some(KeyFamily::P256),
            EllipticCurve::P384 => Some(KeyFamily::P384),
            _ => None,
        },
        AlgorithmParameters::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => {
            Some(KeyFamily::Ed25519)
        }
        _ => None,
    }
}

fn text<'a>(claims: &'a Map<String, Value>, name: &'static str) -> Result<&'a str, ProofRejection> {
    match claims.get(name) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(ProofRejection::BadClaim(name)),
        None => Err(ProofRejection::MissingClaim(name)),
    }
}

/// `jti`, `htm`, `htu`, `iat` and `ath`; the `jti` and the `iat`.
fn check_claims(
    claims: &Map<String, Value>,
    expected: &Expected<'_>,
) -> Result<(String, u64), ProofRejection> {
    let jti = text(claims, "jti")?;
    if jti.is_empty() || jti.len() > MAX_JTI {
        return Err(ProofRejection::BadClaim("jti"));
    }
    if text(claims, "htm")? != expected.method {
        return Err(ProofRejection::Method);
    }
    if normalize(text(claims, "htu")?).as_deref() != Some(expected.url) {
        return Err(ProofRejection::Url);
    }
    let iat = match claims.get("iat") {
        Some(v) => v.as_u64().ok_or(ProofRejection::BadClaim("iat"))?,
        None => return Err(ProofRejection::MissingClaim("iat")),
    };
    if iat.abs_diff(expected.now) > expected.window {
        return Err(ProofRejection::IssuedAt);
    }
    let ath = URL_SAFE_NO_PAD.encode(Sha256::digest(expected.access_token.as_bytes()));
    if text(claims, "ath")? != ath {
        return Err(ProofRejection::TokenHash);
    }
    Ok((jti.to_owned(), iat))
}
