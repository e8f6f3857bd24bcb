//! Fuzz target `rest_request`: see `matchbook_tests::fuzz::rest_request`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| matchbook_tests::fuzz::rest_request(data));
