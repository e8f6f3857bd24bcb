//! An engine that does nothing: timing it measures the harness itself (the loop, the virtual
//! call, clearing the outcome), the floor under every other engine's figures.

use super::{Level, Outcome, Venue};
use crate::script::{Line, Op};

/// Accepts every command and keeps nothing.
#[derive(Debug, Default)]
pub struct Null {
    commands: u64,
}

impl Venue for Null {
    fn name(&self) -> &'static str {
        "null"
    }

    fn apply(&mut self, line: &Line, _number: u32, out: &mut Outcome, _record: bool) {
        self.commands += 1;
        out.applied = !matches!(line.op, Op::Deposit { amount: 0, .. });
    }

    fn top(&self, _instrument: u16) -> (Level, Level) {
        (None, None)
    }
}
