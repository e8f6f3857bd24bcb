//! The fuzz harnesses: what each cargo-fuzz target in `fuzz/` does with its input, kept
//! here so that every crash the fuzzer finds can be replayed as an ordinary test
//! (`tests/fuzz_regressions.rs` runs the committed corpus and regressions through them).
//! Each harness panics on a broken promise; anything else is a pass.

mod commands;
mod decode;
mod nesting;
mod parse;
mod rest;
mod stream;

pub use commands::{demo_state_after, engine_commands};
pub use decode::{journal_decode, snapshot_decode};
pub use parse::parse_inputs;
pub use rest::rest_request;
pub use stream::stream_message;

/// A harness: runs one input, panics on a broken promise.
pub type Harness = fn(&[u8]);

/// The harnesses by the name of their fuzz target.
pub const TARGETS: [(&str, Harness); 6] = [
    ("engine_commands", engine_commands),
    ("parse_inputs", parse_inputs),
    ("journal_decode", journal_decode),
    ("snapshot_decode", snapshot_decode),
    ("rest_request", rest_request),
    ("stream_message", stream_message),
];

/// Reads an input a byte or a word at a time; past its end everything reads as zero.
pub(crate) struct Input<'a> {
    bytes: &'a [u8],
}

impl<'a> Input<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub(crate) fn u8(&mut self) -> u8 {
        match self.bytes.split_first() {
            Some((&b, rest)) => {
                self.bytes = rest;
                b
            }
            None => 0,
        }
    }

    pub(crate) fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    pub(crate) fn i8(&mut self) -> i8 {
        self.u8() as i8
    }

    /// Up to `max` bytes, or until a zero byte (consumed).
    pub(crate) fn chunk(&mut self, max: usize) -> &'a [u8] {
        let window = &self.bytes[..max.min(self.bytes.len())];
        match window.iter().position(|&b| b == 0) {
            Some(end) => {
                self.bytes = &self.bytes[end + 1..];
                &window[..end]
            }
            None => {
                self.bytes = &self.bytes[window.len()..];
                window
            }
        }
    }

    /// Everything left.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.bytes)
    }
}
