//! The OAuth 2.1 client of MCP authorization (2026-07-28), for the Streamable HTTP
//! transport.
//!
//! On `401` the client reads the `WWW-Authenticate` challenge (`Bearer` or `DPoP`),
//! fetches the resource's protected-resource metadata (RFC 9728), the authorization
//! server's metadata (RFC 8414 / OpenID Connect Discovery, in the order MCP gives),
//! registers if it must (pre-registered credentials, a Client ID Metadata Document, or
//! dynamic registration with `application_type`), runs its grant and retries the request
//! with the token. Every identifier is compared as the exact string received; metadata
//! for another issuer or resource is refused, and so is an authorization response whose
//! `iss` (RFC 9207) or `state` is wrong. On `403 insufficient_scope` it re-authorizes for
//! the union of the scopes asked so far and the challenged ones (bounded). Tokens and
//! client registrations are kept per authorization server in a [`TokenStore`]; secrets
//! never reach the logs (their `Debug` output is redacted).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use sterna_client::Client;
//! use sterna_client::oauth::{FileStore, LoopbackRedirect, OAuth};
//! use sterna_client::transport::HttpTransport;
//!
//! let oauth = OAuth::authorization_code(LoopbackRedirect::bind()?.open_browser(true))
//!     .client_name("my-cli")
//!     .store(FileStore::new("/home/me/.config/my-cli/tokens.json"))
//!     .build();
//! let transport = HttpTransport::builder("https://mcp.example.com/mcp").oauth(oauth).build()?;
//! let client = Client::builder("my-cli", "1.0.0").build(transport);
//! let tools = client.list_tools().await?; // authorizes on the first 401
//! # let _ = tools; Ok(()) }
//! ```
//!
//! Grants: [`OAuth::authorization_code`] (with PKCE S256 and `resource`; the user's step
//! is an [`AuthorizationUi`]: [`LoopbackRedirect`] for CLIs, [`HeadlessRedirect`] for
//! tests), [`OAuth::client_credentials`] and [`OAuth::client_credentials_jwt`],
//! [`OAuth::workload_identity`] (JWT bearer) and [`OAuth::enterprise_managed`] (token
//! exchange, then JWT bearer). Any of them can bind tokens with DPoP
//! ([`OAuthBuilder::dpop`]).

mod browser;
mod builder;
mod challenge;
mod discovery;
mod engine;
mod error;
mod fetch;
mod file_store;
mod flow;
mod grants;
mod headless;
mod jose;
mod loopback;
mod metadata;
mod nonces;
pub(crate) mod pkce;
mod registration;
mod secret;
mod send;
mod store;
mod token;
mod ui;
mod urls;

pub use builder::{OAuth, OAuthBuilder};
pub use challenge::{Challenge, ChallengeError, parse_challenges};
pub use engine::IdentityAssertion;
pub use error::{
    DiscoveryError, GaveUp, HttpFailure, OAuthError, Rejection, ServerError, StoreError, UiError,
};
pub use file_store::FileStore;
pub use headless::HeadlessRedirect;
pub use jose::{ClientKey, DpopKey};
pub use loopback::LoopbackRedirect;
pub use metadata::{ResourceMetadata, ServerMetadata};
pub use secret::Secret;
pub use store::{ClientInfo, Credentials, MemoryStore, TokenStore, Tokens};
pub use ui::{AuthorizationRequest, AuthorizationResponse, AuthorizationUi};
