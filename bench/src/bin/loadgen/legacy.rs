//! The 2025-11-25 modes of the load generator. Each worker opens a session once
//! (`initialize`, `notifications/initialized`) on two keep-alive connections of its own and
//! keeps it: `legacy` posts `tools/call provision_database` on the first connection, reads
//! the pushed `elicitation/create` from that response's SSE stream, POSTs the answer on the
//! second connection (202) and reads the result from the first stream; `legacy-echo` is an
//! in-session `tools/call echo`. Every message is checked; the session is deleted at the end.

use super::{Conn, Opts, connect};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use std::time::Duration;
use sterna_bench::{legacy as msg, sse};

/// The longest one operation may take before it counts as an error.
pub(crate) const OP_TIMEOUT: Duration = Duration::from_secs(10);

/// A worker's session: its id (as the header value every request sends) and its two
/// connections.
pub(crate) struct Session {
    id: HeaderValue,
    call: Conn,
    answer: Conn,
}

/// The JSON-RPC messages of one response: a JSON body, or SSE events read as they arrive.
struct Messages {
    body: Incoming,
    sse: Option<sse::Parser>,
    done: bool,
}

impl Messages {
    /// The next message; `None` at the end of the response.
    async fn next(&mut self) -> Result<Option<Vec<u8>>, String> {
        let Some(parser) = &mut self.sse else {
            if std::mem::replace(&mut self.done, true) {
                return Ok(None);
            }
            let whole = (&mut self.body)
                .collect()
                .await
                .map_err(|e| e.to_string())?
                .to_bytes();
            return Ok((!whole.is_empty()).then(|| whole.to_vec()));
        };
        loop {
            if let Some(e) = parser.next_event() {
                match e.data {
                    Some(d) => return Ok(Some(d.into_bytes())),
                    None => continue,
                }
            }
            match self.body.frame().await {
                None => return Ok(None),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        parser.push(&data);
                    }
                }
                Some(Err(e)) => return Err(e.to_string()),
            }
        }
    }

    async fn expect(&mut self, what: &str) -> Result<Vec<u8>, String> {
        self.next()
            .await?
            .ok_or_else(|| format!("the response ended before {what}"))
    }

    async fn end(&mut self, after: &str) -> Result<(), String> {
        match self.next().await? {
            None => Ok(()),
            Some(m) => Err(format!(
                "a message after {after}: {}",
                String::from_utf8_lossy(&m)
            )),
        }
    }
}

/// Sends `body` with `method` as a 2025-11-25 client (with the session once it has one).
async fn send(
    c: &mut Conn,
    o: &Opts,
    method: http::Method,
    session: Option<&HeaderValue>,
    body: String,
) -> Result<(StatusCode, HeaderMap, Messages), String> {
    let mut req = Request::builder()
        .method(method)
        .uri(&o.path)
        .header(http::header::HOST, o.authority.clone())
        .header(http::header::CONTENT_TYPE, super::json())
        .header(http::header::ACCEPT, super::accept_both());
    if let Some(s) = session {
        req = req.header("mcp-session-id", s.clone()).header(
            "mcp-protocol-version",
            HeaderValue::from_static(msg::VERSION),
        );
    }
    let req = req
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let resp = c.send(o, req).await?;
    let (parts, body) = resp.into_parts();
    let is_sse = parts
        .headers
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let messages = Messages {
        body,
        sse: is_sse.then(sse::Parser::new),
        done: false,
    };
    Ok((parts.status, parts.headers, messages))
}

fn status(got: StatusCode, want: StatusCode, what: &str) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: HTTP {got}, expected {want}"))
    }
}

/// Opens a session: two connections, `initialize`, `notifications/initialized`.
pub(crate) async fn open(o: &Opts) -> Result<Session, String> {
    let mut call = connect(o).await?;
    let answer = connect(o).await?;
    let post = http::Method::POST;
    let (st, headers, mut m) =
        send(&mut call, o, post.clone(), None, msg::INITIALIZE.into()).await?;
    status(st, StatusCode::OK, "initialize")?;
    let id = headers
        .get("mcp-session-id")
        .filter(|v| v.to_str().is_ok())
        .ok_or("initialize answered without an Mcp-Session-Id")?
        .clone();
    msg::check_initialize(&m.expect("the initialize result").await?).map_err(|e| e.to_string())?;
    m.end("the initialize result").await?;
    let (st, _, mut m) = send(&mut call, o, post, Some(&id), msg::INITIALIZED.into()).await?;
    status(st, StatusCode::ACCEPTED, "notifications/initialized")?;
    m.end("202").await?;
    Ok(Session { id, call, answer })
}

/// Ends the session (DELETE); errors are ignored: the run is over.
pub(crate) async fn close(mut s: Session, o: &Opts) {
    let del = send(
        &mut s.call,
        o,
        http::Method::DELETE,
        Some(&s.id),
        String::new(),
    );
    if let Ok(Ok((_, _, mut m))) = tokio::time::timeout(Duration::from_secs(2), del).await {
        let _ = tokio::time::timeout(Duration::from_secs(2), m.next()).await;
    }
}

/// One push flow: the call, the pushed question, the answer on the second connection,
/// the result on the first stream.
pub(crate) async fn push_op(s: &mut Session, o: &Opts, id: u64) -> Result<(), String> {
    let post = http::Method::POST;
    let (st, _, mut stream) = send(
        &mut s.call,
        o,
        post.clone(),
        Some(&s.id),
        msg::push_call(id),
    )
    .await?;
    status(st, StatusCode::OK, "tools/call provision_database")?;
    if stream.sse.is_none() {
        return Err("tools/call provision_database was not answered with an SSE stream".into());
    }
    let question = stream.expect("the pushed question").await?;
    let answer = msg::answer_push(&question).map_err(|e| e.to_string())?;
    let (st, _, mut r) = send(&mut s.answer, o, post, Some(&s.id), answer).await?;
    status(st, StatusCode::ACCEPTED, "the answer")?;
    r.end("202").await?;
    let done = stream.expect("the result").await?;
    msg::check_result(&done, id, msg::PUSH_EXPECT).map_err(|e| e.to_string())?;
    stream.end("the result").await
}

/// One in-session `tools/call echo`.
pub(crate) async fn echo_op(s: &mut Session, o: &Opts, id: u64) -> Result<(), String> {
    let (st, _, mut m) = send(
        &mut s.call,
        o,
        http::Method::POST,
        Some(&s.id),
        msg::echo_call(id),
    )
    .await?;
    status(st, StatusCode::OK, "tools/call echo")?;
    let r = m.expect("the echo result").await?;
    msg::check_result(&r, id, "hello").map_err(|e| e.to_string())?;
    m.end("the echo result").await
}
