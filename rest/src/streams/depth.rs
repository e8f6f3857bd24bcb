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
//! when it changes, as it would into a client's that subscribed to the whole book.

use std::collections::{BTreeMap, HashMap};

use axum::extract::ws::Utf8Bytes;
use matchbook::{InstrumentId, Price, Qty, Side, Timestamp};

use super::book_frames::{self, Levels};
use super::hub::{Channel, Frame};
use crate::markets::Markets;

/// What an `ORDER_BOOK` frame of the hub says, for sessions that rework it.
#[derive(Debug)]
pub enum BookData {
    /// Every level of the book (sent after the hub started over).
    Snapshot {
        /// Bids and asks, best first.
        levels: (Levels, Levels),
        /// The frame's time.
        time: Timestamp,
    },
    /// The levels one command changed, with their amounts after it (0: gone).
    Update {
        /// Side, price, new amount.
        levels: Vec<(Side, Price, Qty)>,
        /// The frame's time.
        time: Timestamp,
    },
}

/// One book as a depth-limited session follows it.
#[derive(Debug)]
struct DepthBook {
    depth: usize,
    bids: BTreeMap<i64, i64>,
    asks: BTreeMap<i64, i64>,
}

/// A book's window: its best levels a side, bids then asks, best first.
type Window = Vec<(Side, i64, i64)>;

impl DepthBook {
    fn new(depth: usize, (bids, asks): &(Levels, Levels)) -> Self {
        let side = |levels: &Levels| levels.iter().map(|&(p, a)| (p.0, a.0)).collect();
        Self {
            depth,
            bids: side(bids),
            asks: side(asks),
        }
    }

    fn window(&self) -> Window {
        let bids = (self.bids.iter().rev()).map(|(&p, &a)| (Side::Buy, p, a));
        let asks = (self.asks.iter()).map(|(&p, &a)| (Side::Sell, p, a));
        bids.take(self.depth).chain(asks.take(self.depth)).collect()
    }

    /// The window's levels as a snapshot writes them.
    fn window_levels(&self) -> (Levels, Levels) {
        let (mut bids, mut asks) = (Vec::new(), Vec::new());
        for (side, p, a) in self.window() {
            let levels = if side == Side::Buy {
                &mut bids
            } else {
                &mut asks
            };
            levels.push((Price(p), Qty(a)));
        }
        (bids, asks)
    }

    fn apply(&mut self, levels: &[(Side, Price, Qty)]) {
        for &(side, price, amount) in levels {
            let book = if side == Side::Buy {
                &mut self.bids
            } else {
                &mut self.asks
            };
            if amount.0 == 0 {
                book.remove(&price.0);
            } else {
                book.insert(price.0, amount.0);
            }
        }
    }
}

