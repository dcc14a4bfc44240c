//! Random bytes for values that are public and need only be unique: identifiers (flow ids,
//! stream ids, stored-state references, task ids, session and elicitation ids) and the
//! nonces of sealed states. They are the operating system's, drawn a block at a time per
//! thread and each byte handed out once, so that a request that needs one makes no system
//! call of its own. Secrets (keys, the DPoP nonce secret) take theirs from the operating
//! system directly ([`fill_random`](super::keys::fill_random)).
//!
//! A process that forks after a thread has drawn would hand its child the rest of that
//! thread's block: the child must `exec` (as [`std::process::Command`] does) before it
//! serves.

use std::cell::RefCell;

/// One draw from the operating system serves this many bytes.
const BLOCK: usize = 512;

struct Pool {
    bytes: [u8; BLOCK],
    /// How many bytes from the start were handed out (and wiped).
    used: usize,
}

thread_local! {
    static POOL: RefCell<Pool> = const { RefCell::new(Pool { bytes: [0; BLOCK], used: BLOCK }) };
}

/// Fills `buf` with random bytes for an identifier or a nonce; each byte is handed out
/// once, and wiped from the pool as it is.
pub(crate) fn fill_unique(buf: &mut [u8]) {
    if buf.len() > BLOCK / 4 {
        return super::keys::fill_random(buf);
    }
    POOL.with_borrow_mut(|pool| {
        if BLOCK - pool.used < buf.len() {
            super::keys::fill_random(&mut pool.bytes);
            pool.used = 0;
        }
        let taken = &mut pool.bytes[pool.used..pool.used + buf.len()];
        buf.copy_from_slice(taken);
        taken.fill(0);
        pool.used += buf.len();
    });
}

/// A random identifier of `N` bytes, URL-safe base64 without padding.
#[cfg(any(feature = "legacy", feature = "tasks"))]
pub(crate) fn random_id<const N: usize>() -> String {
    use base64::Engine;
    let mut b = [0u8; N];
    fill_unique(&mut b);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_drawn_in_a_row_differ_and_are_not_zero() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..3 * BLOCK {
            let mut id = [0u8; 16];
            fill_unique(&mut id);
            assert_ne!(id, [0u8; 16]);
            assert!(seen.insert(id), "an id came out twice");
        }
    }

    #[test]
    fn a_request_longer_than_the_pool_allows_is_served_whole() {
        let mut big = [0u8; BLOCK];
        fill_unique(&mut big);
        assert!(big.iter().filter(|b| **b == 0).count() < BLOCK / 16);
    }

    #[test]
    fn handed_out_bytes_do_not_stay_in_the_pool() {
        let mut id = [0u8; 16];
        fill_unique(&mut id);
        POOL.with_borrow(|pool| {
            assert!(pool.bytes[..pool.used].iter().all(|b| *b == 0));
        });
    }
}
