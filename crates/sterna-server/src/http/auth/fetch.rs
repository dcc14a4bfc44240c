//! "Fetch this URL": how validators reach the authorization server (JWKS, metadata,
//! introspection). [`HttpFetch`] is the seam; [`HyperFetcher`] the implementation over
//! hyper-util's client, HTTPS with any TLS connector plugged in.

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{Request, Response, Uri};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connect, HttpConnector};
use hyper_util::rt::TokioExecutor;
use std::fmt;
use std::time::Duration;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Sends one HTTP request and reads the whole answer.
///
/// Implementations never follow redirects, bound the time and the size of the answer,
/// and refuse URLs their policy does not allow (plain `http://` to anything but
/// loopback, unless told otherwise). Any status is an answer; the caller judges it.
///
/// Implement it over your own HTTP stack (reqwest, a client with a proxy, a mock); the
/// default is [`HyperFetcher`].
pub trait HttpFetch: Send + Sync + 'static {
    /// Sends `request` and returns the answer, body read whole.
    fn fetch(&self, request: Request<Bytes>) -> BoxFuture<'_, Result<Response<Bytes>, FetchError>>;
}

/// Why a fetch failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum FetchError {
    /// The URL is not allowed: not `http(s)`, plain `http` to a host other than
    /// loopback, or `https` through a fetcher without TLS.
    Refused {
        /// The URL.
        url: String,
    },
    /// Connecting or exchanging failed.
    Transport(BoxError),
    /// No complete answer in time.
    Timeout,
    /// The answer was larger than the limit.
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused { url } => write!(f, "{url} is not allowed by the fetch policy"),
            Self::Transport(e) => write!(f, "transport: {e}"),
            Self::Timeout => f.write_str("timed out"),
            Self::TooLarge { limit } => write!(f, "answer larger than {limit} bytes"),
        }
    }
}

impl std::error::Error for FetchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Transport(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

/// [`HttpFetch`] over hyper-util's pooled client.
///
/// [`new`](HyperFetcher::new) speaks plain HTTP only, and only to loopback hosts (tests,
/// a sidecar authorization server). For HTTPS use [`https`](HyperFetcher::https) (feature
/// `tls`: rustls, the platform's roots plus any you add), or hand
/// [`with_connector`](HyperFetcher::with_connector) a TLS connector of your own:
///
/// ```no_run
/// # #[cfg(feature = "tls")]
/// # fn main() -> Result<(), sterna_net::TlsError> {
/// use sterna_net::TlsRoots;
/// use sterna_server::http::auth::HyperFetcher;
/// let fetcher = HyperFetcher::https(&TlsRoots::new())?;
/// # let _ = fetcher; Ok(()) }
/// # #[cfg(not(feature = "tls"))]
/// # fn main() {}
/// ```
pub struct HyperFetcher<C = HttpConnector> {
    client: Client<C, Full<Bytes>>,
    tls: bool,
    any_plain_http: bool,
    timeout: Duration,
    max_body: usize,
}

impl<C> fmt::Debug for HyperFetcher<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HyperFetcher")
            .field("tls", &self.tls)
            .field("any_plain_http", &self.any_plain_http)
            .field("timeout", &self.timeout)
            .field("max_body", &self.max_body)
            .finish()
    }
}

impl Default for HyperFetcher {
    fn default() -> Self {
        Self::new()
    }
}

impl HyperFetcher {
    /// Plain HTTP to loopback hosts only; `https://` URLs are refused.
    pub fn new() -> Self {
        let mut fetcher = Self::with_connector(HttpConnector::new());
        fetcher.tls = false;
        fetcher
    }
}

impl<C> HyperFetcher<C>
where
    C: Connect + Clone + Send + Sync + 'static,
{
    /// Fetches through `connector`, which is trusted to speak TLS for `https://` URLs
    /// (plain `http://` stays limited to loopback hosts). 10 s and 1 MiB per answer.
    pub fn with_connector(connector: C) -> Self {
        Self {
            client: Client::builder(TokioExecutor::new()).build(connector),
            tls: true,
            any_plain_http: false,
            timeout: Duration::from_secs(10),
            max_body: 1024 * 1024,
        }
    }

    /// How long one exchange may take (default 10 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The largest answer accepted, in bytes (default 1 MiB).
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// Allows plain `http://` to any host. Tokens and keys then travel unprotected:
    /// only behind a network you trust.
    pub fn dangerous_allow_plain_http(mut self) -> Self {
        self.any_plain_http = true;
        self
    }

    fn allowed(&self, uri: &Uri) -> bool {
        match uri.scheme_str() {
            Some("https") => self.tls,
            Some("http") => self.any_plain_http || uri.host().is_some_and(is_loopback),
            _ => false,
        }
    }

    async fn exchange(&self, request: Request<Bytes>) -> Result<Response<Bytes>, FetchError> {
        let (parts, body) = request.into_parts();
        let request = Request::from_parts(parts, Full::new(body));
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| FetchError::Transport(Box::new(e)))?;
        let (parts, body) = response.into_parts();
        let body = Limited::new(body, self.max_body)
            .collect()
            .await
            .map_err(|e| {
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some()
                {
                    FetchError::TooLarge {
                        limit: self.max_body,
                    }
                } else {
                    FetchError::Transport(e)
                }
            })?
            .to_bytes();
        Ok(Response::from_parts(parts, body))
    }
}

impl<C> HttpFetch for HyperFetcher<C>
where
    C: Connect + Clone + Send + Sync + 'static,
{
    fn fetch(&self, request: Request<Bytes>) -> BoxFuture<'_, Result<Response<Bytes>, FetchError>> {
        Box::pin(async move {
            if !self.allowed(request.uri()) {
                let url = request.uri().to_string();
                return Err(FetchError::Refused { url });
            }
            tokio::time::timeout(self.timeout, self.exchange(request))
                .await
                .map_err(|_| FetchError::Timeout)?
        })
    }
}

/// `localhost`, `127.0.0.0/8` or `::1`.
pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(feature = "tls")]
impl HyperFetcher<sterna_net::Connector> {
    /// Fetches over HTTPS with rustls, trusting `roots` (the platform's certificates plus
    /// any added, or only the added ones); plain `http://` stays limited to loopback hosts.
    pub fn https(roots: &sterna_net::TlsRoots) -> Result<Self, sterna_net::TlsError> {
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        let connector = sterna_net::connector(http, roots)?;
        Ok(Self::with_connector(connector))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_to_loopback_and_https_only_with_tls() {
        let f = HyperFetcher::new();
        let ok = |u: &str| f.allowed(&u.parse().unwrap());
        assert!(ok("http://127.0.0.1:8080/jwks"));
        assert!(ok("http://localhost/jwks"));
        assert!(ok("http://[::1]:9/jwks"));
        assert!(!ok("http://example.com/jwks"));
        assert!(!ok("http://127.0.0.1.example.com/jwks"));
        assert!(!ok("https://example.com/jwks"), "no TLS in this fetcher");
        assert!(!ok("ftp://127.0.0.1/jwks"));
        let tls = HyperFetcher::with_connector(HttpConnector::new());
        assert!(tls.allowed(&"https://example.com/jwks".parse().unwrap()));
        assert!(!tls.allowed(&"http://example.com/jwks".parse().unwrap()));
    }
}
