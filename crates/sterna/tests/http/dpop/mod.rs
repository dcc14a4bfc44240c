//! DPoP at the resource server (RFC 9449): a token bound to a key (`cnf.jkt`) is accepted
//! only with `Authorization: DPoP` and a fresh proof signed by that key, made for this
//! request; sterna's own OAuth client completes MRTR flows against it in both eras.
//!
//! Helpers: client key pairs that sign proofs, and a protected server trusting the tiny
//! authorization server of `idp` with DPoP required (or allowed).

#[cfg(feature = "oauth")]
mod client;
mod introspected;
#[cfg(feature = "oauth")]
mod issuer;
mod refusals;
mod sessions;

use super::client::{Reply, Running, post_with, set, start_on};
use super::idp::{Idp, SigningKey, now};
use super::protected::{policy, test_server};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::net::SocketAddr;
use sterna::server::http::HttpConfig;
use sterna::server::http::auth::{AuthLayer, DpopBuilder, JwtValidator, ResourceMetadata};
use tokio::net::TcpListener;

/// A client's DPoP key pair (ES256).
pub struct ProofKey {
    encoding: EncodingKey,
    pub jwk: Jwk,
}

/// 32 random bytes, base64url (a fresh P-256 secret is exactly that).
pub fn random() -> String {
    use p256::elliptic_curve::Generate;
    URL_SAFE_NO_PAD.encode(p256::SecretKey::generate().to_bytes())
}

impl ProofKey {
    pub fn generate() -> Self {
        use p256::elliptic_curve::Generate;
        use p256::pkcs8::EncodePrivateKey;
        let der = p256::SecretKey::generate().to_pkcs8_der().unwrap();
        let encoding = EncodingKey::from_ec_der(der.as_bytes());
        let jwk = Jwk::from_encoding_key(&encoding, Algorithm::ES256).unwrap();
        Self { encoding, jwk }
    }

    /// The key's RFC 7638 thumbprint: what a bound token's `cnf.jkt` holds.
    pub fn jkt(&self) -> String {
        self.jwk.thumbprint(ThumbprintHash::SHA256).unwrap()
    }

    /// A proof with these claims (`typ: dpop+jwt`, ES256, the public key in `jwk`).
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_with(claims, |_| {})
    }

    /// The same, with the header adjusted first.
    pub fn sign_with(&self, claims: &Value, tweak: impl FnOnce(&mut Header)) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".into());
        header.jwk = Some(self.jwk.clone());
        tweak(&mut header);
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }

    /// A valid proof for `method` on `url` presenting `token`.
    pub fn proof(&self, method: &str, url: &str, token: &str) -> String {
        self.sign(&claims(method, url, token))
    }
}

/// base64url(SHA-256(token)): a proof's `ath`.
pub fn ath(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

/// The claims of a valid proof: a fresh `jti`, `iat` now.
pub fn claims(method: &str, url: &str, token: &str) -> Value {
    json!({"jti": random(), "htm": method, "htu": url, "iat": now(), "ath": ath(token)})
}

/// A protected server (the scope policy of `protected`) whose tokens come from `idp`.
pub struct Protected {
    pub idp: Idp,
    pub key: SigningKey,
    pub resource: String,
    pub s: Running,
}

impl Protected {
    /// A token for `sub` with `scope`, bound to `key` (`cnf.jkt`).
    pub fn bound_token(&self, sub: &str, scope: &str, key: &ProofKey) -> String {
        let mut claims = self.idp.claims(&self.resource, sub, scope);
        claims["cnf"] = json!({"jkt": key.jkt()});
        self.key.sign(&claims)
    }

    /// A token bound to no key.
    pub fn bearer_token(&self, sub: &str, scope: &str) -> String {
        self.key.sign(&self.idp.claims(&self.resource, sub, scope))
    }

    /// POSTs `body` with `Authorization: DPoP <token>` and `DPoP: <proof>`.
    pub async fn post_dpop(&self, body: &Value, token: &str, proof: &str) -> Reply {
        post_with(self.s.addr, body, |h| {
            set(h, "authorization", &format!("DPoP {token}"));
            set(h, "dpop", proof);
        })
        .await
    }

    pub fn addr(&self) -> SocketAddr {
        self.s.addr
    }
}

/// A server requiring or allowing DPoP as `dpop` says (given the resource URL).
pub async fn protected(dpop: impl FnOnce(String) -> DpopBuilder) -> Protected {
    let idp = Idp::start().await;
    let key = SigningKey::generate("k1");
    idp.publish(&[&key]);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resource = format!("http://{}/mcp", listener.local_addr().unwrap());
    let jwt = JwtValidator::builder(&resource)
        .issuer(idp.issuer())
        .build()
        .unwrap();
    let metadata = ResourceMetadata::new(&resource, idp.issuer())
        .unwrap()
        .scopes_supported(["mcp:read", "mcp:write"]);
    let auth = AuthLayer::new(jwt)
        .resource_metadata(metadata)
        .scopes(policy())
        .dpop(dpop(resource.clone()).build().unwrap());
    let s = start_on(listener, test_server(), HttpConfig::default(), Some(auth));
    Protected {
        idp,
        key,
        resource,
        s,
    }
}

/// Every `WWW-Authenticate` value of an answer.
pub fn challenges(r: &Reply) -> Vec<String> {
    r.headers
        .get_all("www-authenticate")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect()
}
