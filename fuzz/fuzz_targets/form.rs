#![no_main]
//! `sterna::__fuzz::form`: see its documentation for the invariants.

libfuzzer_sys::fuzz_target!(|data: &[u8]| sterna::__fuzz::form(data));
