//! A POST must accept JSON or SSE answers (406 otherwise). The inner service reads what
//! it accepts with [`Accepts::of`] (the usual header is one string comparison).

use super::{Checked, refuse};
use crate::metrics::Refusal;
use bytes::Bytes;
use futures_util::future::Either;
use http::header::ACCEPT;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use std::task::{Context, Poll};
use tower_layer::Layer;
use tower_service::Service;

/// The answer formats a request accepts (a missing `Accept` takes both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepts {
    /// `application/json`.
    pub json: bool,
    /// `text/event-stream`.
    pub sse: bool,
}

impl Accepts {
    /// Reads the `Accept` headers.
    pub fn of(headers: &HeaderMap) -> Self {
        let mut all = headers.get_all(ACCEPT).iter();
        if let (Some(only), None) = (all.next(), all.next())
            && only.as_bytes() == b"application/json, text/event-stream"
        {
            // What every client sends: no media-range parsing.
            return Self {
                json: true,
                sse: true,
            };
        }
        let mut any = false;
        let mut json = false;
        let mut sse = false;
        for value in headers.get_all(ACCEPT) {
            any = true;
            let Ok(v) = value.to_str() else { continue };
            for part in v.split(',') {
                let media = part.split(';').next().unwrap_or("").trim();
                let is = |m: &str| media.eq_ignore_ascii_case(m);
                if is("*/*") {
                    json = true;
                    sse = true;
                } else if is("application/json") || is("application/*") {
                    json = true;
                } else if is("text/event-stream") || is("text/*") {
                    sse = true;
                }
            }
        }
        if any {
            Self { json, sse }
        } else {
            Self {
                json: true,
                sse: true,
            }
        }
    }
}

/// Refuses POSTs that accept neither JSON nor SSE (406).
#[derive(Debug, Clone, Copy, Default)]
pub struct AcceptLayer;

impl<S> Layer<S> for AcceptLayer {
    type Service = AcceptService<S>;

    fn layer(&self, inner: S) -> AcceptService<S> {
        AcceptService { inner }
    }
}

/// The service of [`AcceptLayer`].
#[derive(Debug, Clone)]
pub struct AcceptService<S> {
    inner: S,
}

impl<S> AcceptService<S> {
    /// The service behind this layer.
    pub(crate) fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }
}

impl<S, B, R> Service<Request<B>> for AcceptService<S>
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
        let accepts = Accepts::of(req.headers());
        if req.method() == Method::POST && !accepts.json && !accepts.sse {
            return refuse(
                Refusal::Accept,
                StatusCode::NOT_ACCEPTABLE,
                "Accept must list application/json and text/event-stream",
            );
        }
        Either::Right(self.inner.call(req))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn accepts(h: &HeaderMap) -> (bool, bool) {
        let a = Accepts::of(h);
        (a.json, a.sse)
    }

    #[test]
    fn accept_header() {
        let mut h = HeaderMap::new();
        assert_eq!(accepts(&h), (true, true));
        h.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        assert_eq!(accepts(&h), (true, true));
        h.insert(ACCEPT, HeaderValue::from_static("Application/JSON;q=0.9"));
        assert_eq!(accepts(&h), (true, false));
        h.insert(ACCEPT, HeaderValue::from_static("text/*"));
        assert_eq!(accepts(&h), (false, true));
        h.insert(ACCEPT, HeaderValue::from_static("image/png"));
        assert_eq!(accepts(&h), (false, false));
    }
}
