#![no_main]
//! `sterna::__fuzz::state_open`: see its documentation for the invariants.

libfuzzer_sys::fuzz_target!(|data: &[u8]| sterna::__fuzz::state_open(data));
