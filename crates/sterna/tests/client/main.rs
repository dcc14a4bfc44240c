//! The client: the MRTR round driver against a scripted server, and against real sterna
//! servers in process and over HTTP.

#![allow(unreachable_pub, missing_docs, dead_code)]

#[path = "../server/fixture.rs"]
mod fixture;
mod scripted;

mod driver;
mod end_to_end;
mod hostile;
