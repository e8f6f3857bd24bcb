//! Read-only views of the books: last price, best bid and ask, L2 levels and L3 orders,
//! each stating the book sequence it reflects.

use super::Engine;
use crate::book::Book;
use crate::book::view::{BookView, LevelView, OrderView};
use crate::error::EngineError;
use crate::fixed::Price;
use crate::ids::InstrumentId;

impl Engine {
    /// Price of the last trade in an instrument.
    pub fn last_price(&self, instrument: InstrumentId) -> Result<Option<Price>, EngineError> {
        self.book(instrument).map(|b| b.last_price)
    }

    fn book(&self, instrument: InstrumentId) -> Result<&Book, EngineError> {
        self.books
            .get(usize::from(instrument.0))
            .ok_or(EngineError::UnknownInstrument)
    }

    /// Best bid and best ask, without building a view.
    pub fn best_bid_ask(
        &self,
        instrument: InstrumentId,
    ) -> Result<(Option<Price>, Option<Price>), EngineError> {
        self.book(instrument).map(Book::top)
    }

    /// L2 view: up to `depth` aggregated levels per side (L1 is `depth = 1`).
    pub fn book_levels(
        &self,
        instrument: InstrumentId,
        depth: usize,
    ) -> Result<BookView<LevelView>, EngineError> {
        let book = self.book(instrument)?;
        let side = |side| {
            book.levels_of(side)
                .take(depth)
                .map(|l| LevelView {
                    price: l.price,
                    amount: l.total,
                    number_of_orders: l.count,
                })
                .collect()
        };
        Ok(BookView {
            bids: side(crate::order::Side::Buy),
            asks: side(crate::order::Side::Sell),
            sequence: book.sequence,
        })
    }

    /// L3 view: every resting order of up to `depth` price levels per side, in queue order.
    pub fn book_orders(
        &self,
        instrument: InstrumentId,
        depth: usize,
    ) -> Result<BookView<OrderView>, EngineError> {
        let book = self.book(instrument)?;
        let side = |side| {
            let mut out = Vec::new();
            for level in book.levels_of(side).take(depth) {
                let mut slot = level.head;
                while slot != crate::order::NIL {
                    let o = &self.orders[slot as usize];
                    out.push(OrderView {
                        price: level.price,
                        amount: o.visible(),
                        order: o.handle(),
                        account: o.account,
                    });
                    slot = o.next;
                }
            }
            out
        };
        Ok(BookView {
            bids: side(crate::order::Side::Buy),
            asks: side(crate::order::Side::Sell),
            sequence: book.sequence,
        })
    }
}
