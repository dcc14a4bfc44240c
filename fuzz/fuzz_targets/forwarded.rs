#![no_main]
//! `sterna::__fuzz::forwarded`: see its documentation for the invariants.

libfuzzer_sys::fuzz_target!(|data: &[u8]| sterna::__fuzz::forwarded(data));
