#![no_main]
//! `sterna::__fuzz::header_value`: see its documentation for the invariants.

libfuzzer_sys::fuzz_target!(|data: &[u8]| sterna::__fuzz::header_value(data));
