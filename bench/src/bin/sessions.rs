//! Legacy (2025-11-25) HTTP sessions opened and abandoned return their memory: opens N
//! sessions through `McpService` in process (each `initialize`, `notifications/initialized`
//! and a `tools/list`), lets them expire, and prints the heap bytes in use (counted by
//! the allocator, so freed memory counts as freed whatever the allocator keeps) before,
//! with the sessions open, and after they expired.
//!
//! ```text
//! sessions [N]      (default 10000)
//! ```

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;
use std::time::Duration;
use sterna::server::Server;
use sterna::server::http::{HttpConfig, McpService, MemorySessionStore, SessionConfig};
use sterna::server::state::StateKeys;
use sterna::server::{Context, NoArgs, Tool};
use tower_service::Service;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn live_bytes(region: &Region<'_, System>) -> i64 {
    let s = region.change();
    s.bytes_allocated as i64 - s.bytes_deallocated as i64 + s.bytes_reallocated as i64
}

async fn post(
    svc: &mut McpService,
    session: Option<&str>,
    body: &str,
) -> (Option<String>, Vec<u8>) {
    let mut req = http::Request::post("http://127.0.0.1/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(s) = session {
        req = req
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let req = req
        .body(Full::new(Bytes::from(body.to_owned())))
        .expect("valid");
    let resp = svc.call(req).await.expect("infallible");
    let id = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (
        id,
        resp.into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes()
            .to_vec(),
    )
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let server = Server::builder("sessions", "1")
            .state_keys(StateKeys::ephemeral())
            .tool(Tool::new("echo").description("echo").handler(|_c: Context, _: NoArgs| async { "x" }))
            .build()
            .expect("valid");
        let idle = Duration::from_millis(1500);
        let store = std::sync::Arc::new(MemorySessionStore::with_capacity(n + 10));
        let config = HttpConfig::default().sessions(SessionConfig::new().idle(idle).store(store));
        let mut svc = McpService::new(server, config);
        // Warm up (one session, expired) so lazily built parts are not counted.
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"bench","version":"1"}}}"#;
        post(&mut svc, None, init).await;
        let region = Region::new(GLOBAL);
        let before = live_bytes(&region);
        for i in 0..n {
            let (id, body) = post(&mut svc, None, init).await;
            let id = id.unwrap_or_else(|| panic!("no session id at {i}: {}", String::from_utf8_lossy(&body)));
            post(&mut svc, Some(&id), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
            post(&mut svc, Some(&id), r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).await;
        }
        let open = live_bytes(&region);
        let live_open = svc.live_sessions();
        tokio::time::sleep(idle + Duration::from_millis(1100)).await;
        // Any use sweeps expired sessions (the store at most once a second).
        post(&mut svc, Some("gone"), r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await;
        let live_after = svc.live_sessions();
        let after = live_bytes(&region);
        println!(
            "{n} sessions: heap in use {before} B before, {open} B open ({} B per session, {live_open} live), {after} B after expiry ({live_after} live)",
            (open - before) / n as i64
        );
    });
}
