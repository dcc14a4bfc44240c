//! Where the HTTP transport hands a request to OAuth (when configured): the token is
//! attached, and a `401`/`403` challenge runs the authorization flow before a retry.

use super::http::HttpTransport;
use crate::error::TransportError;
use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use hyper::body::Incoming;

impl HttpTransport {
    /// Sends one request, authorized if OAuth is configured.
    pub(crate) async fn exchange(
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
