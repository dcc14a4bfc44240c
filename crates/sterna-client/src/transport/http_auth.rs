//! Where the HTTP transport hands a request to OAuth (when configured): the token is
//! attached, and a `401`/`403` challenge runs the authorization flow before a retry. A
//! busy server's answer (`429`/`503` with `Retry-After`) is waited out here too.

use super::busy;
use super::http::HttpTransport;
use crate::error::TransportError;
use bytes::Bytes;
use http::Request;
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
            let response = self.exchange_once(busy::copy(&parts, &body)).await?;
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

    /// Sends one request once, authorized if OAuth is configured.
    async fn exchange_once(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<http::Response<Incoming>, TransportError> {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            return oauth.send(&self.client, request).await;
        }
        self.client.send(request).await
    }
}
