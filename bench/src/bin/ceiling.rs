//! The ceiling: a bare hyper HTTP/1.1 server on the same runtime as sterna's. What HTTP
//! JSON-RPC costs on this machine with no SDK at all.
//!
//! - A POST claiming 2026-07-28 (its `MCP-Protocol-Version` header) gets a fixed, valid
//!   JSON-RPC body (an `echo` result), its body read but not parsed.
//! - Anything else is the least a 2025-11-25 server does for the load generator's session
//!   modes (`legacy`, `legacy-echo`), each message parsed once: `initialize` opens a
//!   session (`Mcp-Session-Id`), `tools/call echo` is answered as JSON, and
//!   `tools/call provision_database` as an SSE stream carrying a pushed
//!   `elicitation/create`. The answer to that push, POSTed on another connection (202),
//!   goes to the stream waiting for it, which then sends the result and ends. No limits,
//!   logs, resumption or authorization: the floor under any 2025-11-25 server.
//!
//! `ceiling --port P` serves `http://127.0.0.1:P/mcp`.

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::sync::oneshot;

const BODY: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hello"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ceiling","version":"1"}}}}"#;

/// The sessions opened and the pushes waiting for their answers.
#[derive(Default)]
struct Floor {
    next: AtomicU64,
    sessions: Mutex<HashSet<u64>>,
    waiting: Mutex<HashMap<u64, oneshot::Sender<String>>>,
}

/// A 2025-11-25 message, as much of it as the floor reads.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a str>,
    #[serde(borrow, default)]
    params: Option<Params<'a>>,
    #[serde(borrow, default)]
    result: Option<Answer<'a>>,
}

#[derive(Deserialize, Default)]
struct Params<'a> {
    #[serde(borrow, default)]
    name: Option<&'a str>,
    #[serde(borrow, default)]
    arguments: Option<Arguments<'a>>,
}

#[derive(Deserialize)]
struct Arguments<'a> {
    #[serde(borrow, default)]
    name: Option<&'a str>,
}

#[derive(Deserialize)]
struct Answer<'a> {
    #[serde(borrow)]
    action: &'a str,
    #[serde(borrow, default)]
    content: Option<Region<'a>>,
}

#[derive(Deserialize)]
struct Region<'a> {
    #[serde(borrow)]
    region: &'a str,
}

type Reply = Response<Stream>;

/// A response body: what is there at once, then at most the result of a call that pushed
/// a question, once its answer arrives.
struct Stream {
    now: Option<Bytes>,
    later: Option<Later>,
}

/// A call waiting for the answer to its pushed question: its id and argument.
struct Later {
    region: oneshot::Receiver<String>,
    id: String,
    name: String,
}

impl Body for Stream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(b) = self.now.take() {
            return Poll::Ready(Some(Ok(Frame::data(b))));
        }
        let Some(later) = self.later.as_mut() else {
            return Poll::Ready(None);
        };
        let got = std::task::ready!(Pin::new(&mut later.region).poll(cx));
        let Some(Later { id, name, .. }) = self.later.take() else {
            return Poll::Ready(None);
        };
        Poll::Ready(got.ok().map(|region| {
            Ok(Frame::data(event(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"Created {name} in {region}"}}]}}}}"#
            ))))
        }))
    }

    fn is_end_stream(&self) -> bool {
        self.now.is_none() && self.later.is_none()
    }
}

fn reply(status: StatusCode, kind: &'static str, body: Bytes) -> Reply {
    let mut r = Response::new(Stream {
        now: (!body.is_empty()).then_some(body),
        later: None,
    });
    *r.status_mut() = status;
    if !kind.is_empty() {
        r.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static(kind));
    }
    r
}

fn status(s: StatusCode) -> Reply {
    reply(s, "", Bytes::new())
}

fn json(body: String) -> Reply {
    reply(StatusCode::OK, "application/json", Bytes::from(body))
}

fn event(json: &str) -> Bytes {
    Bytes::from(format!("data: {json}\n\n"))
}

async fn answer(floor: Arc<Floor>, req: Request<Incoming>) -> Result<Reply, Infallible> {
    let modern = req
        .headers()
        .get("mcp-protocol-version")
        .is_some_and(|v| v == "2026-07-28");
    if modern {
        // Read the request like a real server must.
        let _ = req.into_body().collect().await;
        return Ok(reply(
            StatusCode::OK,
            "application/json",
            Bytes::from_static(BODY),
        ));
    }
    let (parts, body) = req.into_parts();
    let session = parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let Ok(body) = body.collect().await.map(|b| b.to_bytes()) else {
        return Ok(status(StatusCode::BAD_REQUEST));
    };
    if parts.method == Method::DELETE {
        if let Some(s) = session {
            floor.sessions.lock().unwrap().remove(&s);
        }
        return Ok(status(StatusCode::OK));
    }
    let Ok(m) = serde_json::from_slice::<Message<'_>>(&body) else {
        return Ok(status(StatusCode::BAD_REQUEST));
    };
    if m.method == Some("initialize") {
        return Ok(initialize(&floor, m.id));
    }
    let known = session.is_some_and(|s| floor.sessions.lock().unwrap().contains(&s));
    if !known {
        return Ok(status(StatusCode::NOT_FOUND));
    }
    Ok(in_session(&floor, m))
}

