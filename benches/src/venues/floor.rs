//! The floor: the practical limit of a price-time book, to measure matchbook against. Per
//! instrument a price ladder (one slot per tick between the lowest and highest price the
//! script names, for each side), an intrusive FIFO of orders per level, the orders in one
//! vector indexed by their dense number, the best price of each side kept as a ladder
//! index. Nothing else: no accounts, balances, fees, events, ids or time. Same semantics as
//! the reference book (limit and market, GTC / IOC / FOK / post-only, cancel, move behind
//! the level), and checked against it like every venue.

use super::{ClientOrders, Fill, Level, Outcome, Venue};
use crate::script::{Line, Op, Script, Side, Tif};

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Order {
    prev: u32,
    next: u32,
    /// Ladder index of its price.
    level: u32,
    remaining: i64,
    account: u32,
    instrument: u16,
    side: Side,
    post_only: bool,
    resting: bool,
}

const EMPTY: Order = Order {
    prev: NIL,
    next: NIL,
    level: 0,
    remaining: 0,
    account: 0,
    instrument: 0,
    side: Side::Buy,
    post_only: false,
    resting: false,
};

#[derive(Debug, Clone, Copy)]
struct Queue {
    head: u32,
    tail: u32,
    lots: i64,
}

const NO_QUEUE: Queue = Queue {
    head: NIL,
    tail: NIL,
    lots: 0,
};

/// One side's ladder and its best level.
#[derive(Debug)]
struct Ladder {
    levels: Vec<Queue>,
    best: Option<u32>,
}

/// One instrument.
#[derive(Debug)]
struct Book {
    /// Price of ladder index 0.
    base: i64,
    bids: Ladder,
    asks: Ladder,
}

impl Book {
    fn side(&mut self, side: Side) -> &mut Ladder {
        match side {
            Side::Buy => &mut self.bids,
            Side::Sell => &mut self.asks,
        }
    }

    fn index(&self, price: i64) -> u32 {
        (price - self.base) as u32
    }
}

/// Whether ladder index `level` of the resting `side` is within an incoming order's
/// `limit` index (`None`: a market order reaches everything).
fn within(side: Side, level: u32, limit: Option<u32>) -> bool {
    match (side, limit) {
        (_, None) => true,
        (Side::Sell, Some(l)) => level <= l,
        (Side::Buy, Some(l)) => level >= l,
    }
}

/// The next non-empty level after `from` going away from the spread on `side`.
fn next_best(levels: &[Queue], side: Side, from: u32) -> Option<u32> {
    match side {
        Side::Buy => (0..from).rev().find(|&i| levels[i as usize].head != NIL),
        Side::Sell => (from + 1..levels.len() as u32).find(|&i| levels[i as usize].head != NIL),
    }
}

/// What became of a placed order.
enum Placed {
    Refused,
    Rested,
    Gone,
}

/// The floor venue.
#[derive(Debug)]
pub struct Floor {
    books: Vec<Book>,
    orders: Vec<Order>,
    clients: ClientOrders,
}

/// Lowest and highest price the script names per instrument.
fn price_ranges(script: &Script) -> Vec<(i64, i64)> {
    let mut ranges = vec![(i64::MAX, i64::MIN); usize::from(script.instruments)];
    let mut widen = |instrument: u16, price: i64| {
        let r = &mut ranges[usize::from(instrument)];
        *r = (r.0.min(price), r.1.max(price));
    };
    let mut instrument_of = Vec::new();
    for line in script.setup.iter().chain(&script.measured) {
        match line.op {
            Op::Place {
                instrument, price, ..
            } => {
                instrument_of.push(instrument);
                if let Some(p) = price {
                    widen(instrument, p);
                }
            }
            Op::PlaceWith { .. } => {
                let placed = line.op.orders_placed() as usize;
                instrument_of.extend(std::iter::repeat_n(u16::MAX, placed));
            }
            Op::Move { order, price, .. } => {
                let instrument = instrument_of.get(order as usize).copied();
                if let Some(i) = instrument.filter(|&i| i != u16::MAX) {
                    widen(i, price);
                }
            }
            _ => {}
        }
    }
    ranges
}

