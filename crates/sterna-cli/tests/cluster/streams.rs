//! 2025-11-25 streams resumed through nginx without stickiness: a `deploy` call's SSE
//! stream is cut and resumed with `Last-Event-ID` until another replica than the one
//! running the call serves it; that replica is SIGKILLed mid-stream, and the client
//! resumes on a third: every progress event arrives once, then the response. When the
//! replica running the call is the one killed, the resumed stream replays what it had
//! sent and ends with an error for the call, instead of hanging.

use super::ONE_AT_A_TIME;
use super::fleet::Fleet;
use super::transport::pool;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use sterna::server::state::StateKeys;

/// A 2025-11-25 request through `url` (with the session once it has one).
async fn send(
    url: &str,
    method: &str,
    session: Option<&str>,
    last_id: Option<&str>,
    body: Option<Value>,
) -> (u16, String, hyper::HeaderMap, hyper::body::Incoming) {
    let mut b = hyper::Request::builder()
        .method(method)
        .uri(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(s) = session {
        b = b
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", "2025-11-25");
    }
    if let Some(id) = last_id {
        b = b.header("last-event-id", id);
    }
    let body = body.map_or(String::new(), |v| v.to_string());
    let resp = pool()
        .request(b.body(Full::new(Bytes::from(body))).unwrap())
        .await
        .unwrap();
    let replica = resp
        .headers()
        .get("x-sterna-replica")
        .map_or("-", |v| v.to_str().unwrap())
        .to_owned();
    let (parts, body) = resp.into_parts();
    (parts.status.as_u16(), replica, parts.headers, body)
}

/// A session opened through `url`.
async fn open(url: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "cluster-streams", "version": "1"}}});
    let (status, _, headers, body) = send(url, "POST", None, None, Some(init)).await;
    assert_eq!(status, 200);
    let _ = body.collect().await;
    let session = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, _, body) = send(url, "POST", Some(&session), None, Some(note)).await;
    assert_eq!(status, 202);
    let _ = body.collect().await;
    session
}

/// Reads one SSE stream, recording what it brings.
struct Reader {
    body: hyper::body::Incoming,
    buf: String,
}

/// What a client has seen of a call's stream: event ids, progress values, the response.
#[derive(Default)]
struct Seen {
    ids: Vec<String>,
    progress: Vec<u64>,
    response: Option<Value>,
}

impl Reader {
    /// Reads until `want` more progress events or the response arrived (`true`), or the
    /// stream ended or broke (`false`).
    async fn read(&mut self, seen: &mut Seen, want: usize) -> bool {
        let goal = seen.progress.len() + want;
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let event: String = self.buf.drain(..end + 2).collect();
                if let Some(id) = event.lines().find_map(|l| l.strip_prefix("id: ")) {
                    seen.ids.push(id.to_owned());
                }
                let data = event.lines().find_map(|l| l.strip_prefix("data: "));
                let Some(v) = data
                    .filter(|d| !d.is_empty())
                    .map(|d| serde_json::from_str::<Value>(d).unwrap())
                else {
                    continue;
                };
                if v["method"] == "notifications/progress" {
                    let p = v["params"]["progress"].as_f64().unwrap();
                    seen.progress.push(p as u64);
                } else if v.get("id").is_some() {
                    seen.response = Some(v);
                    return true;
                }
                if seen.progress.len() >= goal {
                    return true;
                }
            }
            match tokio::time::timeout(Duration::from_secs(30), self.body.frame()).await {
                Ok(Some(Ok(frame))) => {
                    if let Ok(d) = frame.into_data() {
                        self.buf.push_str(&String::from_utf8_lossy(&d));
                    }
                }
                Ok(_) => return false,
                Err(_) => panic!("nothing on the stream for 30 s"),
            }
        }
    }
}

/// A `deploy` call of 16 steps of 300 ms, with progress, through `url`: the replica
/// running it and its stream.
async fn deploy(url: &str, session: &str) -> (String, Reader) {
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "deploy", "arguments": {"steps": 16, "step_ms": 300},
        "_meta": {"progressToken": "p"}}});
    let (status, replica, headers, body) = send(url, "POST", Some(session), None, Some(call)).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "text/event-stream");
    (
        replica,
        Reader {
            body,
            buf: String::new(),
        },
    )
}

/// Resumes the stream after `seen`'s last event through `url`.
async fn resume(url: &str, session: &str, seen: &Seen) -> (String, Reader) {
    let last = seen.ids.last().expect("an event id to resume from");
    let (status, replica, _, body) = send(url, "GET", Some(session), Some(last), None).await;
    assert_eq!(status, 200, "{replica} resumes after {last}");
    (
        replica,
        Reader {
            body,
            buf: String::new(),
        },
    )
}

fn index(name: &str) -> usize {
    name.trim_start_matches('r').parse::<usize>().unwrap() - 1
}

