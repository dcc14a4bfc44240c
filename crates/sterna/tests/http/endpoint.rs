//! Methods, origins, headers, statuses.

use super::client::{call, meta, post, post_with, remove, send, set, start, std_headers};
use super::fixture::{server, server_with};
use http::StatusCode;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::Duration;
use sterna::server::http::{HttpConfig, OriginPolicy};
use tokio::io::AsyncWriteExt;

/// A change to a request's headers.
type Tweak = Box<dyn Fn(&mut Vec<(String, String)>)>;

#[tokio::test]
async fn methods_other_than_post_get_and_delete_are_refused() {
    // GET and DELETE belong to 2025-11-25 sessions: without one they are 400.
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    for m in ["PUT", "PATCH"] {
        let r = send(s.addr, m, &[], "").await;
        assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{m}");
        assert_eq!(r.headers["allow"], "GET, POST, DELETE");
    }
    let sse = [("accept".to_owned(), "text/event-stream".to_owned())];
    assert_eq!(
        send(s.addr, "GET", &sse, "").await.status,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        send(s.addr, "DELETE", &[], "").await.status,
        StatusCode::BAD_REQUEST
    );
    s.shutdown().await;
}

#[tokio::test]
async fn foreign_origins_and_hosts_are_forbidden() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta(json!({}))}});
    let r = post_with(s.addr, &body, |h| {
        set(h, "origin", "http://evil.example.com")
    })
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = post_with(s.addr, &body, |h| set(h, "host", "evil.example.com")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = post_with(s.addr, &body, |h| set(h, "origin", "http://localhost:5173")).await;
    assert_eq!(r.status, StatusCode::OK);
    s.shutdown().await;
    // An explicit allow-list.
    let (srv, _) = server();
    let cfg =
        HttpConfig::default().origins(OriginPolicy::Allow(vec!["https://app.example.com".into()]));
    let s = start(srv, cfg, None).await;
    assert_eq!(
        post_with(s.addr, &body, |h| set(
            h,
            "origin",
            "https://app.example.com"
        ))
        .await
        .status,
        StatusCode::OK
    );
    assert_eq!(
        post_with(s.addr, &body, |h| set(
            h,
            "origin",
            "https://evil.example.com"
        ))
        .await
        .status,
        StatusCode::FORBIDDEN
    );
    s.shutdown().await;
}

/// `Origin: null` (a sandboxed iframe, a `file:` page, a redirect across origins) is not
/// a local origin: the default policy refuses it like any other.
#[tokio::test]
async fn a_null_origin_is_forbidden_on_localhost() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta(json!({}))}});
    let r = post_with(s.addr, &body, |h| set(h, "origin", "null")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(r.code(), -32600);
    let r = post_with(s.addr, &body, |h| set(h, "origin", "http://127.0.0.1:8080")).await;
    assert_eq!(r.status, StatusCode::OK);
    s.shutdown().await;
}

#[tokio::test]
async fn notifications_get_202_and_responses_400() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let r = post(
        s.addr,
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    )
    .await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert!(r.body.is_empty());
    let r = post(s.addr, &json!({"jsonrpc": "2.0", "id": 5, "result": {}})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = send(s.addr, "POST", &std_headers(&json!({})), "{nope").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.code(), -32700);
    s.shutdown().await;
}