impl Floor {
    /// Ladders covering every price of `script`, room for every order it places.
    pub fn new(script: &Script) -> Self {
        let ladder = |len: usize| Ladder {
            levels: vec![NO_QUEUE; len],
            best: None,
        };
        let books = (price_ranges(script).into_iter())
            .map(|(low, high)| {
                let len = if low <= high {
                    (high - low + 1) as usize
                } else {
                    1
                };
                Book {
                    base: low.min(high),
                    bids: ladder(len),
                    asks: ladder(len),
                }
            })
            .collect();
        let placing: usize = (script.setup.iter().chain(&script.measured))
            .map(|l| l.op.orders_placed() as usize)
            .sum();
        Self {
            books,
            orders: vec![EMPTY; placing + 1],
            clients: ClientOrders::default(),
        }
    }

    /// Matches order `number` (its fields set, not resting) against the book; returns the
    /// lots left.
    fn take(&mut self, number: u32, limit: Option<u32>, out: &mut Outcome, record: bool) -> i64 {
        let taker = self.orders[number as usize];
        let maker_side = taker.side.opposite();
        let book = &mut self.books[usize::from(taker.instrument)];
        let base = book.base;
        let ladder = book.side(maker_side);
        let mut left = taker.remaining;
        while left > 0 {
            let Some(level) = ladder.best.filter(|&b| within(maker_side, b, limit)) else {
                break;
            };
            let queue = &mut ladder.levels[level as usize];
            let maker_number = queue.head;
            let maker = &mut self.orders[maker_number as usize];
            let amount = left.min(maker.remaining);
            maker.remaining -= amount;
            queue.lots -= amount;
            left -= amount;
            out.taken += amount;
            if record {
                out.fills.push(Fill {
                    instrument: taker.instrument,
                    taker: number,
                    maker: maker_number,
                    price: base + i64::from(level),
                    amount,
                });
            }
            if maker.remaining == 0 {
                maker.resting = false;
                queue.head = maker.next;
                if queue.head == NIL {
                    queue.tail = NIL;
                    ladder.best = next_best(&ladder.levels, maker_side, level);
                } else {
                    self.orders[queue.head as usize].prev = NIL;
                }
            }
        }
        left
    }

    /// Puts order `number` at the tail of its level.
    fn rest(&mut self, number: u32) {
        let order = self.orders[number as usize];
        let ladder = self.books[usize::from(order.instrument)].side(order.side);
        let queue = &mut ladder.levels[order.level as usize];
        let tail = queue.tail;
        queue.tail = number;
        queue.lots += order.remaining;
        if tail == NIL {
            queue.head = number;
        }
        let better = match (order.side, ladder.best) {
            (_, None) => true,
            (Side::Buy, Some(b)) => order.level > b,
            (Side::Sell, Some(b)) => order.level < b,
        };
        if better {
            ladder.best = Some(order.level);
        }
        let o = &mut self.orders[number as usize];
        (o.prev, o.next, o.resting) = (tail, NIL, true);
        if tail != NIL {
            self.orders[tail as usize].next = number;
        }
    }

    /// Takes order `number` out of its level.
    fn unlink(&mut self, number: u32) {
        let order = self.orders[number as usize];
        self.orders[number as usize].resting = false;
        if order.prev != NIL {
            self.orders[order.prev as usize].next = order.next;
        }
        if order.next != NIL {
            self.orders[order.next as usize].prev = order.prev;
        }
        let ladder = self.books[usize::from(order.instrument)].side(order.side);
        let queue = &mut ladder.levels[order.level as usize];
        queue.lots -= order.remaining;
        if queue.head == number {
            queue.head = order.next;
        }
        if queue.tail == number {
            queue.tail = order.prev;
        }
        if queue.head == NIL && ladder.best == Some(order.level) {
            ladder.best = next_best(&ladder.levels, order.side, order.level);
        }
    }

    /// Whether an order on `side` with `limit` would trade at once.
    fn crosses(&mut self, instrument: u16, side: Side, limit: Option<u32>) -> bool {
        let opposite = side.opposite();
        let ladder = self.books[usize::from(instrument)].side(opposite);
        ladder.best.is_some_and(|b| within(opposite, b, limit))
    }

