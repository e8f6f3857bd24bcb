//! The level changes an engine reports when watched (`Engine::take_level_changes`, what the
//! runtime's book feed publishes) replayed into a copy of the books: after every command
//! the copy must be the engine's own L2 book, and a book's sequence must have risen by one
//! exactly when the command reported a change of it.

use std::collections::BTreeMap;

use super::*;
use matchbook::LevelChange;

/// The books as the reported changes built them.
pub(super) struct LevelMirror {
    levels: BTreeMap<(u16, Side, i64), (i64, u32)>,
    sequences: Vec<u64>,
    changes: Vec<LevelChange>,
}

impl LevelMirror {
    /// Starts watching `engine`'s levels from the books it has now.
    pub(super) fn start(engine: &mut Engine) -> Self {
        engine.watch_levels(true);
        let mut levels = BTreeMap::new();
        let mut sequences = Vec::new();
        for i in 0..engine.instruments().len() {
            let inst = InstrumentId(i as u16);
            let view = engine.book_levels(inst, usize::MAX).expect("book");
            for (side, side_levels) in [(Side::Buy, &view.bids), (Side::Sell, &view.asks)] {
                for l in side_levels {
                    let count = l.number_of_orders;
                    levels.insert((inst.0, side, l.price.0), (l.amount.0, count));
                }
            }
            sequences.push(view.sequence);
        }
        Self {
            levels,
            sequences,
            changes: Vec::new(),
        }
    }

    /// Applies the changes of the command just applied and compares with the engine.
    pub(super) fn check(&mut self, engine: &mut Engine) -> Result<(), TestCaseError> {
        self.changes.clear();
        engine.take_level_changes(&mut self.changes);
        let mut touched = vec![false; self.sequences.len()];
        for c in &self.changes {
            touched[usize::from(c.instrument.0)] = true;
            let key = (c.instrument.0, c.side, c.price.0);
            if c.amount.0 == 0 {
                prop_assert_eq!(c.orders, 0, "an empty level holds no order");
                self.levels.remove(&key);
            } else {
                self.levels.insert(key, (c.amount.0, c.orders));
            }
        }
        for (i, was) in self.sequences.iter_mut().enumerate() {
            let inst = InstrumentId(i as u16);
            let view = engine.book_levels(inst, usize::MAX).expect("book");
            let risen = u64::from(touched[i]);
            prop_assert_eq!(view.sequence, *was + risen, "book {} sequence", i);
            *was = view.sequence;
            for (side, want) in [(Side::Buy, &view.bids), (Side::Sell, &view.asks)] {
                let want: Vec<(i64, i64, u32)> = (want.iter())
                    .map(|l| (l.price.0, l.amount.0, l.number_of_orders))
                    .collect();
                let mut got: Vec<(i64, i64, u32)> = (self.levels.iter())
                    .filter(|((b, s, _), _)| *b == inst.0 && *s == side)
                    .map(|((_, _, p), (a, n))| (*p, *a, *n))
                    .collect();
                if side == Side::Buy {
                    got.reverse();
                }
                prop_assert_eq!(got, want, "book {} {:?} after {:?}", i, side, &self.changes);
            }
        }
        Ok(())
    }
}