#[tokio::test]
async fn standard_header_errors_are_minus_32020_with_400() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let body = call(7, "add", json!({"a": 1, "b": 2}));
    let cases: Vec<(&str, Tweak)> = vec![
        (
            "no version header",
            Box::new(|h| remove(h, "mcp-protocol-version")),
        ),
        (
            "version header differs from _meta",
            Box::new(|h| set(h, "mcp-protocol-version", "2025-11-25")),
        ),
        ("no Mcp-Method", Box::new(|h| remove(h, "mcp-method"))),
        (
            "Mcp-Method differs",
            Box::new(|h| set(h, "mcp-method", "tools/list")),
        ),
        (
            "Mcp-Method case differs",
            Box::new(|h| set(h, "mcp-method", "TOOLS/CALL")),
        ),
        ("no Mcp-Name", Box::new(|h| remove(h, "mcp-name"))),
        (
            "Mcp-Name differs",
            Box::new(|h| set(h, "mcp-name", "other")),
        ),
        (
            "Mcp-Name bad base64",
            Box::new(|h| set(h, "mcp-name", "=?base64?%%%?=")),
        ),
    ];
    for (what, tweak) in cases {
        let r = post_with(s.addr, &body, |h| tweak(h)).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{what}: {}", r.body);
        assert_eq!(r.code(), -32020, "{what}");
        assert_eq!(r.json()["id"], 7, "{what}: errors keep the id");
    }
    // Header names are case-insensitive, surrounding whitespace is trimmed, and the
    // base64 sentinel is decoded.
    let r = post_with(s.addr, &body, |h| {
        set(h, "MCP-METHOD", " tools/call ");
        set(h, "mcp-name", &format!("=?base64?{}?=", "YWRk"));
    })
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // A version header naming an unsupported version that matches _meta: -32022.
    let mut body = call(8, "add", json!({"a": 1, "b": 2}));
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let r = post_with(s.addr, &body, |h| {
        set(h, "mcp-protocol-version", "v999.0.0")
    })
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.code(), -32022);
    assert_eq!(r.json()["error"]["data"]["requested"], "v999.0.0");
    // Mcp-Session-Id is ignored and never minted.
    let r = post_with(s.addr, &call(9, "add", json!({"a": 2, "b": 2})), |h| {
        set(h, "mcp-session-id", "abc")
    })
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.headers.get("mcp-session-id").is_none());
    s.shutdown().await;
}

/// A body that names its target twice (`"name":"add","name":"other"`) is never matched
/// against `Mcp-Name` by one of its readings, nor is a body whose params cannot be read
/// for another reason: each is refused with its params' own error (`-32602`, saying what
/// is wrong), whatever `Mcp-Name` says — not with a header mismatch against an empty name.
#[tokio::test]
async fn unreadable_params_of_a_named_method_are_refused_for_what_they_are() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let body = call(4, "add", json!({"a": 1, "b": 2}));
    let text = body.to_string();
    let twice = text.replacen(r#""name":"add""#, r#""name":"add","name":"other""#, 1);
    let bad_state = text.replacen(r#""name":"add""#, r#""name":"add","requestState":5"#, 1);
    let cases = [
        (&twice, "add", "duplicate field `name`"),
        (&twice, "other", "duplicate field `name`"),
        (&bad_state, "add", "expected a string"),
    ];
    for (raw, name, says) in cases {
        assert_ne!(raw, &text);
        let mut h = std_headers(&body);
        set(&mut h, "mcp-name", name);
        let r = send(s.addr, "POST", &h, raw).await;
        assert_eq!(r.code(), -32602, "{}", r.body);
        let message = r.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains(says), "{message}");
        assert_eq!(r.json()["id"], 4);
    }
    s.shutdown().await;
}

/// A header the server reads once is refused when given twice, in either order: an
/// intermediary reading the last value and this server reading the first would disagree on
/// which tool runs, which revision, which session (one reading, one truth).
#[tokio::test]
async fn an_mcp_header_given_twice_is_refused() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let body = call(5, "add", json!({"a": 1, "b": 2}));
    let twice = |name: &'static str, first: &'static str, second: &'static str| {
        move |h: &mut Vec<(String, String)>| {
            set(h, name, first);
            h.push((name.to_owned(), second.to_owned()));
        }
    };
    let cases = [
        (
            "Mcp-Name, then another",
            twice("mcp-name", "add", "mirrored"),
        ),
        (
            "Mcp-Name, another first",
            twice("mcp-name", "mirrored", "add"),
        ),
        (
            "Mcp-Method",
            twice("mcp-method", "tools/call", "tools/list"),
        ),
        (
            "MCP-Protocol-Version",
            twice("mcp-protocol-version", "2026-07-28", "2025-11-25"),
        ),
        (
            "MCP-Protocol-Version, old first",
            twice("mcp-protocol-version", "2025-11-25", "2026-07-28"),
        ),
        ("Mcp-Param-*", twice("mcp-param-region", "x", "y")),
        ("Mcp-Session-Id", twice("mcp-session-id", "a", "b")),
    ];
    for (what, tweak) in cases {
        let r = post_with(s.addr, &body, tweak).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{what}: {}", r.body);
        let message = r.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains("more than once"), "{what}: {message}");
    }
    // Other headers may repeat as HTTP allows (a list-valued Accept split in two lines).
    let r = post_with(s.addr, &body, |h| {
        set(h, "accept", "application/json");
        h.push(("accept".to_owned(), "text/event-stream".to_owned()));
    })
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    s.shutdown().await;
}

