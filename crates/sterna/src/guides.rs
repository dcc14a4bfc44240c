//! Guides in depth. Each is a Markdown file in `crates/sterna/docs/`, and every Rust
//! code block in it is compiled (and, unless marked `no_run`, run) as a doc test.
//!
//! * [`migration`]: from push-style `elicitation/create` (2025) to MRTR, before and after.
//! * [`security`]: the security model of `requestState`, key management, single use.
//! * [`client`]: the client, from `run` to `start`/`resume`, eras, OAuth and HTTPS.
//! * [`deployment`]: keys, replicas behind nginx, Redis, legacy clients, key rotation.
//! * [`extending`]: the core and the wings around it; adding an era or an extension.

#[doc = include_str!("../docs/migration.md")]
pub mod migration {}

#[doc = include_str!("../docs/security.md")]
pub mod security {}

#[doc = include_str!("../docs/client.md")]
pub mod client {}

#[cfg(feature = "http")]
#[doc = include_str!("../docs/deployment.md")]
pub mod deployment {}

#[doc = include_str!("../docs/extending.md")]
pub mod extending {}
