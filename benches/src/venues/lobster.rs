//! `lobster` 0.7 (crates.io): one `OrderBook` per instrument, orders keyed by their file
//! number. It has limit and market orders and cancel only: IOC is emulated as a limit order
//! whose rest is cancelled at once, post-only by a top-of-book check before placing, a move
//! as cancel plus a new limit order; fill-or-kill is skipped.

use lobster::{OrderBook, OrderEvent, OrderType, Side as LSide};

use super::{ClientOrders, Fill, Gap, Level, OrderIds, Outcome, Venue};
use crate::script::{Line, Op, Script, Side, Tif};

const GAPS: &[Gap] = &[
    Gap {
        feature: "IOC limit order",
        handling: "emulated: limit order, then cancel of what rests",
    },
    Gap {
        feature: "post-only",
        handling: "emulated: refused when the opposite best price crosses",
    },
    Gap {
        feature: "amend (move)",
        handling: "emulated: cancel, then a new limit order",
    },
    Gap {
        feature: "fill-or-kill",
        handling: "skipped",
    },
    Gap {
        feature: "client order ids",
        handling: "emulated: a map in the adapter",
    },
];

/// Lobster driven by a script.
pub struct Lobster {
    books: Vec<OrderBook>,
    /// Instrument, side and remaining lots of each resting order, by number (lobster has
    /// no lookup by id, so the adapter follows fills itself).
    resting: OrderIds<(u16, Side, i64)>,
    clients: ClientOrders,
}

impl Lobster {
    /// One book per instrument.
    pub fn new(script: &Script) -> Self {
        Self {
            books: (0..script.instruments)
                .map(|_| OrderBook::new(1 << 16, 16, false))
                .collect(),
            resting: OrderIds::for_script(script),
            clients: ClientOrders::default(),
        }
    }

    /// Places a limit order; returns the lots that rest.
    #[allow(clippy::too_many_arguments)] // reason: one call per order field, read at the call
    fn limit(
        &mut self,
        instrument: u16,
        number: u32,
        side: Side,
        price: i64,
        amount: i64,
        out: &mut Outcome,
        record: bool,
    ) -> i64 {
        let event = self.books[usize::from(instrument)].execute(OrderType::Limit {
            id: u128::from(number),
            side: lside(side),
            qty: amount as u64,
            price: price as u64,
        });
        amount - self.settle(instrument, &event, out, record)
    }

    /// Follows the makers' remaining lots through an event's fills; returns lots filled.
    fn settle(
        &mut self,
        instrument: u16,
        event: &OrderEvent,
        out: &mut Outcome,
        record: bool,
    ) -> i64 {
        let (OrderEvent::Filled {
            fills, filled_qty, ..
        }
        | OrderEvent::PartiallyFilled {
            fills, filled_qty, ..
        }) = event
        else {
            return 0;
        };
        for f in fills {
            let maker = f.order_2 as u32;
            if let Some((i, side, left)) = self.resting.get(maker) {
                let left = left - f.qty as i64;
                self.resting
                    .set(maker, (left > 0).then_some((i, side, left)));
            }
            if record {
                out.taken += f.qty as i64;
                out.fills.push(Fill {
                    instrument,
                    taker: f.order_1 as u32,
                    maker,
                    price: f.price as i64,
                    amount: f.qty as i64,
                });
            }
        }
        *filled_qty as i64
    }

    /// Cancels a resting order; returns its side and remaining lots.
    fn cancel(&mut self, number: u32) -> Option<(u16, Side, i64)> {
        let resting = self.resting.get(number)?;
        self.resting.set(number, None);
        self.books[usize::from(resting.0)].execute(OrderType::Cancel {
            id: u128::from(number),
        });
        Some(resting)
    }
}

fn lside(side: Side) -> LSide {
    match side {
        Side::Buy => LSide::Bid,
        Side::Sell => LSide::Ask,
    }
}

impl Venue for Lobster {
    fn name(&self) -> &'static str {
        "lobster"
    }

    fn gaps(&self) -> &'static [Gap] {
        GAPS
    }

    fn apply(&mut self, line: &Line, number: u32, out: &mut Outcome, record: bool) {
        match line.op {
            Op::Deposit { .. } => out.applied = true,
            // No trigger, iceberg or contingent orders: not applied (the harness runs
            // files with them on matchbook only).
            Op::PlaceWith { .. } => {}
            Op::Place {
                account,
                instrument,
                side,
                price,
                amount,
                tif,
                client,
            } => {
                let Some(price) = price else {
                    if tif == Tif::Fok {
                        return;
                    }
                    let event = self.books[usize::from(instrument)].execute(OrderType::Market {
                        id: u128::from(number),
                        side: lside(side),
                        qty: amount as u64,
                    });
                    self.settle(instrument, &event, out, record);
                    out.applied = true;
                    return;
                };
                let book = &self.books[usize::from(instrument)];
                match tif {
                    Tif::Fok => return,
                    Tif::PostOnly => {
                        let crosses = match side {
                            Side::Buy => book.min_ask().is_some_and(|a| a <= price as u64),
                            Side::Sell => book.max_bid().is_some_and(|b| b >= price as u64),
                        };
                        if crosses {
                            return;
                        }
                    }
                    Tif::Gtc | Tif::Ioc => {}
                }
                out.applied = true;
                let left = self.limit(instrument, number, side, price, amount, out, record);
                if left > 0 {
                    if tif == Tif::Ioc {
                        self.books[usize::from(instrument)].execute(OrderType::Cancel {
                            id: u128::from(number),
                        });
                    } else {
                        self.resting.set(number, Some((instrument, side, left)));
                        self.clients.rests(account, client, number);
                    }
                }
            }
            Op::Cancel { account, target } => {
                let number = self.clients.resolve(account, target);
                out.applied = number.and_then(|k| self.cancel(k)).is_some();
            }
            Op::Move { order, price, .. } => {
                let Some((instrument, side, left)) = self.cancel(order) else {
                    return;
                };
                out.applied = true;
                let left = self.limit(instrument, order, side, price, left, out, record);
                if left > 0 {
                    self.resting.set(order, Some((instrument, side, left)));
                }
            }
        }
    }

    fn best(&self, instrument: u16) -> (Option<i64>, Option<i64>) {
        let book = &self.books[usize::from(instrument)];
        (
            book.max_bid().map(|p| p as i64),
            book.min_ask().map(|p| p as i64),
        )
    }

    fn top(&self, instrument: u16) -> (Level, Level) {
        let depth = self.books[usize::from(instrument)].depth(1);
        // Lobster lists every level, lowest price first on both sides.
        let level = |l: Option<&lobster::BookLevel>| l.map(|l| (l.price as i64, l.qty as i64));
        (level(depth.bids.last()), level(depth.asks.first()))
    }
}
