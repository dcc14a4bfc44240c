//! What the SDK logs, captured whole. Logging is process-wide (`tracing` caches each
//! call site's interest for the whole process), so the capture gets a test binary of its
//! own and a global subscriber: no other test's thread can race it.

#![allow(unreachable_pub, missing_docs, dead_code)]

#[path = "../http/client.rs"]
mod client;
#[path = "../server/fixture.rs"]
mod fixture;
#[path = "../http/idp.rs"]
mod idp;
#[path = "../http/protected.rs"]
mod protected;

mod capture;
