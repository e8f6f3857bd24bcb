//! `ORDER_BOOK` and `BOOK_TICKER` frames: snapshots read from the engine replica's books
//! (for a new subscriber, and for every session after the hub started over) and the
//! update and tick one command's change of a book makes (the runtime's book feed).

use matchbook::runtime::BookUpdate;
use matchbook::{Engine, InstrumentId, Price, Qty, Side, Timestamp, TopLevel};

use super::messages::{BookSnapshotFrame, BookTickFrame, BookTop, BookUpdateFrame, Stamp};
use crate::markets::Market;

/// A book's levels, best first, as the snapshot writes them.
pub type Levels = Vec<(Price, Qty)>;

/// `ORDER_BOOK_SNAPSHOT` of levels already read.
pub fn snapshot(
    market: &Market,
    (bids, asks): (Levels, Levels),
    sequence: u64,
    now: Timestamp,
) -> BookSnapshotFrame {
    let pairs = |levels: Levels| {
        (levels.into_iter())
            .map(|(p, a)| [market.price(p), market.qty(a)])
            .collect()
    };
    BookSnapshotFrame {
        channel_name: "ORDER_BOOK",
        kind: "ORDER_BOOK_SNAPSHOT",
        instrument_code: market.code.clone(),
        bids: pairs(bids),
        asks: pairs(asks),
        sequence,
        stamp: Stamp::of(now),
    }
}

/// Up to `depth` levels per side of a book of the engine, and its sequence.
pub fn engine_levels(
    engine: &Engine,
    id: InstrumentId,
    depth: usize,
) -> Option<((Levels, Levels), u64)> {
    let view = engine.book_levels(id, depth).ok()?;
    let levels = |side: &[matchbook::LevelView]| side.iter().map(|l| (l.price, l.amount)).collect();
    Some(((levels(&view.bids), levels(&view.asks)), view.sequence))
}

/// The best bid and ask with their amounts.
pub type Top = (TopLevel, TopLevel);

/// The levels of one command's change of a book, with their amounts after it (0: gone).
pub fn changed_levels(update: &BookUpdate) -> Vec<(Side, Price, Qty)> {
    (update.levels.iter())
        .map(|l| (l.side, l.price, l.amount))
        .collect()
}

/// `ORDER_BOOK_UPDATE` naming `levels` with their new amounts (0: gone).
pub fn update_of(
    market: &Market,
    levels: &[(Side, Price, Qty)],
    sequence: u64,
    time: Timestamp,
) -> BookUpdateFrame {
    BookUpdateFrame {
        channel_name: "ORDER_BOOK",
        kind: "ORDER_BOOK_UPDATE",
        instrument_code: market.code.clone(),
        changes: (levels.iter())
            .map(|&(side, p, a)| {
                // The contract's mark of a level gone.
                let amount = if a.0 == 0 {
                    "0".to_owned()
                } else {
                    market.qty(a)
                };
                [side.as_str().to_owned(), market.price(p), amount]
            })
            .collect(),
        sequence,
        stamp: Stamp::of(time),
    }
}

/// A `BOOK_TICKER` frame of `kind` for a top.
pub fn tick(
    market: &Market,
    kind: &'static str,
    top: Top,
    sequence: u64,
    time: Timestamp,
) -> BookTickFrame {
    let (bid, ask) = top;
    BookTickFrame {
        channel_name: "BOOK_TICKER",
        kind,
        instrument_code: market.code.clone(),
        data: BookTop {
            best_bid: bid.map(|(p, _)| market.price(p)),
            bid_amount: bid.map(|(_, a)| market.qty(a)),
            best_ask: ask.map(|(p, _)| market.price(p)),
            ask_amount: ask.map(|(_, a)| market.qty(a)),
        },
        sequence,
        stamp: Stamp::of(time),
    }
}

/// The top of levels read for a snapshot.
pub fn top_of((bids, asks): &(Levels, Levels)) -> Top {
    (bids.first().copied(), asks.first().copied())
}
