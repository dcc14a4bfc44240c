//! Streamable HTTP: one POST per request over pooled keep-alive connections; the answer
//! is a JSON document or an SSE stream (notifications, then the response; comment lines
//! ignored).

use super::connect::HttpClient;
use super::sse::{Event, SseParser};
use super::{NotificationSink, Outgoing, Transport};
use crate::error::ConfigError;
use crate::error::TransportError;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, Request, Uri};
use http_body_util::{BodyExt, Full};
use sterna_types::header::encode as encode_header_value;
use sterna_types::jsonrpc::{Incoming, RawMessage, RequestId};

/// The Streamable HTTP client transport.
#[derive(Clone)]
pub struct HttpTransport {
    pub(super) client: HttpClient,
    pub(super) url: Uri,
    pub(super) extra: HeaderMap,
    pub(super) max_response: usize,
    #[cfg(feature = "oauth")]
    pub(super) oauth: Option<crate::oauth::OAuth>,
}

impl std::fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransport")
            .field("url", &self.url)
            .finish()
    }
}

impl HttpTransport {
    /// A transport to the endpoint at `url` (`http://` or, with the `tls` feature,
    /// `https://`), trusting the platform's root certificates. See
    /// [`builder`](Self::builder) for more settings.
    pub fn new(url: &str) -> Result<Self, TransportError> {
        Self::builder(url).build()
    }

    /// The largest answer accepted, in bytes (default 16 MiB): a JSON body, or everything
    /// an SSE stream carries for one request. Larger answers fail the request.
    pub fn max_response(mut self, bytes: usize) -> Self {
        self.max_response = bytes;
        self
    }

    /// Adds a header to every request (e.g. `Authorization`).
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, TransportError> {
        let bad = || {
            TransportError::Config(ConfigError::Header {
                name: name.to_owned(),
            })
        };
        let n = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
        let v = HeaderValue::from_str(value).map_err(|_| bad())?;
        self.extra.append(n, v);
        Ok(self)
    }

    async fn send(&self, req: Outgoing, sink: NotificationSink) -> Result<Vec<u8>, TransportError> {
        let mut builder = Request::post(self.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", &req.protocol_version)
            .header("mcp-method", &req.method);
        if let Some(name) = &req.name {
            builder = builder.header("mcp-name", encode_header_value(name).as_ref());
        }
        for (name, value) in &req.params {
            builder = builder.header(format!("mcp-param-{name}"), value.as_str());
        }
        super::tap::sent("http", &req.body);
        let mut request = builder
            .body(Full::new(Bytes::from(req.body)))
            .map_err(|e| TransportError::Connection(Box::new(e)))?;
        request.headers_mut().extend(self.extra.clone());
        let response = self.exchange(request).await?;
        let status = response.status();
        let sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        let body = response.into_body();
        let limit = self.max_response;
        if sse {
            read_sse(body, limit, &req.id, &sink).await
        } else {
            read_json(body, limit, status.as_u16()).await
        }
    }
}

/// What the 2025-11-25 session and the era probe share with this transport: the
/// endpoint, the added headers, the size limit, and the one place requests are sent.
impl HttpTransport {
    /// The endpoint.
    pub(crate) fn endpoint(&self) -> &Uri {
        &self.url
    }

    /// The largest answer accepted, in bytes.
    pub(crate) fn response_limit(&self) -> usize {
        self.max_response
    }

    /// A request to the endpoint with the headers added to every request.
    pub(crate) fn prepare(
        &self,
        method: http::Method,
        headers: &[(&str, &str)],
        body: Bytes,
    ) -> Result<Request<Full<Bytes>>, TransportError> {
        let mut builder = Request::builder().method(method).uri(self.url.clone());
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        if !body.is_empty() {
            super::tap::sent("http", &body);
        }
        let mut request = builder
            .body(Full::new(body))
            .map_err(|e| TransportError::Connection(Box::new(e)))?;
        request.headers_mut().extend(self.extra.clone());
        Ok(request)
    }
}

/// A JSON answer: at most `limit` bytes, and a JSON-RPC response (whatever the status:
/// errors come with 4xx).
async fn read_json(
    body: hyper::body::Incoming,
    limit: usize,
    status: u16,
) -> Result<Vec<u8>, TransportError> {
    let bytes = http_body_util::Limited::new(body, limit)
        .collect()
        .await
        .map_err(|e| {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                TransportError::TooLarge { limit }
            } else {
                TransportError::StreamBroken
            }
        })?
        .to_bytes();
    if matches!(
        RawMessage::parse(&bytes),
        Ok(Incoming::Result { .. } | Incoming::Error { .. })
    ) {
        super::tap::received("http", &bytes);
        return Ok(bytes.to_vec());
    }
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).into_owned();
    Err(TransportError::Http { status, body: text })
}

/// An SSE answer: notifications go to `sink` until the response to `id` arrives. What
/// the stream carries for this request, all events together, is at most `limit` bytes
/// (and so is each event): past that the request fails, whatever the server keeps sending.
async fn read_sse(
    mut body: hyper::body::Incoming,
    limit: usize,
    id: &RequestId,
    sink: &NotificationSink,
) -> Result<Vec<u8>, TransportError> {
    let mut parser = SseParser::new(limit);
    let mut received = 0usize;
    let mut events = Vec::new();
    loop {
        let frame = match body.frame().await {
            None | Some(Err(_)) => return Err(TransportError::StreamBroken),
            Some(Ok(f)) => f,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        received = received.saturating_add(data.len());
        if received > limit {
            return Err(TransportError::TooLarge { limit });
        }
        let pushed = parser.push(&data, &mut events);
        for event in events.drain(..) {
            if let Some(answer) = read_event(event, id, sink) {
                return Ok(answer);
            }
        }
        pushed.map_err(|e| TransportError::TooLarge { limit: e.limit })?;
    }
}

/// One event of a response stream: the response to `id` (returned), a notification (to
/// `sink`), or something to log and skip.
fn read_event(event: Event, id: &RequestId, sink: &NotificationSink) -> Option<Vec<u8>> {
    let Event::Data(message) = event else {
        tracing::warn!("skipping an event that is not UTF-8 on the response stream");
        return None;
    };
    super::tap::received("http", message.as_bytes());
    match RawMessage::parse(message.as_bytes()) {
        Ok(Incoming::Result { id: got, .. } | Incoming::Error { id: Some(got), .. })
            if got == *id =>
        {
            return Some(message.into_bytes());
        }
        Ok(Incoming::Notification { .. }) => sink(message.as_bytes()),
        Ok(Incoming::Request { method, .. }) => {
            tracing::warn!(%method, "ignoring a request on a response stream (2026-07-28 servers send none)");
        }
        Ok(_) => tracing::warn!("ignoring a response to another request on this stream"),
        Err(e) => tracing::warn!(error = %e.error, "unreadable event on the response stream"),
    }
    None
}

pub(super) fn config_url(url: &str, reason: String) -> TransportError {
    TransportError::Config(ConfigError::Url {
        url: url.to_owned(),
        reason,
    })
}

impl Transport for HttpTransport {
    fn request(
        &self,
        req: Outgoing,
        sink: NotificationSink,
    ) -> BoxFuture<'_, Result<Vec<u8>, TransportError>> {
        Box::pin(self.send(req, sink))
    }

    fn uses_headers(&self) -> bool {
        true
    }
}
