//! `rust-order-book` 0.0.2 (crates.io): one `OrderBook` per instrument. It has limit and
//! market orders with GTC / IOC / FOK and post-only, cancel and modify natively; its modify
//! gives the order a new id, which the adapter follows. Its execution report carries the
//! filled quantity but no fills (the list it builds stays internal), so its fills are
//! checked in aggregate: lots taken per command and the book's top after it.

use rust_order_book::{
    LimitOrderOptions, MarketOrderOptions, OrderBook, OrderBookOptions, OrderId, Price, Quantity,
    Side as RSide, TimeInForce,
};

use super::{ClientOrders, Gap, Level, OrderIds, Outcome, Venue};
use crate::script::{Line, Op, Script, Side, Tif};

const GAPS: &[Gap] = &[
    Gap {
        feature: "individual fills",
        handling: "not reported: checked as lots taken per command and top of book",
    },
    Gap {
        feature: "fill-or-kill market order",
        handling: "skipped",
    },
    Gap {
        feature: "client order ids",
        handling: "emulated: a map in the adapter",
    },
];

/// rust-order-book driven by a script.
pub struct RustOrderBook {
    books: Vec<OrderBook>,
    /// Instrument and the book's own id of each open order, by number.
    ids: OrderIds<(u16, OrderId)>,
    clients: ClientOrders,
}

impl RustOrderBook {
    /// One book per instrument, journaling off.
    pub fn new(script: &Script) -> Self {
        Self {
            books: (0..script.instruments)
                .map(|i| OrderBook::new(&format!("I{i}"), OrderBookOptions::default()))
                .collect(),
            ids: OrderIds::default(),
            clients: ClientOrders::default(),
        }
    }
}

fn rside(side: Side) -> RSide {
    match side {
        Side::Buy => RSide::Buy,
        Side::Sell => RSide::Sell,
    }
}

impl Venue for RustOrderBook {
    fn name(&self) -> &'static str {
        "rust-order-book"
    }

    fn reports_fills(&self) -> bool {
        false
    }

    fn gaps(&self) -> &'static [Gap] {
        GAPS
    }

    fn apply(&mut self, line: &Line, number: u32, out: &mut Outcome, _record: bool) {
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
                let book = &mut self.books[usize::from(instrument)];
                let report = match price {
                    None if tif == Tif::Fok => return,
                    None => book.market(MarketOrderOptions::new(rside(side), amount as u64)),
                    Some(p) => book.limit(LimitOrderOptions {
                        side: rside(side),
                        quantity: Quantity(amount as u64),
                        price: Price(p as u64),
                        time_in_force: Some(match tif {
                            Tif::Ioc => TimeInForce::IOC,
                            Tif::Fok => TimeInForce::FOK,
                            Tif::Gtc | Tif::PostOnly => TimeInForce::GTC,
                        }),
                        post_only: Some(tif == Tif::PostOnly),
                    }),
                };
                let Ok(report) = report else {
                    return;
                };
                out.applied = true;
                out.taken = report.executed_qty.value() as i64;
                let rests = price.is_some() && matches!(tif, Tif::Gtc | Tif::PostOnly);
                if rests && report.remaining_qty.value() > 0 {
                    self.ids.set(number, Some((instrument, report.order_id)));
                    self.clients.rests(account, client, number);
                }
            }
            Op::Cancel { account, target } => {
                let number = self.clients.resolve(account, target);
                let Some((instrument, id)) = number.and_then(|k| self.ids.get(k)) else {
                    return;
                };
                out.applied = self.books[usize::from(instrument)].cancel(id).is_ok();
            }
            Op::Move { order, price, .. } => {
                let Some((instrument, id)) = self.ids.get(order) else {
                    return;
                };
                let Ok(report) =
                    self.books[usize::from(instrument)].modify(id, Some(Price(price as u64)), None)
                else {
                    // Filled meanwhile: the number is stale.
                    self.ids.set(order, None);
                    return;
                };
                out.applied = true;
                out.taken = report.executed_qty.value() as i64;
                let open = report.remaining_qty.value() > 0;
                self.ids
                    .set(order, open.then_some((instrument, report.order_id)));
            }
        }
    }

    fn best(&self, instrument: u16) -> (Option<i64>, Option<i64>) {
        let book = &self.books[usize::from(instrument)];
        (
            book.best_bid().map(|p| p.value() as i64),
            book.best_ask().map(|p| p.value() as i64),
        )
    }

    fn top(&self, instrument: u16) -> (Level, Level) {
        let depth = self.books[usize::from(instrument)].depth(Some(1));
        let first = |levels: &[(Price, Quantity)]| {
            levels
                .first()
                .map(|(p, q)| (p.value() as i64, q.value() as i64))
        };
        (first(&depth.bids), first(&depth.asks))
    }
}
