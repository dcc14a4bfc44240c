//! A transport for sterna's client that records which replica answered each leg (the
//! `x-sterna-replica` header nginx passes on). A leg that nginx answers 502/503/504 (its
//! replica died with the request) or whose connection breaks is reported as
//! `StreamBroken`, which the client's retry policy re-issues with a new id.

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use std::sync::{Arc, Mutex};
use sterna::client::TransportError;
use sterna::client::transport::{NotificationSink, Outgoing, Transport};

/// One leg as the client saw it.
#[derive(Debug, Clone)]
pub(crate) struct Leg {
    /// The replica that answered (`-` when nginx answered alone).
    pub(crate) replica: String,
    /// The HTTP status.
    pub(crate) status: u16,
    /// The JSON-RPC method.
    pub(crate) method: String,
    /// Whether it carried a `requestState` (a retry leg of an MRTR flow).
    pub(crate) with_state: bool,
    /// Whether its response stream broke before the response (the client re-issues it).
    pub(crate) broken: bool,
}

/// The shared HTTP client (a connection pool to nginx).
pub(crate) fn pool() -> Hyper<HttpConnector, Full<Bytes>> {
    Hyper::builder(TokioExecutor::new()).build_http()
}

/// Records the legs of the requests sent through it.
#[derive(Clone)]
pub(crate) struct Recording {
    pub(crate) http: Hyper<HttpConnector, Full<Bytes>>,
    pub(crate) url: String,
    pub(crate) legs: Arc<Mutex<Vec<Leg>>>,
    /// Counts SSE responses whose head arrived (streams under way).
    pub(crate) streams: Arc<std::sync::atomic::AtomicUsize>,
}

impl Recording {
    pub(crate) fn new(http: &Hyper<HttpConnector, Full<Bytes>>, url: &str) -> Self {
        Self {
            http: http.clone(),
            url: url.to_owned(),
            legs: Arc::default(),
            streams: Arc::default(),
        }
    }

    pub(crate) fn legs(&self) -> Vec<Leg> {
        self.legs.lock().unwrap().clone()
    }

    async fn send(&self, req: Outgoing, sink: NotificationSink) -> Result<Vec<u8>, TransportError> {
        let mut b = hyper::Request::post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", &req.protocol_version)
            .header("mcp-method", &req.method);
        if let Some(name) = &req.name {
            b = b.header("mcp-name", sterna::types::header::encode(name).as_ref());
        }
        for (name, value) in &req.params {
            b = b.header(format!("mcp-param-{name}"), value.as_str());
        }
        let with_state = req.body.windows(14).any(|w| w == b"\"requestState\"");
        let method = req.method.clone();
        let request = b.body(Full::new(Bytes::from(req.body))).unwrap();
        let Ok(response) = self.http.request(request).await else {
            return Err(TransportError::StreamBroken);
        };
        let status = response.status().as_u16();
        let replica = response
            .headers()
            .get("x-sterna-replica")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-")
            .to_owned();
        let mut leg = Leg {
            replica,
            status,
            method,
            with_state,
            broken: false,
        };
        if matches!(status, 502..=504) {
            self.legs.lock().unwrap().push(leg);
            return Err(TransportError::StreamBroken);
        }
        let sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        if sse {
            self.streams
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        let body = response.into_body().collect().await.map(|b| b.to_bytes());
        let answer = match &body {
            Ok(b) if sse => answer_in_stream(b, &sink),
            Ok(b) => Some(b.to_vec()),
            Err(_) => None,
        };
        leg.broken = answer.is_none();
        self.legs.lock().unwrap().push(leg);
        let (Ok(body), Some(answer)) = (body, answer) else {
            return Err(TransportError::StreamBroken);
        };
        if sse {
            return Ok(answer);
        }
        if body.is_empty() {
            return Err(TransportError::Http {
                status,
                body: String::new(),
            });
        }
        Ok(body.to_vec())
    }
}

/// The response among the messages of an SSE body; notifications go to `sink`.
fn answer_in_stream(body: &[u8], sink: &NotificationSink) -> Option<Vec<u8>> {
    let text = String::from_utf8_lossy(body);
    for event in text.split("\n\n") {
        let data: String = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim_start)
            .collect();
        if data.is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&data).ok()?;
        if v.get("id").is_some() && (v.get("result").is_some() || v.get("error").is_some()) {
            return Some(data.into_bytes());
        }
        sink(data.as_bytes());
    }
    None
}

impl Transport for Recording {
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
