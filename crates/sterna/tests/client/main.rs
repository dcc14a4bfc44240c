//! The client: the MRTR round driver against a scripted server, and against real sterna
//! servers in process and over HTTP.

#![allow(unreachable_pub, missing_docs, dead_code)]

#[path = "../server/fixture.rs"]
mod fixture;
mod http_peer;
mod peer;
mod scripted;
#[path = "../server/skills_dir.rs"]
mod skills_dir;

mod busy;
mod child;
mod driver;
mod end_to_end;
mod era;
mod hostile;
mod legacy;
mod legacy_http;
mod meta_order;
mod skills;
mod skills_e2e;
mod tasks;
