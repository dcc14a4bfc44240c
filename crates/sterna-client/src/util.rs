//! Small helpers: random bytes from the operating system, the clock in seconds.

use std::time::{SystemTime, UNIX_EPOCH};

/// Fills `buf` with random bytes from the operating system.
pub(crate) fn fill_random(buf: &mut [u8]) {
    getrandom::fill(buf).expect("the operating system provides random bytes");
}

/// Seconds since the Unix epoch (0 for a clock before it).
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
