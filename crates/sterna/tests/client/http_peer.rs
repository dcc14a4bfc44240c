//! A scripted HTTP server on 127.0.0.1 (hyper): each request (method, headers, JSON body)
//! is logged and answered by the test's script — JSON, a bare status, or an SSE stream the
//! script keeps writing to.

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// One request the server saw.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub headers: HeaderMap,
    /// The JSON body (`Null` when empty).
    pub body: Value,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The JSON-RPC method of a POST (`""` for a response or no body).
    pub fn rpc(&self) -> &str {
        self.body["method"].as_str().unwrap_or_default()
    }
}

/// How the script answers.
pub enum Reply {
    Json {
        status: u16,
        headers: Vec<(String, String)>,
        body: Value,
    },
    Status(u16),
    Sse {
        headers: Vec<(String, String)>,
        events: mpsc::UnboundedReceiver<String>,
    },
}

impl Reply {
    pub fn json(body: Value) -> Self {
        Self::Json {
            status: 200,
            headers: Vec::new(),
            body,
        }
    }

    pub fn with_session(self, id: &str) -> Self {
        match self {
            Self::Json {
                status,
                mut headers,
                body,
            } => {
                headers.push(("mcp-session-id".into(), id.into()));
                Self::Json {
                    status,
                    headers,
                    body,
                }
            }
            other => other,
        }
    }
}

/// The writing end of an SSE answer; the stream ends when every clone is dropped.
#[derive(Clone)]
pub struct SseTx(mpsc::UnboundedSender<String>);

impl SseTx {
    pub fn event(&self, id: Option<&str>, data: &Value) {
        let mut e = String::new();
        if let Some(id) = id {
            e.push_str(&format!("id: {id}\n"));
        }
        e.push_str(&format!("event: message\ndata: {data}\n\n"));
        let _ = self.0.send(e);
    }

    /// An event with an id, `retry`, and empty data (SEP-1699 priming).
    pub fn priming(&self, id: &str, retry_ms: u64) {
        let _ = self
            .0
            .send(format!("id: {id}\nretry: {retry_ms}\ndata: \n\n"));
    }
}

pub fn sse() -> (SseTx, Reply) {
    let (tx, rx) = mpsc::unbounded_channel();
    (
        SseTx(tx),
        Reply::Sse {
            headers: Vec::new(),
            events: rx,
        },
    )
}

pub type Script = Arc<dyn Fn(Seen) -> BoxFuture<'static, Reply> + Send + Sync>;

pub struct HttpPeer {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl HttpPeer {
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The POSTs of JSON-RPC method `m`.
    pub fn posts(&self, m: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.method == "POST" && s.rpc() == m)
            .collect()
    }
}

type Body = BoxBody<Bytes, Infallible>;

fn respond(reply: Reply) -> Response<Body> {
    let (status, headers, body, content_type) = match reply {
        Reply::Json {
            status,
            headers,
            body,
        } => (
            status,
            headers,
            Full::new(Bytes::from(body.to_string())).boxed(),
            Some("application/json"),
        ),
        Reply::Status(s) => (s, Vec::new(), Full::new(Bytes::new()).boxed(), None),
        Reply::Sse { headers, events } => {
            let stream = futures_util::stream::unfold(events, |mut rx| async move {
                let e = rx.recv().await?;
                Some((Ok::<_, Infallible>(Frame::data(Bytes::from(e))), rx))
            });
            (
                200,
                headers,
                StreamBody::new(stream).boxed(),
                Some("text/event-stream"),
            )
        }
    };
    let mut r = Response::builder().status(StatusCode::from_u16(status).unwrap());
    if let Some(ct) = content_type {
        r = r.header("content-type", ct);
    }
    for (k, v) in headers {
        r = r.header(k, v);
    }
    r.body(body).unwrap()
}

pub async fn serve(script: Script) -> HttpPeer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = seen.clone();
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let script = script.clone();
            let log = log.clone();
            let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let script = script.clone();
                let log = log.clone();
                async move {
                    let (parts, body) = req.into_parts();
                    let bytes = body
                        .collect()
                        .await
                        .map(|b| b.to_bytes())
                        .unwrap_or_default();
                    let seen = Seen {
                        method: parts.method.to_string(),
                        headers: parts.headers,
                        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
                    };
                    log.lock().unwrap().push(seen.clone());
                    Ok::<_, Infallible>(respond(script(seen).await))
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    HttpPeer { addr, seen, task }
}
