//! Streamable HTTP: one POST per request over pooled keep-alive connections; the answer
//! is a JSON document or an SSE stream (notifications, then the response; comment lines
//! ignored).

use super::{NotificationSink, Outgoing, Transport};
use crate::client::error::ConfigError;
use crate::client::error::TransportError;
use crate::header_value::encode as encode_header_value;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use sterna_types::jsonrpc::{Incoming, RawMessage};

/// The Streamable HTTP client transport.
#[derive(Clone)]
pub struct HttpTransport {
    client: Client<HttpConnector, Full<Bytes>>,
    url: Uri,
    extra: HeaderMap,
    max_response: usize,
}

impl std::fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransport")
            .field("url", &self.url)
            .finish()
    }
}

impl HttpTransport {
    /// A transport to the endpoint at `url` (`http://host:port/path`). HTTPS needs a
    /// TLS-terminating proxy in front of this transport.
    pub fn new(url: &str) -> Result<Self, TransportError> {
        let url: Uri = url
            .parse()
            .map_err(|e: http::uri::InvalidUri| config_url(url, e.to_string()))?;
        if url.scheme_str() != Some("http") {
            return Err(config_url(
                &url.to_string(),
                "only http:// URLs are supported".into(),
            ));
        }
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(64)
            .build(connector);
        Ok(Self {
            client,
            url,
            extra: HeaderMap::new(),
            max_response: 16 * 1024 * 1024,
        })
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
        let mut request = builder
            .body(Full::new(Bytes::from(req.body)))
            .map_err(|e| TransportError::Connection(Box::new(e)))?;
        request.headers_mut().extend(self.extra.clone());
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| TransportError::Connection(Box::new(e)))?;
        let status = response.status();
        let sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        let mut body = response.into_body();
        let limit = self.max_response;
        if !sse {
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
            // A JSON-RPC answer is the answer, whatever the status (errors come with 4xx).
            if matches!(
                RawMessage::parse(&bytes),
                Ok(Incoming::Result { .. } | Incoming::Error { .. })
            ) {
                return Ok(bytes.to_vec());
            }
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).into_owned();
            return Err(TransportError::Http {
                status: status.as_u16(),
                body: text,
            });
        }
        let mut parser = SseParser::default();
        loop {
            let frame = match body.frame().await {
                None => return Err(TransportError::StreamBroken),
                Some(Err(_)) => return Err(TransportError::StreamBroken),
                Some(Ok(f)) => f,
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            for message in parser.push(&data) {
                match RawMessage::parse(message.as_bytes()) {
                    Ok(Incoming::Result { id, .. } | Incoming::Error { id: Some(id), .. })
                        if id == req.id =>
                    {
                        return Ok(message.into_bytes());
                    }
                    Ok(Incoming::Notification { .. }) => sink(message.as_bytes()),
                    Ok(Incoming::Request { method, .. }) => {
                        tracing::warn!(%method, "ignoring a request on a response stream (2026-07-28 servers send none)");
                    }
                    Ok(_) => {
                        tracing::warn!("ignoring a response to another request on this stream")
                    }
                    Err(e) => {
                        tracing::warn!(error = %e.error, "unreadable event on the response stream")
                    }
                }
            }
        }
    }
}

fn config_url(url: &str, reason: String) -> TransportError {
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

/// An incremental SSE parser: yields the `data` of each event; comments, `event:`, `id:`
/// and `retry:` lines are ignored.
#[derive(Default)]
struct SseParser {
    buf: String,
    data: String,
}

impl SseParser {
    fn push(&mut self, chunk: &[u8]) -> Vec<String> {
        self.buf.push_str(&String::from_utf8_lossy(chunk));
        let mut out = Vec::new();
        while let Some(nl) = self.buf.find('\n') {
            let line: String = self.buf.drain(..=nl).collect();
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() {
                    out.push(std::mem::take(&mut self.data));
                }
            } else if let Some(rest) = line.strip_prefix("data:") {
                if !self.data.is_empty() {
                    self.data.push('\n');
                }
                self.data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::SseParser;

    #[test]
    fn sse_parsing() {
        let mut p = SseParser::default();
        assert!(p.push(b": keep-alive\n\nevent: message\nda").is_empty());
        assert_eq!(p.push(b"ta: {\"a\":1}\n\n"), vec!["{\"a\":1}"]);
        assert_eq!(p.push(b"data: x\r\ndata: y\r\n\r\n"), vec!["x\ny"]);
    }

    /// Events of `stream` fed in two chunks, split at `at`.
    fn split_events(stream: &[u8], at: usize) -> Vec<String> {
        let mut p = SseParser::default();
        let mut out = p.push(&stream[..at]);
        out.extend(p.push(&stream[at..]));
        out
    }

    #[test]
    fn multi_byte_characters_survive_every_chunk_boundary() {
        // 2-byte é, 3-byte €, 4-byte 🦀 (and a 3-byte CJK character).
        let text = "é€🦀語";
        let payload = format!("{{\"t\":\"{text}\"}}");
        for eol in ["\n", "\r\n", "\r"] {
            let stream = format!(": hi{eol}event: message{eol}data: {payload}{eol}{eol}");
            for at in 0..=stream.len() {
                assert_eq!(
                    split_events(stream.as_bytes(), at),
                    vec![payload.clone()],
                    "line ending {eol:?}, split at byte {at}"
                );
            }
        }
    }

    #[test]
    fn every_line_ending_the_spec_allows() {
        for eol in ["\n", "\r\n", "\r"] {
            let stream = format!("data: a{eol}data: b{eol}{eol}data: c{eol}{eol}");
            for at in 0..=stream.len() {
                assert_eq!(
                    split_events(stream.as_bytes(), at),
                    vec!["a\nb".to_owned(), "c".to_owned()],
                    "line ending {eol:?}, split at byte {at}"
                );
            }
        }
    }
}
