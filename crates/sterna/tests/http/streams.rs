//! SSE responses and subscriptions.

use super::client::{call, meta, post, start, std_headers};
use super::fixture::server;
use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::time::Duration;
use sterna::server::http::HttpConfig;

#[tokio::test]
async fn progress_turns_the_response_into_an_event_stream() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let mut body = call(1, "progress", json!({}));
    body["params"]["_meta"]["progressToken"] = json!("p1");
    let r = post(s.addr, &body).await;
    assert_eq!(r.headers["content-type"], "text/event-stream");
    assert_eq!(r.headers["x-accel-buffering"], "no");
    let events = r.events();
    assert_eq!(events.len(), 4, "{}", r.body);
    assert!(
        events[..3]
            .iter()
            .all(|e| e["method"] == "notifications/progress")
    );
    assert_eq!(events[3]["id"], 1);
    assert_eq!(events[3]["result"]["content"][0]["text"], "finished");
    // Without a progress token the same tool answers plain JSON.
    let r = post(s.addr, &call(2, "progress", json!({}))).await;
    assert_eq!(r.headers["content-type"], "application/json");
    // A client that only takes JSON gets JSON even when there is progress.
    let r = super::client::post_with(s.addr, &body, |h| {
        super::client::set(h, "accept", "application/json")
    })
    .await;
    assert_eq!(r.headers["content-type"], "application/json");
    assert_eq!(r.json()["result"]["content"][0]["text"], "finished");
    s.shutdown().await;
}

/// Reads SSE events from a streaming response until `n` arrived; comment lines
/// (keep-alives) are counted in `comments`.
async fn read_events(body: &mut hyper::body::Incoming, buf: &mut String, n: usize) -> Vec<Value> {
    read_events_counting(body, buf, n, &mut 0).await
}

async fn read_events_counting(
    body: &mut hyper::body::Incoming,
    buf: &mut String,
    n: usize,
    comments: &mut usize,
) -> Vec<Value> {
    let mut out = Vec::new();
    while out.len() < n {
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .expect("an event within 10 s")
            .expect("the stream is open")
            .unwrap();
        if let Ok(data) = frame.into_data() {
            buf.push_str(&String::from_utf8_lossy(&data));
        }
        while let Some(end) = buf.find("\n\n") {
            let event: String = buf.drain(..end + 2).collect();
            if let Some(d) = event.lines().find_map(|l| l.strip_prefix("data: ")) {
                out.push(serde_json::from_str(d).unwrap());
            } else if event.starts_with(':') {
                *comments += 1;
            }
        }
    }
    out
}

#[tokio::test]
async fn subscriptions_get_acknowledged_filtered_changes_and_a_graceful_end() {
    let (srv, _) = server();
    let s = start(
        srv,
        HttpConfig::default().keep_alive(Duration::from_millis(100)),
        None,
    )
    .await;
    let listen = json!({"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen",
        "params": {"_meta": meta(json!({})), "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["test://static"]}}});
    let tcp = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = Request::post(format!("http://{}/mcp", s.addr)).header("host", "127.0.0.1");
    for (k, v) in std_headers(&listen) {
        req = req.header(k, v);
    }
    let resp = sender
        .send_request(
            req.body(Full::new(Bytes::from(listen.to_string())))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let mut body = resp.into_body();
    let mut buf = String::new();
    let ack = read_events(&mut body, &mut buf, 1).await;
    assert_eq!(ack[0]["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );
    assert_eq!(ack[0]["params"]["notifications"]["toolsListChanged"], true);
    // A change announced by a handler reaches the stream, tagged with the subscription.
    let r = post(s.addr, &call(1, "announce", json!({}))).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "announced");
    let ev = read_events(&mut body, &mut buf, 1).await;
    assert_eq!(ev[0]["method"], "notifications/tools/list_changed");
    assert_eq!(
        ev[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );
    // Idle streams carry keep-alive comments (every 100 ms here).
    tokio::time::sleep(Duration::from_millis(350)).await;
    // Graceful shutdown ends the stream with the closing result.
    let stopping = tokio::spawn(s.shutdown());
    let mut comments = 0;
    let end = read_events_counting(&mut body, &mut buf, 1, &mut comments).await;
    assert!(
        comments >= 2,
        "keep-alive comments on an idle stream: {comments}"
    );
    assert_eq!(end[0]["id"], "sub-1");
    assert_eq!(
        end[0]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );
    assert!(
        buf.is_empty() || buf.starts_with(':') || buf.trim().is_empty(),
        "{buf:?}"
    );
    stopping.await.unwrap();
}