fn initialize(floor: &Floor, id: Option<&RawValue>) -> Reply {
    let session = floor.next.fetch_add(1, Ordering::Relaxed);
    floor.sessions.lock().unwrap().insert(session);
    let id = id.map_or("null", RawValue::get);
    let mut r = json(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"ceiling","version":"1"}}}}}}"#
    ));
    r.headers_mut()
        .insert("mcp-session-id", HeaderValue::from(session));
    r
}

fn in_session(floor: &Floor, m: Message<'_>) -> Reply {
    let (Some(id), Some(method)) = (m.id, m.method) else {
        // A notification, or the answer to a push.
        return match (m.id, m.result) {
            (Some(id), Some(a)) => answered(floor, id, a),
            _ => status(StatusCode::ACCEPTED),
        };
    };
    let id = id.get();
    let params = m.params.unwrap_or_default();
    match (method, params.name) {
        ("tools/call", Some("echo")) => json(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"hello"}}]}}}}"#
        )),
        ("tools/call", Some("provision_database")) => {
            let name = params.arguments.and_then(|a| a.name).unwrap_or("?");
            push(floor, id, name)
        }
        _ => json(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"Method not found"}}}}"#
        )),
    }
}

/// The SSE stream of a call that asks where to create `name`: the question now, the
/// result once the answer arrives.
fn push(floor: &Floor, id: &str, name: &str) -> Reply {
    let push = floor.next.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = oneshot::channel::<String>();
    floor.waiting.lock().unwrap().insert(push, tx);
    let question = event(&format!(
        r#"{{"jsonrpc":"2.0","id":{push},"method":"elicitation/create","params":{{"message":"Which region should {name} be created in?","requestedSchema":{{"type":"object","properties":{{"region":{{"type":"string","enum":["eu-west-1","us-east-1"]}}}},"required":["region"]}}}}}}"#
    ));
    let mut r = Response::new(Stream {
        now: Some(question),
        later: Some(Later {
            region: rx,
            id: id.to_owned(),
            name: name.to_owned(),
        }),
    });
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    r
}

/// The answer to push `id`, handed to the stream waiting for it.
fn answered(floor: &Floor, id: &RawValue, a: Answer<'_>) -> Reply {
    let waiting = id
        .get()
        .parse::<u64>()
        .ok()
        .and_then(|push| floor.waiting.lock().unwrap().remove(&push));
    match (waiting, a.action, a.content) {
        (Some(tx), "accept", Some(c)) => {
            let _ = tx.send(c.region.to_owned());
            status(StatusCode::ACCEPTED)
        }
        _ => status(StatusCode::BAD_REQUEST),
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let port: u16 = args
        .iter()
        .position(|a| a == "--port")
        .and_then(|i| args.get(i + 1))
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    let floor = Arc::new(Floor::default());
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let floor = floor.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| answer(floor.clone(), req));
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sterna_bench::legacy as msg;

    fn read(json: &str) -> Message<'_> {
        serde_json::from_str(json).unwrap()
    }

    async fn frames(r: Reply) -> Vec<Vec<u8>> {
        let mut body = r.into_body();
        let mut out = Vec::new();
        while let Some(f) = body.frame().await {
            out.push(f.unwrap().into_data().unwrap().to_vec());
        }
        out
    }

    fn data(event: &[u8]) -> &[u8] {
        event
            .strip_prefix(b"data: ")
            .and_then(|e| e.strip_suffix(b"\n\n"))
            .unwrap()
    }

    #[tokio::test]
    async fn the_push_flow_says_what_the_load_generator_checks() {
        let floor = Floor::default();
        let init = initialize(&floor, Some(&RawValue::from_string("0".into()).unwrap()));
        assert!(init.headers().contains_key("mcp-session-id"));
        msg::check_initialize(&frames(init).await[0]).unwrap();

        let call = msg::push_call(7);
        let mut stream = in_session(&floor, read(&call)).into_body();
        let question = stream.frame().await.unwrap().unwrap().into_data().unwrap();
        let answer = msg::answer_push(data(&question)).unwrap();
        // Only the push that was asked is answered, once.
        let wrong = answer.replacen("\"id\":", "\"id\":9", 1);
        assert_eq!(
            in_session(&floor, read(&wrong)).status(),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            in_session(&floor, read(&answer)).status(),
            StatusCode::ACCEPTED
        );
        assert_eq!(
            in_session(&floor, read(&answer)).status(),
            StatusCode::BAD_REQUEST
        );
        let result = stream.frame().await.unwrap().unwrap().into_data().unwrap();
        msg::check_result(data(&result), 7, msg::PUSH_EXPECT).unwrap();
        assert!(stream.frame().await.is_none());

        let echo = in_session(&floor, read(&msg::echo_call(8)));
        msg::check_result(&frames(echo).await[0], 8, "hello").unwrap();
    }
}