/// Each replica's `/metrics` (those in `live`), summed by series.
pub(crate) async fn scrape(fleet: &Fleet, live: &[usize]) -> BTreeMap<String, f64> {
    let mut all = BTreeMap::new();
    for &i in live {
        let url = format!("http://127.0.0.1:{}/metrics", fleet.replicas[i].port);
        let req = hyper::Request::get(url)
            .body(Full::new(Bytes::new()))
            .unwrap();
        let resp = pool().request(req).await.unwrap();
        assert_eq!(resp.status(), 200);
        let text = resp.into_body().collect().await.unwrap().to_bytes();
        for line in String::from_utf8_lossy(&text)
            .lines()
            .filter(|l| !l.starts_with('#'))
        {
            if let Some((series, value)) = line.rsplit_once(' ') {
                *all.entry(series.to_owned()).or_insert(0.0) += value.parse::<f64>().unwrap_or(0.0);
            }
        }
    }
    all
}

/// One series of a scrape (0 when absent).
pub(crate) fn metric(scraped: &BTreeMap<String, f64>, series: &str) -> f64 {
    scraped.get(series).copied().unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stream_cut_by_a_replica_kill_resumes_on_another_every_event_once() {
    let _one = ONE_AT_A_TIME.lock().await;
    let mut fleet = Fleet::start(3, &StateKeys::generate_base64());
    let url = fleet.url();
    let session = open(&url).await;
    let (runner, mut reader) = deploy(&url, &session).await;
    let mut seen = Seen::default();
    assert!(reader.read(&mut seen, 2).await);
    drop(reader); // the connection breaks: the call goes on, on its replica
    // Resume until a replica other than the runner serves the stream (round robin).
    let mut served = Vec::new();
    let (follower, mut reader) = loop {
        let (replica, mut r) = resume(&url, &session, &seen).await;
        served.push(replica.clone());
        assert!(r.read(&mut seen, 1).await);
        if replica != runner || served.len() >= 6 {
            break (replica, r);
        }
    };
    assert_ne!(
        follower, runner,
        "round robin reached another replica: {served:?}"
    );
    println!("[streams] call running on {runner}; stream resumed through nginx on {served:?}");
    let before = scrape(&fleet, &[0, 1, 2]).await;
    assert!(reader.read(&mut seen, 1).await);
    let dead = index(&follower);
    tokio::task::block_in_place(|| fleet.kill(dead));
    let broke = !reader.read(&mut seen, 100).await;
    assert!(broke, "the stream broke with {follower}");
    let (third, mut reader) = resume(&url, &session, &seen).await;
    println!("[streams] {follower} killed (SIGKILL) mid-stream; resumed on {third}");
    assert_ne!(third, follower);
    while seen.response.is_none() {
        assert!(
            reader.read(&mut seen, 100).await,
            "the stream ended before the response"
        );
    }
    let response = seen.response.clone().unwrap();
    assert_eq!(response["id"], 7);
    assert_eq!(
        response["result"]["content"][0]["text"],
        "Deployed in 16 steps"
    );
    assert_eq!(
        seen.progress,
        (1..=16).collect::<Vec<u64>>(),
        "every progress event once, in order"
    );
    let ids: BTreeSet<&String> = seen.ids.iter().collect();
    assert_eq!(ids.len(), seen.ids.len(), "no event twice");
    let live: Vec<usize> = (0..3).filter(|i| *i != dead).collect();
    let after = scrape(&fleet, &live).await;
    let resumes = metric(&after, "sterna_stream_resumes_total{from=\"store\"}");
    let calls = metric(
        &after,
        "sterna_requests_total{method=\"tools/call\",outcome=\"complete\"}",
    ) - metric(
        &before,
        "sterna_requests_total{method=\"tools/call\",outcome=\"complete\"}",
    );
    println!(
        "[streams] 16 progress events and the response, each once; /metrics of the live replicas: {resumes} resumes from Redis, {calls} more tools/call completed"
    );
    // The killed replica's own count went with it: the third one's is left.
    assert!(resumes >= 1.0, "resumed from the shared store");
    assert!(calls >= 1.0, "the counter moved when the call completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stream_whose_call_died_with_its_replica_ends_with_an_error() {
    let _one = ONE_AT_A_TIME.lock().await;
    let mut fleet = Fleet::start(3, &StateKeys::generate_base64());
    let url = fleet.url();
    let session = open(&url).await;
    let (runner, mut reader) = deploy(&url, &session).await;
    let mut seen = Seen::default();
    assert!(reader.read(&mut seen, 3).await);
    tokio::task::block_in_place(|| fleet.kill(index(&runner)));
    assert!(
        !reader.read(&mut seen, 100).await,
        "the stream broke with {runner}"
    );
    let (other, mut reader) = resume(&url, &session, &seen).await;
    while seen.response.is_none() {
        assert!(
            reader.read(&mut seen, 100).await,
            "the stream ended without a response"
        );
    }
    let response = seen.response.unwrap();
    println!(
        "[streams] {runner} (running the call) killed; the stream resumed on {other} ended with: {}",
        response["error"]["message"]
    );
    assert_eq!(response["id"], 7);
    assert_eq!(response["error"]["code"], -32603);
    let n = seen.progress.len();
    assert_eq!(
        seen.progress,
        (1..=n as u64).collect::<Vec<u64>>(),
        "what was sent, once"
    );
}
