//! 2025-11-25 streams resumed on another endpoint: two endpoints (two replicas in one
//! process) share their sessions and their streams' events; a stream started on A is
//! resumed with `Last-Event-ID` on B, which replays and follows it from the shared
//! store, every event once.

use super::client::start;
use super::fixture::server_with;
use super::legacy::{Stream, initialize, send};
use http::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use sterna::server::http::{
    HttpConfig, MemorySessionStore, MemoryStreamStore, SessionConfig, StreamStore,
};
use sterna::server::state::StateKeys;
use sterna::server::{Context, NoArgs, Server, ServerBuilder, Tool};

/// Reports progress `steps` times, then answers.
fn counting(b: ServerBuilder<StateKeys>) -> ServerBuilder<StateKeys> {
    b.tool(
        Tool::new("count").handler(|ctx: Context, _: NoArgs| async move {
            for i in 1..=6 {
                tokio::time::sleep(Duration::from_millis(40)).await;
                ctx.progress(f64::from(i), Some(6.0), None).await;
            }
            "counted to 6"
        }),
    )
}

fn replica() -> Server {
    server_with(counting).0
}

fn config(
    sessions: &Arc<MemorySessionStore>,
    streams: Option<&Arc<MemoryStreamStore>>,
) -> HttpConfig {
    let mut c = SessionConfig::new().store(sessions.clone());
    if let Some(s) = streams {
        c = c.streams(s.clone() as Arc<dyn StreamStore>);
    }
    HttpConfig::new().sessions(c)
}

fn count_call(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "count", "arguments": {}, "_meta": {"progressToken": "p"}}})
}

/// Reads `n` progress notifications: their values and the last event id.
async fn progress(stream: &mut Stream, n: usize) -> (Vec<f64>, String) {
    let mut seen = Vec::new();
    let mut last = String::new();
    while seen.len() < n {
        let e = stream.next().await.expect("the stream ended early");
        last = e.id.unwrap_or(last);
        if let Some(d) = e.data {
            assert_eq!(d["method"], "notifications/progress", "{d}");
            seen.push(d["params"]["progress"].as_f64().unwrap());
        }
    }
    (seen, last)
}

#[tokio::test]
async fn a_stream_started_on_one_replica_is_resumed_on_another_every_event_once() {
    let sessions = Arc::new(MemorySessionStore::default());
    let streams = Arc::new(MemoryStreamStore::default());
    let a = start(replica(), config(&sessions, Some(&streams)), None).await;
    let b = start(replica(), config(&sessions, Some(&streams)), None).await;
    let session = initialize(a.addr, json!({})).await;
    let mut first = send(a.addr, "POST", Some(&session), &[], Some(&count_call(4))).await;
    assert_eq!(first.headers["content-type"], "text/event-stream");
    let (mut seen, last) = progress(&mut first, 2).await;
    drop(first); // the connection breaks: the request goes on, on A
    let mut resumed = send(
        b.addr,
        "GET",
        Some(&session),
        &[("last-event-id", &last)],
        None,
    )
    .await;
    assert_eq!(resumed.status, StatusCode::OK, "B resumes A's stream");
    let (rest, _) = progress(&mut resumed, 4).await;
    seen.extend(rest);
    assert_eq!(
        seen,
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        "every event once, in order"
    );
    let done = resumed.message().await;
    assert_eq!(done["id"], 4);
    assert_eq!(done["result"]["content"][0]["text"], "counted to 6");
    assert!(
        resumed.next().await.is_none(),
        "the stream ends after the response"
    );
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn without_a_shared_store_only_the_replica_running_the_request_resumes_it() {
    let sessions = Arc::new(MemorySessionStore::default());
    let a = start(replica(), config(&sessions, None), None).await;
    let b = start(replica(), config(&sessions, None), None).await;
    let session = initialize(a.addr, json!({})).await;
    let mut first = send(a.addr, "POST", Some(&session), &[], Some(&count_call(5))).await;
    let (_, last) = progress(&mut first, 1).await;
    drop(first);
    let elsewhere = send(
        b.addr,
        "GET",
        Some(&session),
        &[("last-event-id", &last)],
        None,
    )
    .await;
    assert_eq!(elsewhere.status, StatusCode::BAD_REQUEST);
    let mut here = send(
        a.addr,
        "GET",
        Some(&session),
        &[("last-event-id", &last)],
        None,
    )
    .await;
    assert_eq!(here.status, StatusCode::OK);
    let (rest, _) = progress(&mut here, 5).await;
    assert_eq!(rest, [2.0, 3.0, 4.0, 5.0, 6.0]);
    a.shutdown().await;
    b.shutdown().await;
}
