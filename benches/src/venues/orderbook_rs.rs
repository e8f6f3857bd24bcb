//! `orderbook-rs` 0.15 (crates.io, on `pricelevel` 0.10): one `OrderBook` per instrument,
//! orders keyed by their file number (`Id::Sequential`). Limit orders with GTC / IOC / FOK,
//! post-only, market orders, cancel and a native price update. Its trades come through a
//! listener callback; the adapter's listener records them only while a check is running.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use orderbook_rs::OrderBook;
use orderbook_rs::orderbook::trade::{TradeListener, TradeResult};
use pricelevel::{Id, OrderUpdate, Price, Side as OSide, TimeInForce};

use super::{ClientOrders, Fill, Gap, Level, OrderIds, Outcome, Venue};
use crate::script::{Line, Op, Script, Side, Tif};

const GAPS: &[Gap] = &[
    Gap {
        feature: "fill-or-kill market order",
        handling: "skipped",
    },
    Gap {
        feature: "client order ids",
        handling: "emulated: a map in the adapter",
    },
];

/// (taker, maker, price, lots) of the fills the listener saw.
type Seen = Arc<Mutex<Vec<(u64, u64, u128, u64)>>>;

/// orderbook-rs driven by a script.
pub struct OrderbookRs {
    books: Vec<OrderBook<()>>,
    /// Instrument of each order, by number.
    instrument_of: OrderIds<u16>,
    clients: ClientOrders,
    recording: Arc<AtomicBool>,
    seen: Seen,
}

fn sequential(id: Id) -> u64 {
    match id {
        Id::Sequential(n) => n,
        _ => u64::MAX,
    }
}

impl OrderbookRs {
    /// One book per instrument, each with the recording trade listener.
    pub fn new(script: &Script) -> Self {
        let recording = Arc::new(AtomicBool::new(false));
        let seen: Seen = Arc::default();
        let books = (0..script.instruments)
            .map(|i| {
                let (recording, seen) = (Arc::clone(&recording), Arc::clone(&seen));
                let listener: TradeListener = Arc::new(move |result: &TradeResult| {
                    if !recording.load(Ordering::Relaxed) {
                        return;
                    }
                    if let Ok(mut seen) = seen.lock() {
                        for t in result.match_result.trades().as_vec() {
                            seen.push((
                                sequential(t.taker_order_id()),
                                sequential(t.maker_order_id()),
                                t.price().as_u128(),
                                t.quantity().as_u64(),
                            ));
                        }
                    }
                });
                OrderBook::<()>::with_trade_listener(&format!("I{i}"), listener)
            })
            .collect();
        Self {
            books,
            instrument_of: OrderIds::for_script(script),
            clients: ClientOrders::default(),
            recording,
            seen,
        }
    }

    /// Moves the fills the listener recorded for this command into `out`.
    fn collect(&self, instrument: u16, out: &mut Outcome) {
        let Ok(mut seen) = self.seen.lock() else {
            return;
        };
        for (taker, maker, price, amount) in seen.drain(..) {
            out.taken += amount as i64;
            out.fills.push(Fill {
                instrument,
                taker: taker as u32,
                maker: maker as u32,
                price: price as i64,
                amount: amount as i64,
            });
        }
    }
}

fn oside(side: Side) -> OSide {
    match side {
        Side::Buy => OSide::Buy,
        Side::Sell => OSide::Sell,
    }
}

impl Venue for OrderbookRs {
    fn name(&self) -> &'static str {
        "orderbook-rs"
    }

    fn gaps(&self) -> &'static [Gap] {
        GAPS
    }

    fn apply(&mut self, line: &Line, number: u32, out: &mut Outcome, record: bool) {
        self.recording.store(record, Ordering::Relaxed);
        let instrument = match line.op {
            Op::Deposit { .. } => {
                out.applied = true;
                return;
            }
            // No trigger, iceberg or contingent orders: not applied (the harness runs files
            // with them on matchbook only).
            Op::PlaceWith { .. } => return,
            Op::Place {
                account,
                instrument,
                side,
                price,
                amount,
                tif,
                client,
            } => {
                let id = Id::sequential(u64::from(number));
                let book = &self.books[usize::from(instrument)];
                let (side, qty) = (oside(side), amount as u64);
                out.applied = match (price, tif) {
                    (None, Tif::Fok) => false,
                    (None, _) => book.submit_market_order(id, qty, side).is_ok(),
                    (Some(p), Tif::PostOnly) => book
                        .add_post_only_order(id, p as u128, qty, side, TimeInForce::Gtc, None)
                        .is_ok(),
                    (Some(p), tif) => {
                        let tif = match tif {
                            Tif::Ioc => TimeInForce::Ioc,
                            Tif::Fok => TimeInForce::Fok,
                            Tif::Gtc | Tif::PostOnly => TimeInForce::Gtc,
                        };
                        book.add_limit_order(id, p as u128, qty, side, tif, None)
                            .is_ok()
                    }
                };
                if out.applied {
                    self.instrument_of.set(number, Some(instrument));
                    self.clients.rests(account, client, number);
                }
                instrument
            }
            Op::Cancel { account, target } => {
                let number = self.clients.resolve(account, target);
                let Some((k, instrument)) =
                    number.and_then(|k| self.instrument_of.get(k).map(|i| (k, i)))
                else {
                    return;
                };
                let cancelled =
                    self.books[usize::from(instrument)].cancel_order(Id::sequential(u64::from(k)));
                out.applied = matches!(cancelled, Ok(Some(_)));
                instrument
            }
            Op::Move { order, price, .. } => {
                let Some(instrument) = self.instrument_of.get(order) else {
                    return;
                };
                let updated =
                    self.books[usize::from(instrument)].update_order(OrderUpdate::UpdatePrice {
                        order_id: Id::sequential(u64::from(order)),
                        new_price: Price::new(price as u128),
                    });
                out.applied = matches!(updated, Ok(Some(_)));
                instrument
            }
        };
        if record {
            self.collect(instrument, out);
        }
    }

    fn best(&self, instrument: u16) -> (Option<i64>, Option<i64>) {
        let book = &self.books[usize::from(instrument)];
        (
            book.best_bid().map(|p| p as i64),
            book.best_ask().map(|p| p as i64),
        )
    }

    fn top(&self, instrument: u16) -> (Level, Level) {
        let Ok(snapshot) = self.books[usize::from(instrument)].create_snapshot(1) else {
            return (None, None);
        };
        let level = |l: Option<(u128, u64)>| l.map(|(p, q)| (p as i64, q as i64));
        (level(snapshot.best_bid()), level(snapshot.best_ask()))
    }
}
