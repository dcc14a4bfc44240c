//! The HTTP exchanges of OAuth (metadata, registration, token requests, the headless
//! authorization GET), over the transport's client: bounded in time and size, never
//! following redirects.

use super::error::HttpFailure;
use crate::transport::HttpClient;
use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(30);
const MAX_BODY: usize = 1024 * 1024;

/// An answer, read whole.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Answer {
    /// The body as JSON, when it is an object.
    pub(crate) fn json(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// A request under construction.
#[derive(Debug)]
pub(crate) struct Call {
    method: Method,
    url: String,
    headers: HeaderMap,
    body: Bytes,
}

impl Call {
    pub(crate) fn get(url: &str) -> Self {
        Self {
            method: Method::GET,
            url: url.to_owned(),
            headers: HeaderMap::new(),
            body: Bytes::new(),
        }
    }

    /// A form POST (`application/x-www-form-urlencoded`).
    pub(crate) fn form(url: &str, fields: &[(&str, &str)]) -> Self {
        let mut ser = form_urlencoded::Serializer::new(String::new());
        for (k, v) in fields {
            ser.append_pair(k, v);
        }
        let mut call = Self {
            method: Method::POST,
            url: url.to_owned(),
            headers: HeaderMap::new(),
            body: Bytes::from(ser.finish()),
        };
        call.header(
            CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        call
    }

    /// A JSON POST.
    pub(crate) fn json(url: &str, body: &serde_json::Value) -> Self {
        let mut call = Self {
            method: Method::POST,
            url: url.to_owned(),
            headers: HeaderMap::new(),
            body: Bytes::from(serde_json::to_vec(body).expect("JSON values serialize")),
        };
        call.header(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        call
    }

    pub(crate) fn header(&mut self, name: http::header::HeaderName, value: HeaderValue) {
        self.headers.insert(name, value);
    }

    /// Sends it and reads the answer (at most 1 MiB, within 30 s).
    pub(crate) async fn send(self, client: &HttpClient) -> Result<Answer, HttpFailure> {
        let url = self.url.clone();
        let bad = || HttpFailure::BadUrl { url: url.clone() };
        let mut builder = Request::builder()
            .method(self.method)
            .uri(self.url.as_str())
            .header(ACCEPT, "application/json");
        if let Some(h) = builder.headers_mut() {
            h.extend(self.headers);
        }
        let request = builder.body(Full::new(self.body)).map_err(|_| bad())?;
        let exchange = async {
            let response = client
                .send(request)
                .await
                .map_err(|source| HttpFailure::Transport {
                    url: url.clone(),
                    source,
                })?;
            let (parts, body) = response.into_parts();
            let body = http_body_util::Limited::new(body, MAX_BODY)
                .collect()
                .await
                .map_err(|_| HttpFailure::Transport {
                    url: url.clone(),
                    source: crate::TransportError::TooLarge { limit: MAX_BODY },
                })?
                .to_bytes();
            Ok(Answer {
                status: parts.status,
                headers: parts.headers,
                body,
            })
        };
        tokio::time::timeout(TIMEOUT, exchange)
            .await
            .map_err(|_| HttpFailure::Timeout { url: url.clone() })?
    }
}
