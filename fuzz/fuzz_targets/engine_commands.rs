//! Fuzz target `engine_commands`: see `matchbook_tests::fuzz::engine_commands`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| matchbook_tests::fuzz::engine_commands(data));
