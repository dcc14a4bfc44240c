//! The shared event logs of 2025-11-25 streams against a real Redis: what one replica
//! appends another reads back after any position, a session's log is bounded, readers
//! are marked, and a stream whose writer died reads as abandoned.

#![allow(missing_docs)]

#[path = "redis.rs"]
#[allow(dead_code)]
mod harness;

use bytes::Bytes;
use std::time::Duration;
use sterna::server::http::{StreamAppend, StreamEvent, StreamPage, StreamRead, StreamStore};
use sterna_redis::{Redis, RedisStreamStore};

fn ev(seq: u64) -> StreamEvent {
    StreamEvent {
        seq,
        data: Bytes::from(format!("{{\"n\":{seq}}}")),
    }
}

async fn append(
    s: &RedisStreamStore,
    stream: u64,
    events: &[StreamEvent],
    ended: bool,
    max: usize,
) {
    let mut w = StreamAppend::new("s1", stream, "42", events);
    w.ended = ended;
    w.max_events = max;
    s.append(w).await.unwrap();
}

async fn read(s: &RedisStreamStore, stream: u64, after: u64, position: Option<&str>) -> StreamPage {
    s.read(StreamRead::new("s1", stream, after, position))
        .await
        .unwrap()
}

#[tokio::test]
async fn events_written_on_one_replica_are_read_back_on_another() {
    let redis = harness::Server::start();
    let conn = Redis::connect(&redis.url).await.unwrap();
    let (a, b) = (conn.stream_store(), conn.stream_store());
    append(&a, 7, &[ev(1), ev(2), ev(3)], false, 100).await;
    append(&a, 8, &[ev(1)], false, 100).await;
    let p = read(&b, 7, 1, None).await;
    assert!(p.known && !p.ended && !p.abandoned);
    assert_eq!(p.events, vec![ev(2), ev(3)]);
    assert_eq!(p.request.as_deref(), Some("42"));
    append(&a, 7, &[ev(4)], true, 100).await;
    let next = read(&b, 7, 3, p.position.as_deref()).await;
    assert_eq!(next.events, vec![ev(4)]);
    assert!(next.ended);
    assert!(!read(&b, 9, 0, None).await.known, "an unknown stream");
    // Readers are marked for the writer.
    assert!(!b.is_read("s1", 7).await.unwrap());
    b.reading("s1", 7, Duration::from_secs(5)).await.unwrap();
    assert!(a.is_read("s1", 7).await.unwrap());
}

#[tokio::test]
async fn a_session_log_is_bounded_and_a_dead_writer_is_noticed() {
    let redis = harness::Server::start();
    let conn = Redis::connect(&redis.url).await.unwrap();
    let (a, b) = (conn.stream_store(), conn.stream_store());
    let many: Vec<StreamEvent> = (1..=10).map(ev).collect();
    append(&a, 3, &many, false, 4).await;
    let p = read(&b, 3, 0, None).await;
    assert_eq!(
        p.events,
        (7..=10).map(ev).collect::<Vec<_>>(),
        "the oldest dropped"
    );
    let waiting = read(&b, 3, 10, p.position.as_deref()).await;
    assert!(
        waiting.events.is_empty() && !waiting.abandoned,
        "its writer is alive"
    );
    // The writer's replica dies: its liveness key goes away with it.
    drop(a);
    let mut raw = harness::cluster::Raw::open(&redis.url).await;
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("sterna:alive:*")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(keys.len(), 1, "one writer");
    let _: () = redis::cmd("DEL")
        .arg(&keys[0])
        .query_async(&mut raw)
        .await
        .unwrap();
    let gone = read(&b, 3, 10, p.position.as_deref()).await;
    assert!(gone.abandoned, "nothing more will come");
}
