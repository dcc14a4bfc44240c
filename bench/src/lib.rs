//! Shared pieces of the benchmark binaries (not published): an incremental reader of
//! server-sent events and the checks of the 2025-11-25 push flow's messages.

pub mod legacy;
pub mod sse;
