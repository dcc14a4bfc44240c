//! The 2025-11-25 push flow in process: a session opened once, then per operation the
//! `tools/call provision_database` POST answered as an SSE stream, the pushed
//! `elicitation/create` read from it, the answer POSTed (202), and the result read from
//! the first stream; or an in-session `tools/call echo`. Every message is checked.

use super::allocs::endpoint;
use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use http_body_util::{BodyExt, Full};
use sterna::server::http::{McpBody, McpService};
use sterna_bench::{legacy as msg, sse};
use tower_service::Service;

/// The JSON-RPC messages of one response: a JSON body, or SSE events read as they arrive.
struct Messages {
    body: McpBody,
    sse: Option<sse::Parser>,
    done: bool,
}

impl Messages {
    /// The next message; `None` at the end of the response.
    async fn next(&mut self) -> Option<Vec<u8>> {
        let Some(parser) = &mut self.sse else {
            if std::mem::replace(&mut self.done, true) {
                return None;
            }
            let mut whole = Vec::new();
            while let Some(frame) = endpoint(self.body.frame()).await {
                if let Ok(data) = frame.expect("body").into_data() {
                    whole.extend_from_slice(&data);
                }
            }
            return (!whole.is_empty()).then_some(whole);
        };
        loop {
            if let Some(e) = parser.next_event() {
                match e.data {
                    Some(d) => return Some(d.into_bytes()),
                    None => continue,
                }
            }
            match endpoint(self.body.frame()).await {
                None => return None,
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        parser.push(&data);
                    }
                }
                Some(Err(e)) => match e {},
            }
        }
    }
}

/// POSTs `body` as a 2025-11-25 client (with the session once it has one).
async fn send(
    svc: &mut McpService,
    session: Option<&str>,
    body: String,
) -> (StatusCode, HeaderMap, Messages) {
    let mut req = http::Request::post("http://127.0.0.1/mcp")
        // The client's address, as `HttpServer` puts it on every request.
        .extension(sterna::server::http::PeerAddr(
            ([127, 0, 0, 1], 40000).into(),
        ))
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(s) = session {
        req = req
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", msg::VERSION);
    }
    let req = req
        .body(Full::new(Bytes::from(body)))
        .expect("valid request");
    let (parts, body) = endpoint(svc.call(req))
        .await
        .expect("infallible")
        .into_parts();
    let is_sse = parts
        .headers
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let messages = Messages {
        body,
        sse: is_sse.then(sse::Parser::new),
        done: false,
    };
    (parts.status, parts.headers, messages)
}

fn check<T>(r: Result<T, msg::CheckError>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// `initialize` and `notifications/initialized`: the session's id.
pub(crate) async fn open(svc: &mut McpService) -> String {
    let (status, headers, mut m) = send(svc, None, msg::INITIALIZE.to_owned()).await;
    assert_eq!(status, StatusCode::OK);
    let session = headers["mcp-session-id"]
        .to_str()
        .expect("a visible session id")
        .to_owned();
    check(msg::check_initialize(
        &m.next().await.expect("an initialize result"),
    ));
    assert!(m.next().await.is_none(), "one message answers initialize");
    let (status, _, mut m) = send(svc, Some(&session), msg::INITIALIZED.to_owned()).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert!(m.next().await.is_none());
    session
}

/// One push flow on `session`, with call id `id`.
pub(crate) async fn push(svc: &mut McpService, session: &str, id: u64) {
    let (status, headers, mut stream) = send(svc, Some(session), msg::push_call(id)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "text/event-stream");
    let question = stream.next().await.expect("a pushed question");
    let answer = check(msg::answer_push(&question));
    let (status, _, mut r) = send(svc, Some(session), answer).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert!(r.next().await.is_none(), "a 202 has no body");
    let done = stream.next().await.expect("the result");
    check(msg::check_result(&done, id, msg::PUSH_EXPECT));
    assert!(
        stream.next().await.is_none(),
        "the stream ends after the result"
    );
}

/// One `tools/call echo` in `session`, with call id `id`.
pub(crate) async fn echo(svc: &mut McpService, session: &str, id: u64) {
    let (status, _, mut m) = send(svc, Some(session), msg::echo_call(id)).await;
    assert_eq!(status, StatusCode::OK);
    let r = m.next().await.expect("the result");
    check(msg::check_result(&r, id, "hello"));
    assert!(m.next().await.is_none(), "one message answers echo");
}
