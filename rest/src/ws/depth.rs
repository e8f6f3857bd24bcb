//! `ORDER_BOOK` subscriptions with a depth. The hub's updates name every level a command
//! changed, anywhere in the book; a client that asked for its best `depth` levels a side
//! and was sent only those in its snapshot could not learn of a level that moved into that
//! window when a better one went (a depth-1 client left with no bid while bids rested).
//! So such a session keeps its own copy of each book (read whole, up to the server's
//! depth, with the snapshot), applies every update of the hub to it, and sends the client
//! the change of its window instead: levels that leave it as gone (`"0"`), levels that
//! enter it with their amount, changed ones. Its book is then always the book REST shows
//! at that depth, at the same sequence (one update per sequence, possibly empty). A book
//! deeper than the server's depth is read down to it: a level below comes into the copy
//! when it changes, as it would into a client's that subscribed to the whole book, and the
//! copy keeps no more than the server's depth a side (the worst let go), so a session
//! costs the same memory however deep the book and however long it runs. The change is
//! found from the levels the update names (`super::window`), in time proportional to
//! them, whatever the depth.

use std::collections::HashMap;
use std::sync::PoisonError;

use axum::extract::ws::Utf8Bytes;
use matchbook::{InstrumentId, Price, Qty, Side};

use super::book_frames::{self, Levels};
use super::frames::{BookData, Channel, Frame, LevelChange, Written};
use super::window::SideWindow;
use crate::markets::Markets;

/// Most distinct updates kept for one frame (sessions at that many depths).
const MOST_WRITTEN: usize = 8;

impl Written {
    /// The text written for `change`, written by `write` if no session wrote it yet.
    fn get_or_write(
        &self,
        change: LevelChange,
        write: impl FnOnce(&[(Side, Price, Qty)]) -> Option<Utf8Bytes>,
    ) -> Option<Utf8Bytes> {
        let mut written = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, text)) = written.iter().find(|(c, _)| *c == change) {
            return Some(text.clone());
        }
        let text = write(&change)?;
        if written.len() < MOST_WRITTEN {
            written.push((change, text.clone()));
        }
        Some(text)
    }
}

/// One book as a depth-limited session follows it: bids and asks.
#[derive(Debug)]
struct DepthBook {
    sides: [SideWindow; 2],
}

/// The rank of a price on a side: best first (bids by descending price).
fn rank(side: Side, price: i64) -> i64 {
    if side == Side::Buy { -price } else { price }
}

const SIDES: [Side; 2] = [Side::Buy, Side::Sell];

impl DepthBook {
    /// A book shown `depth` levels a side, keeping at most `cap` a side.
    fn new(depth: usize, cap: usize, (bids, asks): &(Levels, Levels)) -> Self {
        let side = |side: Side, levels: &Levels| {
            let ranked = levels.iter().map(move |&(p, a)| (rank(side, p.0), a.0));
            SideWindow::new(depth, cap, ranked)
        };
        Self {
            sides: [side(Side::Buy, bids), side(Side::Sell, asks)],
        }
    }

    /// Levels shown a side.
    fn depth(&self) -> usize {
        self.sides[0].depth()
    }

    /// Most levels kept a side.
    fn cap(&self) -> usize {
        self.sides[0].cap()
    }

    /// The levels shown, as a snapshot writes them.
    fn window_levels(&self) -> (Levels, Levels) {
        let [bids, asks] = SIDES.map(|side| {
            let shown = self.sides[side_index(side)].window();
            shown.map(|(r, a)| (Price(rank(side, r)), Qty(a))).collect()
        });
        (bids, asks)
    }

    /// Applies a command's changed levels; returns the change of the levels shown.
    fn apply(&mut self, levels: &[(Side, Price, Qty)]) -> Vec<(Side, Price, Qty)> {
        let mut change = Vec::new();
        for side in SIDES {
            let ranked: Vec<(i64, i64)> = (levels.iter())
                .filter(|l| l.0 == side)
                .map(|&(_, p, a)| (rank(side, p.0), a.0))
                .collect();
            if ranked.is_empty() {
                continue;
            }
            let shown = self.sides[side_index(side)].apply(&ranked);
            change.extend(
                shown
                    .into_iter()
                    .map(|(r, a)| (side, Price(rank(side, r)), Qty(a))),
            );
        }
        change
    }
}

fn side_index(side: Side) -> usize {
    usize::from(side == Side::Sell)
}

/// The books a session follows at a depth, by market.
#[derive(Debug, Default)]
pub struct DepthBooks {
    books: HashMap<InstrumentId, DepthBook>,
}

