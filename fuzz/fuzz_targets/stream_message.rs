//! Fuzz target `stream_message`: see `matchbook_tests::fuzz::stream_message`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| matchbook_tests::fuzz::stream_message(data));
