//! Token acquisition as an MCP client does it, driven by hand for now: the 401
//! challenge's `resource_metadata` → protected-resource metadata → authorization-server
//! metadata (RFC 8414) → authorization code flow with PKCE (S256), `resource` (RFC 8707)
//! and `iss` (RFC 9207) checked → token request.
//!
//! Once sterna's OAuth client lands, the test's `client_for` seam hands the sterna client
//! an OAuth-enabled transport with a headless redirect handler (the [`Browser`] loop
//! below, logging in as the user) instead of calling [`CodeFlow::token`].

use super::browser::{Browser, form_encode, query};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use sha2::{Digest, Sha256};

pub const CLIENT_ID: &str = "mcp-test-client";
pub const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";

/// What discovery found.
#[derive(Debug, Clone)]
pub struct CodeFlow {
    pub resource: String,
    pub issuer: String,
    pub scopes_supported: Vec<String>,
    authorization_endpoint: String,
    token_endpoint: String,
}

/// A token response.
#[derive(Debug)]
pub struct Token {
    pub access_token: String,
    pub scope: String,
}

/// 32 bytes from the operating system's randomness (a fresh P-256 secret is exactly that).
fn random() -> String {
    use p256::elliptic_curve::Generate;
    URL_SAFE_NO_PAD.encode(p256::SecretKey::generate().to_bytes())
}

/// The value of `param` in a `WWW-Authenticate` challenge (quoted-string, no escapes).
pub fn challenge_param(challenge: &str, param: &str) -> Option<String> {
    let start = challenge.find(&format!("{param}=\""))? + param.len() + 2;
    let len = challenge[start..].find('"')?;
    Some(challenge[start..start + len].to_owned())
}

impl CodeFlow {
    /// Discovery from the challenge an unauthenticated request got.
    pub async fn discover(challenge: &str) -> Self {
        let mut browser = Browser::new();
        let prm_url = challenge_param(challenge, "resource_metadata").expect("resource_metadata");
        let prm = json(&mut browser, &prm_url).await;
        let resource = prm["resource"].as_str().unwrap().to_owned();
        let issuer = prm["authorization_servers"][0].as_str().unwrap().to_owned();
        let meta = json(
            &mut browser,
            &format!("{issuer}/.well-known/oauth-authorization-server"),
        )
        .await;
        assert_eq!(
            meta["issuer"],
            issuer.as_str(),
            "RFC 8414 §3.3: the same string"
        );
        assert!(
            meta["code_challenge_methods_supported"]
                .as_array()
                .unwrap()
                .contains(&"S256".into())
        );
        assert_eq!(meta["authorization_response_iss_parameter_supported"], true);
        Self {
            resource,
            issuer,
            scopes_supported: prm["scopes_supported"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
            authorization_endpoint: meta["authorization_endpoint"].as_str().unwrap().to_owned(),
            token_endpoint: meta["token_endpoint"].as_str().unwrap().to_owned(),
        }
    }

    /// A token for `user` with `scope`: a fresh login and consent (a new browser, so no
    /// session carries over), code with PKCE, then the token request.
    pub async fn token(&self, user: &str, scope: &str) -> Token {
        let mut browser = Browser::new();
        let (verifier, state) = (random(), random());
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let params = [
            ("response_type", "code"),
            ("client_id", CLIENT_ID),
            ("redirect_uri", REDIRECT_URI),
            ("scope", scope),
            ("resource", &self.resource),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
            ("state", &state),
            ("login_hint", user),
        ];
        let q: Vec<String> = params
            .iter()
            .map(|(k, v)| format!("{k}={}", form_encode(v)))
            .collect();
        let url = format!("{}?{}", self.authorization_endpoint, q.join("&"));
        let code = self.authorize(&mut browser, url, &state).await;
        let (status, body) = browser
            .post_form(
                &self.token_endpoint,
                &[
                    ("grant_type", "authorization_code"),
                    ("code", &code),
                    ("redirect_uri", REDIRECT_URI),
                    ("code_verifier", &verifier),
                    ("client_id", CLIENT_ID),
                    ("resource", &self.resource),
                ],
            )
            .await;
        assert_eq!(status, 200, "token request: {body}");
        assert_eq!(body["token_type"], "Bearer");
        Token {
            access_token: body["access_token"].as_str().unwrap().to_owned(),
            scope: body["scope"].as_str().unwrap_or("").to_owned(),
        }
    }

    /// Follows the provider's redirects (login, consent) until it redirects to the
    /// client: the code, after checking `state` and `iss`.
    async fn authorize(&self, browser: &mut Browser, mut url: String, state: &str) -> String {
        for _ in 0..12 {
            let hop = browser.get(&url).await;
            let next = hop.location.unwrap_or_else(|| {
                panic!(
                    "{url} answered {} without a redirect: {}",
                    hop.status, hop.body
                )
            });
            if next.starts_with(REDIRECT_URI) {
                let params = query(&next);
                let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
                assert_eq!(
                    get("iss").as_deref(),
                    Some(self.issuer.as_str()),
                    "RFC 9207 iss"
                );
                assert_eq!(get("state").as_deref(), Some(state));
                return get("code").unwrap_or_else(|| panic!("no code: {next}"));
            }
            url = next;
        }
        panic!("no redirect to the client after 12 hops");
    }
}

async fn json(browser: &mut Browser, url: &str) -> Value {
    let hop = browser.get(url).await;
    assert_eq!(hop.status, 200, "{url}: {}", hop.body);
    serde_json::from_str(&hop.body).unwrap()
}
