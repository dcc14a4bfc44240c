//! Streamable HTTP, as 2026-07-28 defines it: one endpoint, POST only, stateless.
//!
//! * [`McpService`] is a `tower::Service` answering MCP POSTs; mount it in an axum
//!   `Router` with `route_service("/mcp", service)`, or serve it in one call with
//!   [`HttpServer`].
//! * Each request gets a JSON response, or an SSE stream when its handler emits progress
//!   or log notifications before the result (the result ends the stream).
//! * Headers are validated against the body in the order the conformance suite expects:
//!   `MCP-Protocol-Version` present (`-32020`), `_meta` well formed (`-32602`), the header
//!   equal to `_meta` (`-32020`), the version served (`-32022`), then `Mcp-Method`,
//!   `Mcp-Name` and `Mcp-Param-*` (`-32020`); all with HTTP 400. Unknown methods are 404.
//! * A client that disconnects cancels its request; `Mcp-Session-Id` is ignored.
//! * The HTTP checks (origin, content type, accept, body size, time) are
//!   [layers], usable on their own; [`McpService`] stacks them in front of the endpoint.
//! * [`HttpServer`] speaks HTTP/1.1 and HTTP/2 on one port (prior-knowledge h2c, or ALPN
//!   when it terminates TLS with [`HttpServer::tls`]); every bound holds per HTTP/2 stream.
//! * [`AuthLayer`] turns credentials into the [`Principal`](crate::server::Principal)
//!   every `requestState` is bound to: fixed tokens, JWT access tokens or introspection,
//!   with scopes, challenges and protected-resource metadata (see [`auth`]).

pub mod auth;
mod body;
mod caller;
mod config;
mod conn;
mod era;
mod forwarded;
mod headers;
mod in_flight;
pub mod layers;
#[cfg(feature = "legacy")]
mod legacy;
mod listen;
mod peer;
mod request_body;
mod respond;
mod routed;
mod serve;
mod served;
mod service;
#[cfg(feature = "tls")]
mod tls;

pub use auth::{AuthError, AuthLayer, AuthService, Authenticator, BearerTokens};
pub use body::McpBody;
pub use config::{DEFAULT_MAX_CONNECTIONS, DEFAULT_REQUESTS_PER_CLIENT, HttpConfig, OriginPolicy};
pub use forwarded::{
    BadForwardedFor, ForwardedHeader, InvalidProxy, TrustedProxies, UnknownForwardedHeader,
};
#[cfg(feature = "legacy")]
pub use legacy::{
    MemorySessionStore, MemoryStreamStore, SessionBus, SessionConfig, SessionError, SessionEvent,
    SessionLimits, SessionStore, StreamAppend, StreamEvent, StreamPage, StreamRead, StreamStore,
    StreamStoreError,
};
pub use peer::PeerAddr;
pub use serve::HttpServer;
pub use service::{McpService, ResponseFuture};

/// The era served over HTTP besides 2026-07-28 (the seam's registration).
#[cfg(feature = "legacy")]
fn eras(config: &HttpConfig) -> Option<Box<dyn era::HttpEra>> {
    Some(Box::new(legacy::LegacyHttp::new(
        config.sessions.clone(),
        config.keep_alive,
    )))
}

/// No era besides 2026-07-28 (built without `legacy`).
#[cfg(not(feature = "legacy"))]
fn eras(_: &HttpConfig) -> Option<Box<dyn era::HttpEra>> {
    None
}
