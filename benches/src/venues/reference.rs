//! The reference book: a plain list of resting orders per instrument, searched linearly,
//! written to be obviously right rather than fast. Price-time priority, limit and market
//! orders, GTC / IOC / FOK / post-only, cancel by number or client id, and a move that
//! re-enters the order at its new price behind the orders already there (trading first if it
//! crosses; a post-only order that would cross is refused and stays), as matchbook's amend
//! does. Every other engine's fills are compared with it.

use std::collections::HashMap;

use super::{ClientOrders, Fill, Level, Outcome, Venue};
use crate::script::{Line, Op, Script, Side, Tif};

#[derive(Debug, Clone, Copy)]
struct Resting {
    number: u32,
    account: u32,
    side: Side,
    price: i64,
    remaining: i64,
    post_only: bool,
    /// Arrival order (a move takes a new one).
    time: u64,
}

/// The reference engine.
#[derive(Debug)]
pub struct ReferenceBook {
    books: Vec<Vec<Resting>>,
    /// Instrument of each resting order, by number.
    placed: HashMap<u32, u16>,
    clients: ClientOrders,
    clock: u64,
}

impl ReferenceBook {
    /// An empty book per instrument of `script`.
    pub fn new(script: &Script) -> Self {
        Self {
            books: vec![Vec::new(); usize::from(script.instruments)],
            placed: HashMap::new(),
            clients: ClientOrders::default(),
            clock: 0,
        }
    }

    /// Matches an incoming order, returns what is left of it.
    fn take(
        &mut self,
        taker: Resting,
        instrument: u16,
        limit: Option<i64>,
        out: &mut Outcome,
    ) -> i64 {
        let book = &mut self.books[usize::from(instrument)];
        let maker_side = taker.side.opposite();
        let mut left = taker.remaining;
        while left > 0 {
            let Some(i) = best_within(book, maker_side, limit) else {
                break;
            };
            let maker = &mut book[i];
            let amount = left.min(maker.remaining);
            maker.remaining -= amount;
            left -= amount;
            out.taken += amount;
            out.fills.push(Fill {
                instrument,
                taker: taker.number,
                maker: maker.number,
                price: maker.price,
                amount,
            });
            if maker.remaining == 0 {
                let gone = book.remove(i);
                self.placed.remove(&gone.number);
            }
        }
        left
    }

    fn rest(&mut self, instrument: u16, order: Resting) {
        self.placed.insert(order.number, instrument);
        self.books[usize::from(instrument)].push(order);
    }

    fn remove(&mut self, number: u32, account: u32) -> Option<(u16, Resting)> {
        let instrument = *self.placed.get(&number)?;
        let book = &mut self.books[usize::from(instrument)];
        let i = book
            .iter()
            .position(|r| r.number == number && r.account == account)?;
        self.placed.remove(&number);
        Some((instrument, book.remove(i)))
    }
}

/// Whether a resting order on `side` at `price` is within an incoming order's `limit`
/// (none: a market order reaches everything).
fn within(side: Side, price: i64, limit: Option<i64>) -> bool {
    match (side, limit) {
        (_, None) => true,
        (Side::Sell, Some(l)) => price <= l,
        (Side::Buy, Some(l)) => price >= l,
    }
}

/// The best resting order on `side` within `limit`: best price first, then arrival.
fn best_within(book: &[Resting], side: Side, limit: Option<i64>) -> Option<usize> {
    book.iter()
        .enumerate()
        .filter(|(_, r)| r.side == side && within(side, r.price, limit))
        .min_by_key(|(_, r)| {
            let rank = match side {
                Side::Sell => r.price,
                Side::Buy => -r.price,
            };
            (rank, r.time)
        })
        .map(|(i, _)| i)
}

/// Lots resting on `side` within `limit`.
fn available(book: &[Resting], side: Side, limit: Option<i64>) -> i64 {
    book.iter()
        .filter(|r| r.side == side && within(side, r.price, limit))
        .map(|r| r.remaining)
        .sum()
}

impl Venue for ReferenceBook {
    fn name(&self) -> &'static str {
        "reference"
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
                self.clock += 1;
                let book = &self.books[usize::from(instrument)];
                let opposite = side.opposite();
                let crosses = best_within(book, opposite, price).is_some();
                match tif {
                    Tif::PostOnly if crosses => return,
                    Tif::Fok if available(book, opposite, price) < amount => return,
                    _ => {}
                }
                let order = Resting {
                    number,
                    account,
                    side,
                    price: price.unwrap_or_default(),
                    remaining: amount,
                    post_only: tif == Tif::PostOnly,
                    time: self.clock,
                };
                let left = self.take(order, instrument, price, out);
                out.applied = true;
                if left > 0 && matches!(tif, Tif::Gtc | Tif::PostOnly) && price.is_some() {
                    self.rest(
                        instrument,
                        Resting {
                            remaining: left,
                            ..order
                        },
                    );
                    self.clients.rests(account, client, number);
                }
            }
            Op::Cancel { account, target } => {
                let number = self.clients.resolve(account, target);
                out.applied = number.and_then(|k| self.remove(k, account)).is_some();
            }
            Op::Move {
                account,
                order,
                price,
            } => {
                let Some((instrument, old)) = self.remove(order, account) else {
                    return;
                };
                let book = &self.books[usize::from(instrument)];
                if old.post_only && best_within(book, old.side.opposite(), Some(price)).is_some() {
                    // Refused, the order stays as it was (its arrival time keeps its place).
                    self.rest(instrument, old);
                    return;
                }
                self.clock += 1;
                let moved = Resting {
                    price,
                    time: self.clock,
                    ..old
                };
                let left = self.take(moved, instrument, Some(price), out);
                out.applied = true;
                if left > 0 {
                    self.rest(
                        instrument,
                        Resting {
                            remaining: left,
                            ..moved
                        },
                    );
                }
            }
        }
    }

    fn top(&self, instrument: u16) -> (Level, Level) {
        let book = &self.books[usize::from(instrument)];
        let level = |side: Side| {
            let i = best_within(book, side, None)?;
            let price = book[i].price;
            let lots = book
                .iter()
                .filter(|r| r.side == side && r.price == price)
                .map(|r| r.remaining)
                .sum();
            Some((price, lots))
        };
        (level(Side::Buy), level(Side::Sell))
    }
}
