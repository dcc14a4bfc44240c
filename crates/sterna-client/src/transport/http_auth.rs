//! Where the HTTP transport hands a request to OAuth (when configured): the token is
//! attached, and a `401`/`403` challenge runs the authorization flow before a retry. A
//! busy server's answer (`429`/`503` with `Retry-After`) is waited out here too.

use super::busy;
use super::http::HttpTransport;
use crate::error::TransportError;
use bytes::Bytes;
use http::Request;
use http::request::Parts;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;

impl HttpTransport {
    /// Sends one request, authorized if OAuth is configured, again after the wait a busy
    /// server asks for (at most [`busy::MAX_AGAIN`] times).
    pub(crate) async fn exchange(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<http::Response<Incoming>, TransportError> {
        let (parts, body) = request.into_parts();
        let body = body
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let mut again = 0;
        loop {
            let response = self.exchange_once(&parts, &body).await?;
            match busy::wait_of(&response) {
                Some(wait) if again < busy::MAX_AGAIN => {
                    again += 1;
                    tracing::debug!(status = %response.status(), ?wait, again, "server busy; sending again");
                    drop(response);
                    tokio::time::sleep(wait).await;
                }
                _ => return Ok(response),
            }
        }
    }

    /// Sends the request once, authorized if OAuth is configured.
    async fn exchange_once(
        &self,
        parts: &Parts,
        body: &Bytes,
    ) -> Result<http::Response<Incoming>, TransportError> {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            return oauth.send(&self.client, parts, body).await;
        }
        self.client.send(rebuild(parts, body)).await
    }
}

/// The request of `parts` and `body`, for each attempt (its extensions aside: the client
/// sets none).
pub(crate) fn rebuild(parts: &Parts, body: &Bytes) -> Request<Full<Bytes>> {
    let mut request = Request::new(Full::new(body.clone()));
    *request.method_mut() = parts.method.clone();
    *request.uri_mut() = parts.uri.clone();
    *request.version_mut() = parts.version;
    *request.headers_mut() = parts.headers.clone();
    request
}
