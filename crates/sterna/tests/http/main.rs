//! The Streamable HTTP endpoint over real TCP on 127.0.0.1: every status and error path.

#![allow(unreachable_pub, missing_docs, dead_code)]

mod client;
mod dpop;
#[path = "../server/fixture.rs"]
mod fixture;

mod auth;
mod deadlines;
mod endpoint;
mod h2;
mod hardening;
mod idp;
mod introspection;
mod jwks;
mod jwt;
mod layers;
mod legacy;
mod legacy_principals;
#[cfg(feature = "oauth")]
mod oauth;
#[cfg(feature = "oauth")]
mod oauth_loopback;
#[cfg(feature = "oauth")]
mod oauth_mock;
mod oidc;
mod protected;
mod quotas;
mod scopes;
mod shared_streams;
mod streams;
#[cfg(feature = "tls")]
mod tls;
