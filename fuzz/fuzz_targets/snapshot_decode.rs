//! Fuzz target `snapshot_decode`: see `matchbook_tests::fuzz::snapshot_decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| matchbook_tests::fuzz::snapshot_decode(data));
