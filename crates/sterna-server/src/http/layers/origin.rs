//! DNS-rebinding protection: the `Origin` (and, for local servers, the `Host`) must be
//! allowed, or the request gets 403. A local server refuses `Origin: null` too.

use super::{Checked, refuse};
use crate::http::config::OriginPolicy;
use crate::metrics::Refusal;
use bytes::Bytes;
use futures_util::future::Either;
use http::header::{HOST, ORIGIN};
use http::{HeaderMap, Request, Response, StatusCode};
use std::sync::Arc;
use std::task::{Context, Poll};
use tower_layer::Layer;
use tower_service::Service;

/// Refuses requests from origins the policy does not allow (403).
#[derive(Debug, Clone)]
pub struct OriginLayer {
    policy: Arc<OriginPolicy>,
}

impl OriginLayer {
    /// A layer enforcing `policy`.
    pub fn new(policy: OriginPolicy) -> Self {
        Self {
            policy: Arc::new(policy),
        }
    }
}

impl<S> Layer<S> for OriginLayer {
    type Service = OriginService<S>;

    fn layer(&self, inner: S) -> OriginService<S> {
        OriginService {
            inner,
            policy: self.policy.clone(),
        }
    }
}

/// The service of [`OriginLayer`].
#[derive(Debug, Clone)]
pub struct OriginService<S> {
    inner: S,
    policy: Arc<OriginPolicy>,
}

impl<S> OriginService<S> {
    /// The service behind this layer.
    pub(crate) fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }
}

impl<S, B, R> Service<Request<B>> for OriginService<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    R: From<Bytes>,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = Checked<S::Future, R, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        // HTTP/2 carries the host as `:authority` (in the URI), with no `Host` header.
        if allowed(&self.policy, req.headers(), req.uri().host()) {
            Either::Right(self.inner.call(req))
        } else {
            refuse(
                Refusal::Origin,
                StatusCode::FORBIDDEN,
                "Forbidden: origin not allowed",
            )
        }
    }
}

fn allowed(policy: &OriginPolicy, headers: &HeaderMap, authority: Option<&str>) -> bool {
    let origin = headers.get(ORIGIN).map(|o| o.to_str().unwrap_or("\u{0}"));
    match policy {
        OriginPolicy::DangerousAny => true,
        OriginPolicy::Allow(list) => origin.is_none_or(|o| list.iter().any(|a| a == o)),
        OriginPolicy::Localhost => {
            // Every host named (`Host`, and the URI's authority: HTTP/2's `:authority`,
            // or an absolute-form HTTP/1.1 target) must be local.
            let host_ok = headers
                .get(HOST)
                .and_then(|h| h.to_str().ok())
                .is_none_or(is_local_host)
                && authority.is_none_or(is_local_host);
            // `Origin: null` (sandboxed frames, `file:` pages, cross-origin redirects)
            // names no host, so it is not local: refused.
            let origin_ok = origin.is_none_or(|o| origin_host(o).is_some_and(is_local_host));
            host_ok && origin_ok
        }
    }
}

fn is_local_host(host: &str) -> bool {
    let h = host.trim_ascii().as_bytes();
    let name = if h.first() == Some(&b'[') {
        // `[::1]` or `[::1]:port`: the brackets stay part of the name.
        h.iter()
            .position(|&b| b == b']')
            .map_or(h, |end| &h[..=end])
    } else {
        h.iter()
            .rposition(|&b| b == b':')
            .map_or(h, |colon| &h[..colon])
    };
    [&b"localhost"[..], b"127.0.0.1", b"[::1]"]
        .iter()
        .any(|l| name.eq_ignore_ascii_case(l))
}

fn origin_host(origin: &str) -> Option<&str> {
    let rest = origin.split_once("://")?.1;
    Some(rest.split('/').next().unwrap_or(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_hosts() {
        for h in [
            "localhost",
            "LOCALHOST:3000",
            "127.0.0.1",
            "127.0.0.1:80",
            "[::1]",
            "[::1]:8080",
            " localhost:3000\t",
        ] {
            assert!(is_local_host(h), "{h}");
        }
        for h in [
            "example.com",
            "localhost.evil.com",
            "127.0.0.2",
            "[::1",
            "[::2]:80",
            "",
            "127.0.0.1:80:90",
            "evil.com:localhost",
        ] {
            assert!(!is_local_host(h), "{h}");
        }
    }
}
