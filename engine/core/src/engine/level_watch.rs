//! Which price levels each command changed, for a host that publishes book deltas (the
//! runtime's market stage, on its replica): noted where the book sequence is raised
//! (`Engine::book_changed`) and where an amended order leaves its level, then read back
//! with the amounts the levels hold after the command. Off by default: the matching
//! thread's engine pays one untaken branch per book change for it.

use super::Engine;
use crate::error::EngineError;
use crate::fixed::{Price, Qty};
use crate::ids::InstrumentId;
use crate::order::Side;

/// A price level as a command left it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LevelChange {
    /// The market.
    pub instrument: InstrumentId,
    /// The side of the book.
    pub side: Side,
    /// The level's price.
    pub price: Price,
    /// The amount the level shows now (0: the level is gone).
    pub amount: Qty,
    /// Orders queued at it now.
    pub orders: u32,
}

/// The levels noted since they were last taken, in the order first noted (repeats kept:
/// they are dropped when taken, a sweep's many fills at one level cost one entry each).
#[derive(Debug, Clone, Default)]
pub(crate) struct LevelWatch {
    noted: Vec<(u16, Side, Price)>,
}

/// Noted levels checked for repeats one by one up to this many.
const SCAN_AT_MOST: usize = 32;

/// The best price of a side with the amount it shows.
pub type TopLevel = Option<(Price, Qty)>;

impl Engine {
    /// Notes that the level of book `b` at `price` on `side` changed (when watching).
    #[inline(always)]
    pub(crate) fn note_level(&mut self, b: usize, side: Side, price: Price) {
        if let Some(watch) = self.level_watch.as_deref_mut() {
            let entry = (b as u16, side, price);
            if watch.noted.last() != Some(&entry) {
                watch.noted.push(entry);
            }
        }
    }

    /// Starts or stops noting the levels commands change, for
    /// [`Engine::take_level_changes`]; stopping drops what was noted.
    pub fn watch_levels(&mut self, on: bool) {
        self.level_watch = on.then(Box::default);
    }

    /// Whether levels are being noted.
    pub fn watches_levels(&self) -> bool {
        self.level_watch.is_some()
    }

    /// Moves the levels changed since the last call into `out`, each once, in the order
    /// first changed, with what it holds now; nothing when not watching. Taken after each
    /// command, they are that command's changes.
    pub fn take_level_changes(&mut self, out: &mut Vec<LevelChange>) {
        let Some(watch) = self.level_watch.as_deref_mut() else {
            return;
        };
        let noted = std::mem::take(&mut watch.noted);
        let first = out.len();
        // A sweep may touch thousands of levels: past a few, repeats are found by hash.
        let mut seen = (noted.len() > SCAN_AT_MOST)
            .then(|| std::collections::HashSet::with_capacity(noted.len()));
        for (b, side, price) in noted.iter().copied() {
            let repeat = match &mut seen {
                Some(seen) => !seen.insert((b, side, price)),
                None => out[first..]
                    .iter()
                    .any(|c| c.instrument.0 == b && c.side == side && c.price == price),
            };
            if repeat {
                continue;
            }
            let level = self.books[usize::from(b)].level_at(side, price);
            out.push(LevelChange {
                instrument: InstrumentId(b),
                side,
                price,
                amount: level.map_or(Qty(0), |l| l.total),
                orders: level.map_or(0, |l| l.count),
            });
        }
        // The buffer goes back for the next command: no allocation per command.
        if let Some(watch) = self.level_watch.as_deref_mut() {
            watch.noted = noted;
            watch.noted.clear();
        }
    }

    /// The book sequence of `instrument`: how many commands changed its book.
    pub fn book_sequence(&self, instrument: InstrumentId) -> Result<u64, EngineError> {
        (self.books.get(usize::from(instrument.0)))
            .map(|b| b.sequence)
            .ok_or(EngineError::UnknownInstrument)
    }

    /// The best bid and ask of `instrument` with the amounts they show.
    pub fn top_levels(
        &self,
        instrument: InstrumentId,
    ) -> Result<(TopLevel, TopLevel), EngineError> {
        let book =
            (self.books.get(usize::from(instrument.0))).ok_or(EngineError::UnknownInstrument)?;
        let best = |side| {
            let price = book.best_price(side)?;
            let level = book.level_at(side, price)?;
            Some((price, level.total))
        };
        Ok((best(Side::Buy), best(Side::Sell)))
    }
}