impl DepthBooks {
    /// Whether a subscription at `depth` is followed here (not the whole book as far as the
    /// server shows it).
    pub fn limits(depth: usize, server_depth: usize) -> bool {
        depth > 0 && depth < server_depth
    }

    /// Follows market `id` at `depth` from `levels` (the whole book as the server shows
    /// it, `read_depth` levels a side at most: the most the copy keeps); returns the
    /// client's snapshot levels.
    pub fn follow(
        &mut self,
        id: InstrumentId,
        (depth, read_depth): (usize, usize),
        levels: &(Levels, Levels),
    ) -> (Levels, Levels) {
        let book = DepthBook::new(depth, read_depth, levels);
        let shown = book.window_levels();
        self.books.insert(id, book);
        shown
    }

    /// The depth market `id` is followed at; `None` when it is not (a subscription to the
    /// whole book, as far as the server shows it).
    pub fn depth_of(&self, id: InstrumentId) -> Option<usize> {
        self.books.get(&id).map(DepthBook::depth)
    }

    /// Stops following market `id` (the next subscription decides again).
    pub fn forget(&mut self, id: InstrumentId) {
        self.books.remove(&id);
    }

    /// Stops following every market.
    pub fn clear(&mut self) {
        self.books.clear();
    }

    /// The text to send for `frame` when this session reworks it: an `ORDER_BOOK` frame of
    /// a market it follows at a depth. `None`: send the hub's text.
    pub fn rework(&mut self, frame: &Frame, markets: &Markets) -> Option<Utf8Bytes> {
        if frame.channel != Channel::OrderBook {
            return None;
        }
        let (book, data) = (self.books.get_mut(&frame.topic.0)?, frame.book.as_ref()?);
        let market = markets.market_of(frame.topic.0)?;
        let text = match data {
            BookData::Snapshot { levels, time } => {
                *book = DepthBook::new(book.depth(), book.cap(), levels);
                let shown = book.window_levels();
                serde_json::to_string(&book_frames::snapshot(market, shown, frame.seq, *time))
            }
            BookData::Update {
                levels,
                time,
                written,
            } => {
                let change = book.apply(levels);
                return written.get_or_write(change, |change| {
                    let update = book_frames::update_of(market, change, frame.seq, *time);
                    serde_json::to_string(&update).ok().map(Utf8Bytes::from)
                });
            }
        };
        text.ok().map(Utf8Bytes::from)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    fn levels(bids: &[(i64, i64)], asks: &[(i64, i64)]) -> (Levels, Levels) {
        let side = |l: &[(i64, i64)]| l.iter().map(|&(p, a)| (Price(p), Qty(a))).collect();
        (side(bids), side(asks))
    }

    /// `changes` as (side, price, amount), sorted.
    fn sorted(changes: &[(Side, i64, i64)]) -> Vec<(bool, i64, i64)> {
        let mut plain: Vec<_> = (changes.iter())
            .map(|&(side, p, a)| (side == Side::Buy, p, a))
            .collect();
        plain.sort_unstable();
        plain
    }

    fn apply(book: &mut DepthBook, changes: &[(Side, i64, i64)]) -> Vec<(bool, i64, i64)> {
        let typed: Vec<_> = (changes.iter())
            .map(|&(s, p, a)| (s, Price(p), Qty(a)))
            .collect();
        let shown: Vec<_> = (book.apply(&typed).into_iter())
            .map(|(s, p, a)| (s, p.0, a.0))
            .collect();
        sorted(&shown)
    }

    /// The window's change names the level that enters it when a better one goes, the
    /// level pushed out by a better one as gone, and nothing outside it.
    #[test]
    fn levels_entering_and_leaving_the_window_are_named() {
        let book_levels = levels(&[(100, 1), (99, 2), (98, 3)], &[(101, 4)]);
        let mut book = DepthBook::new(2, 1_000, &book_levels);
        let (buy, sell) = (Side::Buy, Side::Sell);
        let change = apply(&mut book, &[(buy, 100, 0), (buy, 90, 9)]);
        assert_eq!(change, sorted(&[(buy, 100, 0), (buy, 98, 3)]));
        let change = apply(&mut book, &[(buy, 105, 5), (sell, 101, 6)]);
        assert_eq!(
            change,
            sorted(&[(buy, 98, 0), (buy, 105, 5), (sell, 101, 6)])
        );
        assert!(apply(&mut book, &[(buy, 90, 0)]).is_empty());
    }

    /// Sessions whose window changed alike share one text of the update; another change
    /// gets its own.
    #[test]
    fn an_update_is_written_once_for_each_change() {
        let written = Written::default();
        let calls = std::cell::Cell::new(0);
        let write = |change: &[(Side, Price, Qty)]| {
            calls.set(calls.get() + 1);
            Some(Utf8Bytes::from(format!("{change:?}")))
        };
        let (one, other) = (
            vec![(Side::Buy, Price(100), Qty(0))],
            vec![(Side::Buy, Price(99), Qty(2))],
        );
        let first = written.get_or_write(one.clone(), write);
        assert_eq!(written.get_or_write(one, write), first);
        assert_eq!(calls.get(), 1, "the second session shares the first's text");
        assert_ne!(written.get_or_write(other, write), first);
        assert_eq!(calls.get(), 2);
    }

    /// Levels with their new amounts (0: gone).
    type Changes = Vec<(Side, i64, i64)>;

    /// The whole book at the start and each change applied to it.
    fn book_and_changes() -> impl Strategy<Value = (Changes, Vec<Changes>)> {
        let side = prop_oneof![Just(Side::Buy), Just(Side::Sell)];
        let level = (side, 1i64..40, 0i64..4);
        let start = proptest::collection::vec(level.clone(), 0..30);
        let steps = proptest::collection::vec(proptest::collection::vec(level, 1..6), 1..40);
        (start, steps)
    }

    /// A session at depth 1 on a book whose far levels keep changing keeps no more levels
    /// than it read (before, every far level that changed joined its copy: a thousand such
    /// sessions held a thousand copies of the whole book), and still shows the best one.
    #[test]
    fn a_copy_keeps_no_more_levels_than_it_read() {
        let mut book = DepthBook::new(1, 3, &levels(&[(100, 1), (99, 1), (98, 1)], &[]));
        for price in (50..90).rev() {
            apply(&mut book, &[(Side::Buy, price, 1)]);
            assert!(
                book.sides[0].kept() <= 3,
                "{} levels kept",
                book.sides[0].kept()
            );
        }
        let change = apply(&mut book, &[(Side::Buy, 100, 0)]);
        assert_eq!(change, sorted(&[(Side::Buy, 100, 0), (Side::Buy, 99, 1)]));
    }

    /// The best `depth` levels a side of a whole book (side, price) -> amount, by sorting.
    fn best(whole: &BTreeMap<(bool, i64), i64>, depth: usize) -> BTreeMap<(bool, i64), i64> {
        let mut kept = BTreeMap::new();
        for buy in [true, false] {
            let mut side: Vec<_> = whole.iter().filter(|((b, _), _)| *b == buy).collect();
            side.sort_by_key(|((_, p), _)| if buy { -p } else { *p });
            kept.extend(side.into_iter().take(depth).map(|(k, a)| (*k, *a)));
        }
        kept
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// A client that applies every change of the window to its snapshot holds, after
        /// each change of the whole book, exactly the best `depth` levels a side of what
        /// the session keeps: the whole book (kept apart, sorted) while it has no more
        /// than `cap` levels a side, else the best `cap` of the levels it has seen (each
        /// as the whole book has it); the window's edge kept between changes is the one a
        /// walk from the best level finds.
        #[test]
        fn a_client_applying_the_window_changes_holds_the_best_levels(
            depth in 1usize..6,
            extra in prop_oneof![0usize..6, Just(1_000)],
            (start, steps) in book_and_changes(),
        ) {
            let cap = depth + extra;
            let (mut whole, mut kept) = (BTreeMap::new(), BTreeMap::new());
            let mut book = DepthBook::new(depth, cap, &levels(&[], &[]));
            let mut client = BTreeMap::new();
            for step in std::iter::once(start).chain(steps) {
                for &(side, price, amount) in &step {
                    let key = (side == Side::Buy, price);
                    for book in [&mut whole, &mut kept] {
                        if amount == 0 { book.remove(&key); } else { book.insert(key, amount); }
                    }
                }
                kept = best(&kept, cap);
                for (buy, price, amount) in apply(&mut book, &step) {
                    if amount == 0 { client.remove(&(buy, price)); } else { client.insert((buy, price), amount); }
                }
                prop_assert_eq!(&client, &best(&kept, depth));
                prop_assert!(kept.iter().all(|(level, amount)| whole.get(level) == Some(amount)));
                if extra == 1_000 {
                    prop_assert_eq!(&client, &best(&whole, depth));
                }
                for side in &book.sides {
                    prop_assert_eq!(side.edge(), side.edge_walked());
                }
            }
        }
    }
}
