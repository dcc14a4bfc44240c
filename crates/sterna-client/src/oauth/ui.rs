//! The user-facing step of the authorization code grant: show the authorization URL,
//! bring back the redirect.

use super::error::UiError;
use super::secret::Secret;
use super::urls;
use futures_util::future::BoxFuture;

/// An authorization request to put in front of the user.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AuthorizationRequest {
    /// The URL to open (the authorization endpoint with every parameter).
    pub url: String,
    /// Where the authorization server will redirect.
    pub redirect_uri: String,
    /// The `state` the redirect must echo (also in `url`). A UI that receives
    /// redirects itself ([`LoopbackRedirect`](super::LoopbackRedirect)) ignores those
    /// carrying another `state`.
    pub state: String,
}

/// What came back on the redirect URI.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorizationResponse {
    /// The authorization code.
    pub code: Option<Secret>,
    /// The `state` echoed.
    pub state: Option<String>,
    /// The issuer (RFC 9207).
    pub iss: Option<String>,
    /// An error code (`access_denied` …).
    pub error: Option<String>,
    /// The error's description.
    pub error_description: Option<String>,
}

impl AuthorizationResponse {
    /// Reads the parameters of the URL the authorization server redirected to.
    pub fn from_redirect(url: &str) -> Self {
        let mut r = Self::default();
        for (k, v) in urls::query_pairs(url) {
            match k.as_str() {
                "code" => r.code = Some(Secret::new(v)),
                "state" => r.state = Some(v),
                "iss" => r.iss = Some(v),
                "error" => r.error = Some(v),
                "error_description" => r.error_description = Some(v),
                _ => {}
            }
        }
        r
    }
}

/// Puts an authorization request in front of the user (a browser, a device, a test's
/// headless fetch) and returns the redirect.
pub trait AuthorizationUi: Send + Sync + 'static {
    /// The redirect URI this UI receives on; it is registered with the authorization
    /// server and must not change between calls.
    fn redirect_uri(&self) -> String;

    /// Shows `request` and waits for the redirect.
    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, UiError>>;
}
