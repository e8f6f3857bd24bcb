//! Fuzz target `parse_inputs`: see `matchbook_tests::fuzz::parse_inputs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| matchbook_tests::fuzz::parse_inputs(data));