/// What changed from window `before` to window `after`: the levels gone (amount 0), new
/// and changed.
fn window_change(before: &Window, after: &Window) -> Vec<(Side, Price, Qty)> {
    let amounts = |window: &Window| -> HashMap<(bool, i64), i64> {
        (window.iter())
            .map(|&(s, p, a)| ((s == Side::Buy, p), a))
            .collect()
    };
    let (was, is) = (amounts(before), amounts(after));
    let gone = (before.iter())
        .filter(|&&(side, price, _)| !is.contains_key(&(side == Side::Buy, price)))
        .map(|&(side, price, _)| (side, Price(price), Qty(0)));
    let changed = (after.iter())
        .filter(|&&(side, price, amount)| was.get(&(side == Side::Buy, price)) != Some(&amount))
        .map(|&(side, price, amount)| (side, Price(price), Qty(amount)));
    gone.chain(changed).collect()
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
    /// it); returns the client's snapshot levels.
    pub fn follow(
        &mut self,
        id: InstrumentId,
        depth: usize,
        levels: &(Levels, Levels),
    ) -> (Levels, Levels) {
        let book = DepthBook::new(depth, levels);
        let shown = book.window_levels();
        self.books.insert(id, book);
        shown
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
                *book = DepthBook::new(book.depth, levels);
                let shown = book.window_levels();
                serde_json::to_string(&book_frames::snapshot(market, shown, frame.seq, *time))
            }
            BookData::Update { levels, time } => {
                let before = book.window();
                book.apply(levels);
                let change = window_change(&before, &book.window());
                let update = book_frames::update_of(market, &change, frame.seq, *time);
                serde_json::to_string(&update)
            }
        };
        text.ok().map(Utf8Bytes::from)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn levels(bids: &[(i64, i64)], asks: &[(i64, i64)]) -> (Levels, Levels) {
        let side = |l: &[(i64, i64)]| l.iter().map(|&(p, a)| (Price(p), Qty(a))).collect();
        (side(bids), side(asks))
    }

    /// The window's change names the level that enters it when a better one goes, the
    /// level pushed out by a better one as gone, and nothing outside it.
    #[test]
    fn levels_entering_and_leaving_the_window_are_named() {
        let mut book = DepthBook::new(2, &levels(&[(100, 1), (99, 2), (98, 3)], &[(101, 4)]));
        let before = book.window();
        book.apply(&[
            (Side::Buy, Price(100), Qty(0)),
            (Side::Buy, Price(90), Qty(9)),
        ]);
        let change = window_change(&before, &book.window());
        assert_eq!(
            change,
            vec![
                (Side::Buy, Price(100), Qty(0)),
                (Side::Buy, Price(98), Qty(3))
            ]
        );
        let before = book.window();
        book.apply(&[
            (Side::Buy, Price(105), Qty(5)),
            (Side::Sell, Price(101), Qty(6)),
        ]);
        let change = window_change(&before, &book.window());
        assert_eq!(
            change,
            vec![
                (Side::Buy, Price(98), Qty(0)),
                (Side::Buy, Price(105), Qty(5)),
                (Side::Sell, Price(101), Qty(6))
            ]
        );
        let before = book.window();
        book.apply(&[(Side::Buy, Price(90), Qty(0))]);
        assert!(window_change(&before, &book.window()).is_empty());
    }

    /// Levels with their new amounts (0: gone).
    type Changes = Vec<(Side, i64, i64)>;

    /// The whole book at the start and each change applied to it.
    fn book_and_changes() -> impl Strategy<Value = (Changes, Vec<Changes>)> {
        let side = prop_oneof![Just(Side::Buy), Just(Side::Sell)];
        let level = (side, 1i64..40, 0i64..4);
        let start = proptest::collection::vec(level.clone(), 0..30);
        let steps = proptest::collection::vec(proptest::collection::vec(level, 1..4), 1..40);
        (start, steps)
    }

    /// The best `depth` levels a side of a whole book, as a client's map.
    fn best(book: &DepthBook) -> BTreeMap<(bool, i64), i64> {
        (book.window().into_iter())
            .map(|(side, p, a)| ((side == Side::Buy, p), a))
            .collect()
    }

    proptest! {
        /// A client that applies every window change to its snapshot holds, after each
        /// change of the whole book, exactly its best `depth` levels a side.
        #[test]
        fn a_client_applying_the_window_changes_holds_the_best_levels(
            depth in 1usize..5,
            (start, steps) in book_and_changes(),
        ) {
            let mut whole = DepthBook::new(depth, &levels(&[], &[]));
            let start: Vec<_> = start.iter().map(|&(s, p, a)| (s, Price(p), Qty(a))).collect();
            whole.apply(&start);
            let mut client = best(&whole);
            for step in steps {
                let step: Vec<_> = step.iter().map(|&(s, p, a)| (s, Price(p), Qty(a))).collect();
                let before = whole.window();
                whole.apply(&step);
                for (side, price, amount) in window_change(&before, &whole.window()) {
                    let key = (side == Side::Buy, price.0);
                    if amount.0 == 0 {
                        client.remove(&key);
                    } else {
                        client.insert(key, amount.0);
                    }
                }
                prop_assert_eq!(&client, &best(&whole));
            }
        }
    }
}
