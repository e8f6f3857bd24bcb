//! Fuzz target `journal_decode`: see `matchbook_tests::fuzz::journal_decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| matchbook_tests::fuzz::journal_decode(data));
