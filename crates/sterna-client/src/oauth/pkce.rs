//! PKCE (RFC 7636, S256 only) and the random values of a flow (`state`, `jti`).

use super::secret::Secret;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// `n` random bytes, base64url without padding.
pub(crate) fn random_string(n: usize) -> String {
    let mut buf = vec![0u8; n];
    crate::util::fill_random(&mut buf);
    URL_SAFE_NO_PAD.encode(buf)
}

/// base64url(SHA-256(`input`)), no padding: a PKCE challenge, a DPoP `ath`.
pub(crate) fn sha256_b64(input: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(input.as_bytes()))
}

/// A PKCE verifier and its S256 challenge.
#[derive(Debug)]
pub(crate) struct Pkce {
    pub(crate) verifier: Secret,
    pub(crate) challenge: String,
}

impl Pkce {
    /// A fresh pair: 32 random bytes give a 43-character verifier.
    pub(crate) fn new() -> Self {
        let verifier = random_string(32);
        let challenge = sha256_b64(&verifier);
        Self {
            verifier: Secret::new(verifier),
            challenge,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        assert_eq!(
            sha256_b64("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_are_valid_and_fresh() {
        let a = Pkce::new();
        let b = Pkce::new();
        let v = a.verifier.expose();
        assert_eq!(v.len(), 43);
        assert!(
            v.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
        assert_ne!(v, b.verifier.expose());
        assert_eq!(a.challenge, sha256_b64(v));
    }
}