/// A `tasks/*` request whose `taskId` is not a string, or is missing, is refused with its
/// params' own error (`-32602` naming `taskId`), whatever `Mcp-Name` says — not with a
/// header mismatch against a body that "names none".
#[tokio::test]
async fn a_task_id_that_cannot_be_read_is_refused_for_what_it_is() {
    use sterna::server::state::StateKeys;
    use sterna::server::tasks::TaskSupport;
    use sterna::server::{Context, NoArgs, Server, Tool};
    let srv = Server::builder("tasks-http", "1")
        .state_keys(StateKeys::ephemeral())
        .tool(
            Tool::new("later")
                .task(TaskSupport::Optional)
                .handler(|_: Context, _: NoArgs| async { "done" }),
        )
        .build()
        .unwrap();
    let s = start(srv, HttpConfig::default(), None).await;
    let caps = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    for (params, header) in [
        (json!({"taskId": 5, "_meta": meta(caps.clone())}), "5"),
        (json!({"_meta": meta(caps.clone())}), "x"),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tasks/get", "params": params});
        let mut h = std_headers(&body);
        set(&mut h, "mcp-name", header);
        let r = send(s.addr, "POST", &h, &body.to_string()).await;
        assert_eq!(r.code(), -32602, "{}", r.body);
        let message = r.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains("taskId"), "{message}");
    }
    s.shutdown().await;
}

#[tokio::test]
async fn mirrored_parameters_are_checked_against_the_body() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let args = json!({"region": "eu west é", "limit": 42, "verbose": true});
    let ok = |h: &mut Vec<(String, String)>| {
        set(
            h,
            "mcp-param-region",
            &sterna::types::header::encode("eu west é"),
        );
        set(h, "Mcp-Param-Limit", "42");
        set(h, "mcp-param-verbose", "true");
    };
    let r = post_with(s.addr, &call(1, "mirrored", args.clone()), ok).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "eu west é Some(42) Some(true)"
    );
    let cases: Vec<(&str, Tweak)> = vec![
        (
            "missing header for a present argument",
            Box::new(|h| remove(h, "mcp-param-limit")),
        ),
        (
            "different string",
            Box::new(|h| set(h, "mcp-param-region", "us-east-1")),
        ),
        (
            "different number",
            Box::new(|h| set(h, "mcp-param-limit", "43")),
        ),
        (
            "not a number",
            Box::new(|h| set(h, "mcp-param-limit", "forty-two")),
        ),
        (
            "different boolean",
            Box::new(|h| set(h, "mcp-param-verbose", "false")),
        ),
        (
            "bad base64",
            Box::new(|h| set(h, "mcp-param-region", "=?base64?***?=")),
        ),
    ];
    for (what, tweak) in cases {
        let r = post_with(s.addr, &call(2, "mirrored", args.clone()), |h| {
            ok(h);
            tweak(h);
        })
        .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{what}: {}", r.body);
        assert_eq!(r.code(), -32020, "{what}");
    }
    // Absent or null arguments need no header; numbers compare numerically.
    let r = post_with(
        s.addr,
        &call(3, "mirrored", json!({"region": "x", "limit": null})),
        |h| set(h, "mcp-param-region", "x"),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = post_with(
        s.addr,
        &call(4, "mirrored", json!({"region": "x", "limit": 7})),
        |h| {
            set(h, "mcp-param-region", "x");
            set(h, "mcp-param-limit", "7.0");
        },
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // Raw non-ASCII bytes in a header value are invalid characters.
    let r = post_with(s.addr, &call(5, "mirrored", json!({"region": "x"})), |h| {
        set(h, "mcp-param-region", "é-raw")
    })
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    s.shutdown().await;
}

#[tokio::test]
async fn meta_capability_and_method_errors_have_their_statuses() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let r = post(
        s.addr,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}),
    )
    .await;
    assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, -32602));
    let mut body = json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": meta(json!({}))}});
    body["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/protocolVersion");
    let r = post(s.addr, &body).await;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::BAD_REQUEST, -32602),
        "missing field wins over header checks"
    );
    let mut needs = call(3, "needs_sampling", json!({}));
    needs["params"]["_meta"] = meta(json!({}));
    let r = post(s.addr, &needs).await;
    assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, -32021));
    assert_eq!(
        r.json()["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
    for m in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "unknown/method",
    ] {
        let r = post(
            s.addr,
            &json!({"jsonrpc": "2.0", "id": 4, "method": m, "params": {"_meta": meta(json!({}))}}),
        )
        .await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, -32601), "{m}");
        assert_eq!(r.json()["id"], 4);
    }
    // Ordinary errors (an unknown tool) are 200 with the JSON-RPC error.
    let r = post(s.addr, &call(5, "no_such_tool", json!({}))).await;
    assert_eq!((r.status, r.code()), (StatusCode::OK, -32602));
    s.shutdown().await;
}