    /// Lots resting against `side` within `limit`.
    fn available(&mut self, instrument: u16, side: Side, limit: Option<u32>) -> i64 {
        let opposite = side.opposite();
        let ladder = self.books[usize::from(instrument)].side(opposite);
        let Some(best) = ladder.best else {
            return 0;
        };
        let levels = &ladder.levels;
        let lots = |range: &mut dyn Iterator<Item = u32>| -> i64 {
            range
                .take_while(|&i| within(opposite, i, limit))
                .map(|i| levels[i as usize].lots)
                .sum()
        };
        match opposite {
            Side::Sell => lots(&mut (best..levels.len() as u32)),
            Side::Buy => lots(&mut (0..=best).rev()),
        }
    }

    /// Places order `number`: refused (post-only that would trade, fill-or-kill that
    /// cannot fill), or matched and, with what is left of a resting kind, rested.
    #[allow(clippy::too_many_arguments, reason = "the fields of one Place line")]
    fn place(
        &mut self,
        number: u32,
        (account, instrument, side): (u32, u16, Side),
        price: Option<i64>,
        amount: i64,
        tif: Tif,
        out: &mut Outcome,
        record: bool,
    ) -> Placed {
        let book = &self.books[usize::from(instrument)];
        let limit = price.map(|p| book.index(p));
        match tif {
            Tif::PostOnly if self.crosses(instrument, side, limit) => return Placed::Refused,
            Tif::Fok if self.available(instrument, side, limit) < amount => {
                return Placed::Refused;
            }
            _ => {}
        }
        self.orders[number as usize] = Order {
            level: limit.unwrap_or(0),
            remaining: amount,
            account,
            instrument,
            side,
            post_only: tif == Tif::PostOnly,
            ..EMPTY
        };
        let left = self.take(number, limit, out, record);
        if left > 0 && limit.is_some() && matches!(tif, Tif::Gtc | Tif::PostOnly) {
            self.orders[number as usize].remaining = left;
            self.rest(number);
            return Placed::Rested;
        }
        Placed::Gone
    }

    fn cancel(&mut self, account: u32, number: Option<u32>) -> bool {
        let Some(number) = number.filter(|&k| self.is_open(k, account)) else {
            return false;
        };
        self.unlink(number);
        true
    }

    fn is_open(&self, number: u32, account: u32) -> bool {
        (self.orders.get(number as usize)).is_some_and(|o| o.resting && o.account == account)
    }

    fn moved(&mut self, account: u32, number: u32, price: i64, out: &mut Outcome, record: bool) {
        if !self.is_open(number, account) {
            return;
        }
        let order = self.orders[number as usize];
        let level = self.books[usize::from(order.instrument)].index(price);
        if order.post_only && self.crosses(order.instrument, order.side, Some(level)) {
            return;
        }
        self.unlink(number);
        self.orders[number as usize].level = level;
        let left = self.take(number, Some(level), out, record);
        out.applied = true;
        if left > 0 {
            self.orders[number as usize].remaining = left;
            self.rest(number);
        }
    }
}

impl Venue for Floor {
    fn name(&self) -> &'static str {
        "floor"
    }

    fn apply(&mut self, line: &Line, number: u32, out: &mut Outcome, record: bool) {
        match line.op {
            Op::Deposit { .. } => out.applied = true,
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
                let order = (account, instrument, side);
                match self.place(number, order, price, amount, tif, out, record) {
                    Placed::Refused => {}
                    Placed::Rested => {
                        self.clients.rests(account, client, number);
                        out.applied = true;
                    }
                    Placed::Gone => out.applied = true,
                }
            }
            Op::Cancel { account, target } => {
                let number = self.clients.resolve(account, target);
                out.applied = self.cancel(account, number);
            }
            Op::Move {
                account,
                order,
                price,
            } => self.moved(account, order, price, out, record),
        }
    }

    fn top(&self, instrument: u16) -> (Level, Level) {
        let book = &self.books[usize::from(instrument)];
        let level = |ladder: &Ladder| {
            let best = ladder.best?;
            Some((
                book.base + i64::from(best),
                ladder.levels[best as usize].lots,
            ))
        };
        (level(&book.bids), level(&book.asks))
    }
}
