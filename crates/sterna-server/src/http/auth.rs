//! Authorization at the resource server: one [`AuthLayer`] in front of the endpoint,
//! any [`Authenticator`] behind it.
//!
//! * [`JwtValidator`] (feature `jwt`, on by default): JWT access tokens (RFC 9068)
//!   checked against the issuer's JWKS, fetched over HTTP(S) and cached with rotation.
//! * [`Introspection`]: tokens the authorization server vouches for (RFC 7662).
//! * [`BearerTokens`]: a fixed map, for demos and tests.
//!
//! The layer answers `401` with `WWW-Authenticate: Bearer resource_metadata="…",
//! scope="…"` (and `error="invalid_token"` when a token was presented and refused),
//! `403 insufficient_scope` when the [`ScopePolicy`] asks for more than the token holds,
//! and serves the [`ResourceMetadata`] document (RFC 9728) through
//! [`HttpServer`](super::HttpServer). The principal of a token is `<iss>#<sub>`: every
//! `requestState` is bound to it; handlers see what the token granted through
//! [`Context::principal`](crate::server::Context::principal)`().grant()`
//! ([`AccessGrant`](crate::server::AccessGrant)). No token is ever logged.
//!
//! ```no_run
//! # async fn run(server: sterna_server::Server) -> Result<(), Box<dyn std::error::Error>> {
//! use sterna_server::http::HttpServer;
//! use sterna_server::http::auth::{AuthLayer, JwtValidator, ResourceMetadata, ScopePolicy};
//! let (resource, issuer) = ("http://127.0.0.1:3000/mcp", "http://127.0.0.1:4000");
//! let auth = AuthLayer::new(JwtValidator::builder(resource).issuer(issuer).build()?)
//!     .resource_metadata(ResourceMetadata::new(resource, issuer)?.scopes_supported(["mcp:read", "mcp:write"]))
//!     .scopes(ScopePolicy::new().always(["mcp:read"]).tool("provision_database", ["mcp:write"]));
//! HttpServer::new(server).auth(auth).serve("127.0.0.1:3000".parse()?).await?;
//! # Ok(()) }
//! ```
//!
//! Tokens bound to the client's key (DPoP, RFC 9449) are accepted with a fresh proof per
//! request when the layer has a [`Dpop`] configuration (feature `jwt`): allowed next to
//! bearer tokens, or required. A bound token is never accepted as a bearer token. Used
//! proofs are remembered in a [`ProofReplayCache`] ([`MemoryProofCache`], or one shared by
//! a fleet). The layer reads `Authorization` once ([`Presented`]) and hands the token to
//! the [`Authenticator`].
//!
//! Validators reach the authorization server through [`HttpFetch`]; the default
//! [`HyperFetcher`] speaks plain HTTP to loopback only, and HTTPS with
//! [`HyperFetcher::https`] (feature `tls`) or a TLS connector of your own.

#[cfg(feature = "jwt")]
mod alg;
mod challenge;
mod claims;
mod credentials;
mod discovery;
#[cfg(feature = "jwt")]
mod dpop;
mod error;
mod fetch;
mod introspection;
#[cfg(feature = "jwt")]
mod jwks;
#[cfg(feature = "jwt")]
mod jwt;
mod layer;
mod metadata;
mod proof_cache;
mod request;
mod scope;
mod static_tokens;

#[cfg(feature = "jwt")]
pub use alg::SigningAlg;
pub use credentials::{Presented, TokenScheme, bearer_token};
#[cfg(feature = "jwt")]
pub use dpop::{Dpop, DpopBuilder, DpopNonces};
pub use error::{
    AuthError, ConfigError, DocumentProblem, ProofRejection, RequestProblem, TokenRejection,
    Unavailable,
};
pub use fetch::{FetchError, HttpFetch, HyperFetcher};
pub use introspection::{Introspection, IntrospectionBuilder};
#[cfg(feature = "jwt")]
pub use jwt::{JwtValidator, JwtValidatorBuilder};
pub(crate) use layer::ScopeCheck;
pub use layer::{AuthLayer, AuthService, Authenticator};
pub use metadata::{MetadataLayer, MetadataService, NotFound, ResourceMetadata};
pub use proof_cache::{MemoryProofCache, ProofCacheError, ProofReplayCache, ProofUse};
pub use scope::ScopePolicy;
pub use static_tokens::BearerTokens;
