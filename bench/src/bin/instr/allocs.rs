//! The heap allocations the endpoint makes per operation: only what happens while the
//! harness awaits the service (its `call`, and the polling of its response bodies, during
//! which the current-thread runtime also runs the server's tasks) is counted; the harness's
//! own work (formatting requests, checking responses) is not.

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;
use std::cell::Cell;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

thread_local! {
    static COUNTED: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// Awaits `f`, counting the allocations made meanwhile as the endpoint's.
pub(crate) async fn endpoint<F: Future>(f: F) -> F::Output {
    let region = Region::new(GLOBAL);
    let out = f.await;
    let s = region.change();
    let bytes = s.bytes_allocated as i64 + s.bytes_reallocated.max(0) as i64;
    COUNTED.with(|c| {
        let (n, b) = c.get();
        c.set((
            n + (s.allocations + s.reallocations) as u64,
            b + bytes as u64,
        ));
    });
    out
}

/// Allocations (a reallocation counts as one) and bytes allocated by the endpoint so far.
pub(crate) fn counted() -> (u64, u64) {
    COUNTED.with(Cell::get)
}
