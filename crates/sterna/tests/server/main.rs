//! End-to-end tests of the server over the stream (stdio) transport, with raw JSON-RPC
//! lines, every response validated against the official 2026-07-28 schema.

#![allow(unreachable_pub, missing_docs, dead_code)]

mod fixture;
mod skills_dir;
mod wire;

mod capabilities;
mod hardening;
mod legacy;
mod mrtr_flows;
mod protocol;
mod quotas;
mod skills;
mod skills_load;
mod state_security;
mod stored_state;
mod tasks;
mod tasks_takeover;
mod tasks_waiting;
