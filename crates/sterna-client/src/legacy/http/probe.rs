//! The era probe over HTTP: a modern `server/discover` POST, judged by its status and the
//! JSON-RPC message its body (JSON or SSE) carries.

use super::read::{Events, error_text, is_sse, read_all};
use crate::era::Verdict;
use crate::error::{ClientError, TransportError};
use crate::probe::{judge_http, probe_id};
use crate::transport::sse::SseParser;
use crate::transport::{HttpTransport, Kind, kind_of};
use bytes::Bytes;
use http::Method;
use std::time::Duration;
use sterna_types::jsonrpc::{Incoming, RawMessage};
use sterna_types::version::LATEST;

fn timed_out(wait: Duration) -> ClientError {
    ClientError::Transport(TransportError::Io(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("no answer to server/discover within {wait:?}"),
    )))
}

/// Sends the probe and judges the answer. A timeout is an error over HTTP, never
/// "legacy".
pub(crate) async fn probe(
    http: &HttpTransport,
    request: Vec<u8>,
    wait: Duration,
) -> Result<Verdict, ClientError> {
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", LATEST),
        ("mcp-method", "server/discover"),
    ];
    let req = http.prepare(Method::POST, &headers, Bytes::from(request))?;
    let judged = async {
        let response = http.exchange(req).await?;
        let status = response.status().as_u16();
        if matches!(status, 401 | 403 | 500..=599) {
            let body = error_text(response.into_body()).await;
            return judge_http(status, None, || body);
        }
        let limit = http.response_limit();
        let (message, text) = if is_sse(response.headers()) {
            (
                first_response(response.into_body(), limit).await?,
                String::new(),
            )
        } else {
            let bytes = read_all(response.into_body(), limit).await?;
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).into_owned();
            // Any JSON-RPC response (an error without an id included) is judged; quietly.
            let response = matches!(
                RawMessage::parse(&bytes),
                Ok(Incoming::Result { .. } | Incoming::Error { .. })
            );
            if response {
                crate::transport::tap::received("http", &bytes);
            }
            let message = response.then_some(bytes);
            (message, text)
        };
        judge_http(status, message.as_deref(), || text)
    };
    tokio::time::timeout(wait, judged)
        .await
        .map_err(|_| timed_out(wait))?
}

/// The response to the probe on an SSE stream, if it comes before the stream ends.
async fn first_response(
    body: hyper::body::Incoming,
    limit: usize,
) -> Result<Option<Vec<u8>>, TransportError> {
    let mut parser = SseParser::new(limit);
    let mut events = Events::new(body, Some(limit));
    while let Some(m) = events.next(&mut parser).await? {
        crate::transport::tap::received("http", m.as_bytes());
        if matches!(kind_of(m.as_bytes()), Kind::Response(id) if id == probe_id()) {
            return Ok(Some(m.into_bytes()));
        }
    }
    Ok(None)
}
