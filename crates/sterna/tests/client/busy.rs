//! A server that says it is busy (`429` or `503` with `Retry-After`): the client sends the
//! same request again after the wait it names, a bounded number of times; without
//! `Retry-After`, or past the bound, the refusal is the answer.

use super::http_peer::{Reply, Script, serve};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use sterna::client::{Client, ClientError, EraMode};

fn busy(status: u16, retry_after: Option<&'static str>) -> Reply {
    let mut headers = Vec::new();
    if let Some(r) = retry_after {
        headers.push(("retry-after".to_owned(), r.to_owned()));
    }
    Reply::Json {
        status,
        headers,
        body: json!({"jsonrpc": "2.0", "error": {"code": -32603, "message": "busy",
            "data": {"limit": "requests_per_client", "max": 1}}}),
    }
}

/// Answers the first `refusals` calls with `refusal`, then the call's result (and lists
/// the tool, for a client that looks its headers up first).
fn script(refusals: usize, refusal: fn() -> Reply) -> Script {
    let count = Arc::new(AtomicUsize::new(0));
    Arc::new(move |seen| {
        let list = seen.rpc() == "tools/list";
        let n = if list {
            0
        } else {
            count.fetch_add(1, Ordering::SeqCst)
        };
        Box::pin(async move {
            if list {
                return Reply::json(json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": {
                    "resultType": "complete",
                    "tools": [{"name": "x", "inputSchema": {"type": "object"}}]}}));
            }
            if n < refusals {
                return refusal();
            }
            Reply::json(json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": {
                "resultType": "complete", "content": [{"type": "text", "text": "done"}]}}))
        })
    })
}

async fn call(url: &str) -> Result<String, ClientError> {
    let client = Client::builder("busy-test", "0")
        .era(EraMode::Modern)
        .time_budget(Duration::from_secs(20))
        .connect_http(url)
        .unwrap();
    client
        .call_tool("x", json!({}))
        .await
        .map(|r| r.text_content())
}

#[tokio::test]
async fn a_busy_answer_with_retry_after_is_sent_again() {
    let peer = serve(script(2, || busy(429, Some("0")))).await;
    assert_eq!(call(&peer.url()).await.unwrap(), "done");
    assert_eq!(
        peer.posts("tools/call").len(),
        3,
        "two refusals, then the answer"
    );
    let peer = serve(script(1, || busy(503, Some("1")))).await;
    assert_eq!(call(&peer.url()).await.unwrap(), "done");
    assert_eq!(peer.posts("tools/call").len(), 2);
}

#[tokio::test]
async fn without_retry_after_or_past_the_bound_the_refusal_is_the_answer() {
    let peer = serve(script(1, || busy(429, None))).await;
    let e = call(&peer.url()).await.unwrap_err();
    assert!(
        matches!(e, ClientError::Server(ref o) if o.message == "busy"),
        "{e:?}"
    );
    assert_eq!(
        peer.posts("tools/call").len(),
        1,
        "no Retry-After: not sent again"
    );
    let peer = serve(script(usize::MAX, || busy(429, Some("0")))).await;
    assert!(call(&peer.url()).await.is_err());
    assert_eq!(
        peer.posts("tools/call").len(),
        4,
        "sent again at most 3 times"
    );
    // A wait longer than the client keeps waiting for one answer is not waited for.
    let peer = serve(script(1, || busy(503, Some("3600")))).await;
    assert!(call(&peer.url()).await.is_err());
    assert_eq!(peer.posts("tools/call").len(), 1);
}
