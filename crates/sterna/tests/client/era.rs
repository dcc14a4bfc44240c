//! Era detection: the probe goes legacy on anything but a modern answer (never keyed to
//! one code), stays modern on a recognised modern error, treats HTTP auth and server
//! errors as errors, and survives a stdio server that dies on it.

use super::http_peer::{HttpPeer, Reply, Script, Seen, serve};
use super::peer::{pair, text};
use futures_util::FutureExt;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use sterna::client::{Client, ClientError, Era, TransportError};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};

fn builder() -> sterna::client::ClientBuilder {
    Client::builder("era-test", "0")
        .on_elicit(|_f: ElicitFormParams| async {
            ElicitResult::accept(json!({"name": "Ada"}).as_object().unwrap().clone())
        })
        .time_budget(Duration::from_secs(20))
        .probe_timeout(Duration::from_millis(300))
}

/// How the scripted server answers the probe.
#[derive(Clone)]
enum Answer {
    Error(i64, &'static str),
    Result(Value),
    Raw(&'static str),
    Silence,
}

/// Runs one stdio exchange: the probe is answered by `answer`, then the client must
/// fall back to `initialize` and call a tool without any 2026-07-28 member.
async fn falls_back(answer: Answer) {
    let (t, mut peer) = pair();
    let client = builder().build(t);
    let server = tokio::spawn(async move {
        let probe = peer.expect("server/discover").await;
        assert!(probe["id"].is_string(), "the probe takes no protocol id");
        assert_eq!(
            probe["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        let id = probe["id"].clone();
        match answer {
            Answer::Error(code, m) => peer.error(&id, code, m).await,
            Answer::Result(r) => peer.result(&id, r).await,
            Answer::Raw(line) => peer.raw(line).await,
            Answer::Silence => {}
        }
        let init = peer.accept_initialize("2025-11-25").await;
        assert_eq!(init["capabilities"], json!({"elicitation": {"form": {}}}));
        assert_eq!(init["clientInfo"]["name"], "era-test");
        let call = peer.expect("tools/call").await;
        assert_eq!(call["id"], 2, "initialize took id 1, the probe none");
        assert!(call["params"].get("_meta").is_none(), "{call}");
        peer.result(&call["id"], text("done")).await;
        peer
    });
    let r = client.call_tool("x", json!({"a": 1})).await.unwrap();
    assert_eq!(r.text_content(), "done");
    let era = client.era().await.unwrap();
    assert!(era.is_legacy() && era.version() == "2025-11-25", "{era:?}");
    server.await.unwrap();
}

#[tokio::test]
async fn an_unrelated_error_means_legacy() {
    falls_back(Answer::Error(-32601, "Method not found")).await;
    falls_back(Answer::Error(-32000, "Server not initialized")).await;
    falls_back(Answer::Error(-32602, "Invalid params")).await;
    falls_back(Answer::Error(-32001, "Session not found")).await;
}

#[tokio::test]
async fn garbage_means_legacy() {
    falls_back(Answer::Result(json!({}))).await;
    falls_back(Answer::Result(json!("hello"))).await;
    // A DiscoverResult listing only legacy versions.
    falls_back(Answer::Result(json!({"resultType": "complete",
        "supportedVersions": ["2025-11-25"], "capabilities": {}, "ttlMs": 0, "cacheScope": "private"})))
    .await;
    // A line that is not JSON-RPC at all, then nothing.
    falls_back(Answer::Raw("Server ready! <garbage>")).await;
}

#[tokio::test]
async fn silence_means_legacy() {
    let started = std::time::Instant::now();
    falls_back(Answer::Silence).await;
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[tokio::test]
async fn a_recognised_modern_error_stays_modern_and_switches_version() {
    let (t, mut peer) = pair();
    let client = builder().build(t);
    let server = tokio::spawn(async move {
        let probe = peer.expect("server/discover").await;
        peer.send(
            &json!({"jsonrpc": "2.0", "id": probe["id"], "error": {"code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2025-11-25", "2026-07-28"], "requested": "2026-07-28"}}}),
        )
        .await;
        let call = peer.expect("tools/call").await;
        assert_eq!(
            call["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        peer.result(
            &call["id"],
            json!({"resultType": "complete", "content": []}),
        )
        .await;
    });
    client.call_tool("x", json!({})).await.unwrap();
    assert_eq!(client.era().await.unwrap().version(), "2026-07-28");
    assert!(!client.era().await.unwrap().is_legacy());
    server.await.unwrap();
}

#[tokio::test]
async fn a_discover_result_is_modern() {
    let (t, mut peer) = pair();
    let client = builder().build(t);
    let server = tokio::spawn(async move {
        let probe = peer.expect("server/discover").await;
        peer.result(
            &probe["id"],
            json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "private"}),
        )
        .await;
        // The next message is a modern request: no initialize.
        let next = peer.expect("tools/list").await;
        peer.result(&next["id"], json!({"resultType": "complete", "tools": []}))
            .await;
    });
    assert!(client.list_tools().await.unwrap().is_empty());
    server.await.unwrap();
}

/// A legacy HTTP server whose answer to the probe is `probe`.
fn http_legacy(probe: impl Fn() -> Reply + Send + Sync + 'static) -> Script {
    let probe = Arc::new(probe);
    Arc::new(move |s: Seen| {
        let probe = probe.clone();
        async move {
            match s.rpc() {
                "server/discover" => probe(),
                "initialize" => {
                    Reply::json(json!({"jsonrpc": "2.0", "id": s.body["id"], "result": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "serverInfo": {"name": "h", "version": "1"}}}))
                    .with_session("sess-1")
                }
                "tools/list" => {
                    Reply::json(json!({"jsonrpc": "2.0", "id": s.body["id"], "result": {
                    "tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}}))
                }
                _ if s.method == "POST" => Reply::Status(202),
                _ => Reply::Status(405),
            }
        }
        .boxed()
    })
}

async fn http_era(peer: &HttpPeer) -> Result<Era, ClientError> {
    let client = builder().connect_http(&peer.url()).unwrap();
    let era = client.era().await;
    if era.is_ok() {
        client.list_tools().await.unwrap();
    }
    era
}

#[tokio::test]
async fn http_a_bare_400_means_legacy() {
    let peer = serve(http_legacy(|| Reply::Status(400))).await;
    let era = http_era(&peer).await.unwrap();
    assert!(era.is_legacy() && era.version() == "2025-06-18", "{era:?}");
    let list = &peer.posts("tools/list")[0];
    assert_eq!(list.header("mcp-session-id"), Some("sess-1"));
    assert_eq!(list.header("mcp-protocol-version"), Some("2025-06-18"));
    assert_eq!(list.header("mcp-method"), None, "no 2026-only headers");
    let init = &peer.posts("initialize")[0];
    assert_eq!(init.header("mcp-protocol-version"), None);
    assert_eq!(init.header("mcp-session-id"), None);
    // Another client of the same endpoint remembers the verdict: no second probe.
    http_era(&peer).await.unwrap();
    assert_eq!(peer.posts("server/discover").len(), 1);
    assert_eq!(peer.posts("initialize").len(), 2);
}

#[tokio::test]
async fn http_a_400_with_a_modern_error_means_modern() {
    let peer = serve(Arc::new(|s: Seen| {
        async move {
            match s.rpc() {
                "server/discover" => Reply::Json {
                    status: 400,
                    headers: Vec::new(),
                    body: json!({"jsonrpc": "2.0", "id": s.body["id"], "error": {"code": -32022,
                        "message": "Unsupported protocol version",
                        "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}}),
                },
                _ => {
                    assert_eq!(s.header("mcp-protocol-version"), Some("2026-07-28"));
                    Reply::json(json!({"jsonrpc": "2.0", "id": s.body["id"],
                        "result": {"resultType": "complete", "tools": []}}))
                }
            }
        }
        .boxed()
    }))
    .await;
    let era = http_era(&peer).await.unwrap();
    assert!(!era.is_legacy(), "{era:?}");
    assert!(peer.posts("initialize").is_empty());
}

#[tokio::test]
async fn http_auth_and_server_errors_are_errors() {
    for status in [401u16, 403, 500, 503] {
        let peer = serve(http_legacy(move || Reply::Json {
            status,
            headers: vec![("www-authenticate".into(), "Bearer".into())],
            // Even a legacy-looking JSON-RPC body does not make it "legacy".
            body: json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "no"}}),
        }))
        .await;
        let err = http_era(&peer).await.unwrap_err();
        assert!(
            matches!(&err, ClientError::Transport(TransportError::Http { status: s, .. }) if *s == status),
            "{status}: {err}"
        );
        assert!(peer.posts("initialize").is_empty(), "{status}");
    }
}

#[tokio::test]
async fn a_remembered_verdict_that_fails_is_probed_again() {
    use std::sync::atomic::{AtomicBool, Ordering};
    // The endpoint is modern at first, then replaced by a 2025-11-25 server.
    let legacy_now = Arc::new(AtomicBool::new(false));
    let flag = legacy_now.clone();
    let legacy_script = http_legacy(|| Reply::Status(400));
    let peer = serve(Arc::new(move |s: Seen| {
        if flag.load(Ordering::SeqCst) {
            // A legacy server answers a modern request without a session with a bare 400.
            if s.header("mcp-session-id").is_none() && s.rpc() != "initialize" {
                return async { Reply::Status(400) }.boxed();
            }
            return legacy_script(s);
        }
        async move {
            let result = match s.rpc() {
                "server/discover" => {
                    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                    "capabilities": {}, "ttlMs": 0, "cacheScope": "private"})
                }
                _ => json!({"resultType": "complete", "tools": []}),
            };
            Reply::json(json!({"jsonrpc": "2.0", "id": s.body["id"], "result": result}))
        }
        .boxed()
    }))
    .await;
    let first = builder().connect_http(&peer.url()).unwrap();
    assert!(!first.era().await.unwrap().is_legacy());
    legacy_now.store(true, Ordering::SeqCst);
    // A new client trusts the remembered verdict, sees the bare 400, and probes again.
    let second = builder().connect_http(&peer.url()).unwrap();
    assert_eq!(second.list_tools().await.unwrap().len(), 1);
    assert!(second.era().await.unwrap().is_legacy());
    assert_eq!(peer.posts("server/discover").len(), 2);
    assert_eq!(peer.posts("initialize").len(), 1);
}
