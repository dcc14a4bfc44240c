//! The HTTP check layers, each mounted alone in an axum app in front of plain handlers.

use super::client::send;
use axum::routing::post;
use http::StatusCode;
use std::time::Duration;
use sterna::server::http::OriginPolicy;
use sterna::server::http::layers::{BodyLimitLayer, OriginLayer, TimeoutLayer};

async fn serve(app: axum::Router) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (addr, handle)
}

fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[tokio::test]
async fn origin_layer_alone_guards_any_route() {
    let app = axum::Router::new()
        .route("/mcp", post(|| async { "hello" }))
        .layer(OriginLayer::new(OriginPolicy::Localhost));
    let (addr, handle) = serve(app).await;
    let evil = send(
        addr,
        "POST",
        &h(&[("origin", "http://evil.example.com")]),
        "",
    )
    .await;
    assert_eq!(evil.status, StatusCode::FORBIDDEN);
    assert_eq!(evil.code(), -32600);
    let ok = send(addr, "POST", &h(&[("origin", "http://localhost:3000")]), "").await;
    assert_eq!((ok.status, ok.body.as_str()), (StatusCode::OK, "hello"));
    handle.abort();
}

#[tokio::test]
async fn timeout_and_limit_layers_alone() {
    let app = axum::Router::new()
        .route(
            "/mcp",
            post(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "late"
            }),
        )
        .layer(TimeoutLayer::new(Some(Duration::from_millis(100))));
    let (addr, handle) = serve(app).await;
    let r = send(addr, "POST", &[], "").await;
    assert_eq!(r.status, StatusCode::GATEWAY_TIMEOUT);
    handle.abort();

    let app = axum::Router::new()
        .route(
            "/mcp",
            post(|body: String| async move { body.len().to_string() }),
        )
        .layer(BodyLimitLayer::new(8));
    let (addr, handle) = serve(app).await;
    let r = send(addr, "POST", &[], "0123456789").await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    let r = send(addr, "POST", &[], "0123").await;
    assert_eq!((r.status, r.body.as_str()), (StatusCode::OK, "4"));
    handle.abort();
}
