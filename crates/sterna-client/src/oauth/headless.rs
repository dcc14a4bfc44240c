//! The headless authorization step: GET the authorization URL with redirects disabled and
//! read the redirect from `Location` (for tests and conformance runs, where the
//! authorization server decides without a user).

use super::error::{HttpFailure, UiError};
use super::fetch::Call;
use super::ui::{AuthorizationRequest, AuthorizationResponse, AuthorizationUi};
use super::urls;
use crate::transport::HttpClient;
use futures_util::future::BoxFuture;
use http::HeaderValue;
use http::header::{COOKIE, LOCATION, SET_COOKIE};
use sterna_net::TlsRoots;

/// Fetches the authorization URL itself and follows the authorization server's own
/// redirects (at most 10, carrying its cookies back to the same origin only) until one
/// points at the redirect URI, which is never fetched. Only for servers that authorize without a user.
#[derive(Debug, Clone)]
pub struct HeadlessRedirect {
    redirect_uri: String,
    roots: TlsRoots,
}

impl HeadlessRedirect {
    /// Redirects go to `redirect_uri` (nothing needs to listen there).
    pub fn new(redirect_uri: impl Into<String>) -> Self {
        Self {
            redirect_uri: redirect_uri.into(),
            roots: TlsRoots::default(),
        }
    }

    /// The certificates trusted for an `https://` authorization endpoint.
    pub fn tls_roots(mut self, roots: TlsRoots) -> Self {
        self.roots = roots;
        self
    }

    async fn run(&self, request: &AuthorizationRequest) -> Result<AuthorizationResponse, UiError> {
        let client = HttpClient::new(&self.roots, false).map_err(|e| {
            UiError::Http(HttpFailure::Transport {
                url: request.url.clone(),
                source: e,
            })
        })?;
        let mut url = request.url.clone();
        let mut cookies: Vec<String> = Vec::new();
        let mut status = 0;
        for _ in 0..10 {
            let mut call = Call::get(&url);
            if let Ok(v) = HeaderValue::from_str(&cookies.join("; "))
                && !cookies.is_empty()
            {
                call.header(COOKIE, v);
            }
            let answer = call.send(&client).await.map_err(UiError::Http)?;
            status = answer.status.as_u16();
            for c in answer.headers.get_all(SET_COOKIE) {
                if let Some(pair) = c.to_str().ok().and_then(|c| c.split(';').next()) {
                    let name = pair.split('=').next().unwrap_or("");
                    cookies.retain(|x| x.split('=').next() != Some(name));
                    cookies.push(pair.trim().to_owned());
                }
            }
            let Some(next) = answer
                .headers
                .get(LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| urls::resolve(&url, l))
            else {
                break;
            };
            if urls::is_redirect_to(&next, &request.redirect_uri) {
                return Ok(AuthorizationResponse::from_redirect(&next));
            }
            if urls::origin(&next) != urls::origin(&url) {
                cookies.clear(); // Cookies stay with the server that set them.
            }
            url = next;
        }
        Err(UiError::NoRedirect { status })
    }
}

impl AuthorizationUi for HeadlessRedirect {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, UiError>> {
        Box::pin(self.run(request))
    }
}
