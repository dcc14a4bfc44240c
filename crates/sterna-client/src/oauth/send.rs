//! One MCP request through OAuth: the token attached (with a fresh DPoP proof when the
//! token is DPoP-bound), then, on a challenge, the flow and a bounded retry.

use super::builder::OAuth;
use super::challenge::{Challenge, parse_challenges};
use super::error::{GaveUp, OAuthError};
use crate::error::TransportError;
use crate::transport::HttpClient;
use bytes::Bytes;
use http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;

/// How often one request may go through each kind of retry.
#[derive(Debug, Default)]
struct Retries {
    unauthorized: u32,
    step_ups: u32,
    nonce: bool,
}

/// What to do after an answer.
enum Next {
    Retry,
    Done,
}

impl OAuth {
    /// Sends `request` authorized, running the flow on `401` and on
    /// `403 insufficient_scope` and retrying (bounded).
    pub(crate) async fn send(
        &self,
        client: &HttpClient,
        parts: &http::request::Parts,
        body: &Bytes,
    ) -> Result<Response<Incoming>, TransportError> {
        let mut retries = Retries::default();
        loop {
            let current = self.engine.current();
            let req = self.authorized(parts, body, current.as_ref())?;
            let response = client.send(req).await?;
            let url = parts.uri.to_string();
            self.engine.nonces.note(&url, response.headers());
            let seen = current.as_ref().map(|c| c.generation);
            match self
                .react(client, &url, &response, seen, &mut retries)
                .await
            {
                Ok(Next::Done) => return Ok(response),
                Ok(Next::Retry) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "authorization failed");
                    return Err(TransportError::Auth(Box::new(e)));
                }
            }
        }
    }

    /// The request with the token in use (and its DPoP proof).
    fn authorized(
        &self,
        parts: &http::request::Parts,
        body: &Bytes,
        current: Option<&super::engine::Current>,
    ) -> Result<Request<Full<Bytes>>, TransportError> {
        let mut req = crate::transport::rebuild(parts, body);
        if let Some(c) = current {
            let (authorization, proof) = self
                .engine
                .headers_for(c, parts.method.as_str(), &parts.uri.to_string())
                .map_err(|e| TransportError::Auth(Box::new(e)))?;
            set(req.headers_mut(), AUTHORIZATION, &authorization);
            if let Some(p) = proof {
                set(req.headers_mut(), http::HeaderName::from_static("dpop"), &p);
            }
        }
        Ok(req)
    }

    /// Runs the flow a challenge calls for, or lets the answer through.
    async fn react(
        &self,
        client: &HttpClient,
        url: &str,
        response: &Response<Incoming>,
        seen: Option<u64>,
        retries: &mut Retries,
    ) -> Result<Next, OAuthError> {
        let engine = &self.engine;
        let challenge = challenge(response.headers());
        let error = challenge.as_ref().and_then(Challenge::error);
        match response.status() {
            StatusCode::UNAUTHORIZED
                if error == Some("use_dpop_nonce") && seen.is_some() && !retries.nonce =>
            {
                retries.nonce = true;
                tracing::debug!("DPoP nonce required by the server: retrying");
                Ok(Next::Retry)
            }
            StatusCode::UNAUTHORIZED => {
                retries.unauthorized += 1;
                if retries.unauthorized > 2 {
                    return Err(GaveUp::StillUnauthorized.into());
                }
                tracing::debug!(status = 401, "authorization required");
                engine
                    .unauthorized(client, url, challenge.as_ref(), seen)
                    .await?;
                Ok(Next::Retry)
            }
            StatusCode::FORBIDDEN if error == Some("insufficient_scope") => {
                let c = challenge.expect("an error comes with its challenge");
                retries.step_ups += 1;
                if retries.step_ups > engine.max_step_ups {
                    return Err(GaveUp::InsufficientScope { scopes: c.scopes() }.into());
                }
                engine.insufficient_scope(client, url, &c, seen).await?;
                Ok(Next::Retry)
            }
            _ => Ok(Next::Done),
        }
    }
}

fn set(headers: &mut HeaderMap, name: http::HeaderName, value: &str) {
    if let Ok(mut v) = HeaderValue::from_str(value) {
        v.set_sensitive(true);
        headers.insert(name, v);
    }
}

/// The challenge to act on: `DPoP` or `Bearer` (the first of them), from every
/// `WWW-Authenticate` field.
fn challenge(headers: &HeaderMap) -> Option<Challenge> {
    let all: Vec<Challenge> = headers
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| match parse_challenges(v) {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!(error = %e, "unreadable WWW-Authenticate");
                None
            }
        })
        .flatten()
        .collect();
    all.into_iter().find(|c| c.is("DPoP") || c.is("Bearer"))
}