#[tokio::test]
async fn oversized_bodies_get_413() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default().max_body(1024), None).await;
    let big = call(1, "add", json!({"a": 1, "b": 2, "pad": "x".repeat(4096)}));
    assert_eq!(
        post(s.addr, &big).await.status,
        StatusCode::PAYLOAD_TOO_LARGE
    );
    assert_eq!(
        post(s.addr, &call(2, "add", json!({"a": 1, "b": 2})))
            .await
            .status,
        StatusCode::OK
    );
    s.shutdown().await;
}

#[tokio::test]
async fn wrong_media_types_are_refused() {
    let (srv, _) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let body = call(1, "add", json!({"a": 1, "b": 2}));
    let r = post_with(s.addr, &body, |h| set(h, "content-type", "text/plain")).await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let r = post_with(s.addr, &body, |h| set(h, "accept", "text/html")).await;
    assert_eq!(r.status, StatusCode::NOT_ACCEPTABLE);
    s.shutdown().await;
}

#[tokio::test]
async fn a_client_that_disconnects_cancels_its_request() {
    let (srv, c) = server();
    let s = start(srv, HttpConfig::default(), None).await;
    let body = call(1, "slow", json!({})).to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in std_headers(&call(1, "slow", json!({}))) {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut tcp = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    tcp.write_all(head.as_bytes()).await.unwrap();
    tcp.write_all(body.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(c.slow_dropped.load(Ordering::SeqCst), 0, "still running");
    drop(tcp);
    for _ in 0..50 {
        if c.slow_dropped.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        c.slow_dropped.load(Ordering::SeqCst),
        1,
        "the handler was stopped"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn requests_that_run_too_long_get_504() {
    let (srv, c) = server();
    let s = start(
        srv,
        HttpConfig::default().timeout(Some(Duration::from_millis(200))),
        None,
    )
    .await;
    let r = post(s.addr, &call(1, "slow", json!({}))).await;
    assert_eq!(r.status, StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(r.code(), -32603);
    assert_eq!(c.slow_dropped.load(Ordering::SeqCst), 1);
    s.shutdown().await;
}

#[tokio::test]
async fn mrtr_over_http_with_a_fresh_connection_per_round() {
    let (srv, c) = server_with(|b| b);
    let s = start(srv, HttpConfig::default(), None).await;
    let r1 = post(
        s.addr,
        &call(1, "provision_database", json!({"name": "orders"})),
    )
    .await;
    assert_eq!(r1.status, StatusCode::OK);
    assert_eq!(r1.headers["content-type"], "application/json");
    let res = r1.json()["result"].clone();
    assert_eq!(res["resultType"], "input_required");
    let mut retry = call(2, "provision_database", json!({"name": "orders"}));
    retry["params"]["inputResponses"] =
        json!({"pick_region": {"action": "accept", "content": {"region": "eu-west-1"}}});
    retry["params"]["requestState"] = res["requestState"].clone();
    let r2 = post(s.addr, &retry).await;
    assert_eq!(
        r2.json()["result"]["content"][0]["text"],
        "Created orders in eu-west-1"
    );
    assert_eq!(c.provisioned.load(Ordering::SeqCst), 1);
    // Tampered: -32602, HTTP 200 (the error is the server's, not the transport's).
    retry["params"]["requestState"] = json!(format!(
        "{}-TAMPERED",
        res["requestState"].as_str().unwrap()
    ));
    let r3 = post(s.addr, &retry).await;
    assert_eq!((r3.status, r3.code()), (StatusCode::OK, -32602));
    s.shutdown().await;
}

#[tokio::test]
async fn the_service_mounts_in_axum() {
    let (srv, _) = server();
    let app = axum::Router::new().route_service(
        "/mcp",
        sterna::server::http::McpService::new(srv, HttpConfig::default()),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = tokio::spawn(async move { axum::serve(listener, app).await });
    let r = post(addr, &call(1, "add", json!({"a": 20, "b": 22}))).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "42");
    handle.abort();
}
