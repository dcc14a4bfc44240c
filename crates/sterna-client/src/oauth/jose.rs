//! Signed JWTs the client makes (with `jsonwebtoken`; no hand-rolled JOSE): DPoP proofs
//! (RFC 9449) and client assertions for `private_key_jwt` (RFC 7523).

use super::error::OAuthError;
use super::pkce::{random_string, sha256_b64};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;
use std::fmt;

/// A DPoP key pair (ES256, P-256): tokens are bound to it, and every request carries a
/// fresh proof signed with it.
#[derive(Clone)]
pub struct DpopKey {
    key: EncodingKey,
    jwk: Jwk,
}

impl fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DpopKey(ES256, ***)")
    }
}

#[derive(Serialize)]
struct ProofClaims<'a> {
    jti: String,
    htm: &'a str,
    htu: &'a str,
    iat: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ath: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nonce: Option<&'a str>,
}

impl DpopKey {
    /// A fresh key pair from the operating system's randomness.
    pub fn generate() -> Result<Self, OAuthError> {
        use p256::elliptic_curve::Generate;
        use p256::pkcs8::EncodePrivateKey;
        let secret = p256::SecretKey::generate();
        let der = secret
            .to_pkcs8_der()
            .map_err(|_| jsonwebtoken::errors::ErrorKind::InvalidEcdsaKey)?;
        Self::from_der(der.as_bytes())
    }

    /// A key pair from a PKCS#8 PEM (P-256).
    pub fn from_pkcs8_pem(pem: &[u8]) -> Result<Self, OAuthError> {
        let key = EncodingKey::from_ec_pem(pem)?;
        let jwk = Jwk::from_encoding_key(&key, Algorithm::ES256)?;
        Ok(Self { key, jwk })
    }

    fn from_der(der: &[u8]) -> Result<Self, OAuthError> {
        let key = EncodingKey::from_ec_der(der);
        let jwk = Jwk::from_encoding_key(&key, Algorithm::ES256)?;
        Ok(Self { key, jwk })
    }

    /// A proof for one request: `htm` = `method`, `htu` = `url` without query or
    /// fragment, `ath` = the hash of `access_token` when one is presented, and the
    /// server's `nonce` if it gave one.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, OAuthError> {
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".into());
        header.jwk = Some(self.jwk.clone());
        let claims = ProofClaims {
            jti: random_string(16),
            htm: method,
            htu: super::urls::without_query(url),
            iat: crate::util::unix_now(),
            ath: access_token.map(sha256_b64),
            nonce,
        };
        Ok(jsonwebtoken::encode(&header, &claims, &self.key)?)
    }
}

/// A private key the client authenticates with (`private_key_jwt`, RFC 7523 §2.2).
#[derive(Clone)]
pub struct ClientKey {
    key: EncodingKey,
    alg: Algorithm,
    kid: Option<String>,
}

impl fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientKey")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
struct AssertionClaims<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
    jti: String,
}

impl ClientKey {
    /// A PKCS#8 PEM private key for `alg` (`ES256`, `ES384`, `RS256`, `PS256`, `EdDSA`
    /// …).
    pub fn from_pem(pem: &[u8], alg: &str) -> Result<Self, OAuthError> {
        let alg: Algorithm = alg
            .parse()
            .map_err(|_| jsonwebtoken::errors::ErrorKind::InvalidAlgorithmName)?;
        let key = match alg {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem)?,
            Algorithm::EdDSA => EncodingKey::from_ed_pem(pem)?,
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_pem(pem)?,
            _ => return Err(jsonwebtoken::errors::ErrorKind::InvalidAlgorithm.into()),
        };
        Ok(Self {
            key,
            alg,
            kid: None,
        })
    }

    /// The key ID to put in the assertion's header.
    pub fn kid(mut self, kid: impl Into<String>) -> Self {
        self.kid = Some(kid.into());
        self
    }

    /// A client assertion: `iss` = `sub` = `client_id`, `aud` = the authorization
    /// server's issuer, valid for 60 s.
    pub(crate) fn assertion(&self, client_id: &str, audience: &str) -> Result<String, OAuthError> {
        let mut header = Header::new(self.alg);
        header.kid = self.kid.clone();
        let iat = crate::util::unix_now();
        let claims = AssertionClaims {
            iss: client_id,
            sub: client_id,
            aud: audience,
            iat,
            exp: iat + 60,
            jti: random_string(16),
        };
        Ok(jsonwebtoken::encode(&header, &claims, &self.key)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};

    #[test]
    fn dpop_proofs_verify_with_their_embedded_key() {
        let key = DpopKey::generate().unwrap();
        let proof = key
            .proof(
                "POST",
                "http://localhost:1/mcp?x=1",
                Some("tok"),
                Some("n1"),
            )
            .unwrap();
        let header = jsonwebtoken::decode_header(&proof).unwrap();
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        let jwk = header.jwk.expect("jwk in the header");
        let public = serde_json::to_value(&jwk).unwrap();
        assert!(public.get("d").is_none(), "{public}");
        let mut v = Validation::new(Algorithm::ES256);
        v.required_spec_claims.clear();
        v.validate_exp = false;
        let data = jsonwebtoken::decode::<serde_json::Value>(
            &proof,
            &DecodingKey::from_jwk(&jwk).unwrap(),
            &v,
        )
        .unwrap();
        assert_eq!(data.claims["htu"], "http://localhost:1/mcp");
        assert_eq!(data.claims["htm"], "POST");
        assert_eq!(data.claims["nonce"], "n1");
        assert_eq!(data.claims["ath"], sha256_b64("tok"));
        let second = key
            .proof("POST", "http://localhost:1/mcp", None, None)
            .unwrap();
        let jti = |p: &str| {
            jsonwebtoken::dangerous::insecure_decode::<serde_json::Value>(p)
                .unwrap()
                .claims["jti"]
                .clone()
        };
        assert_ne!(jti(&proof), jti(&second));
    }
}
