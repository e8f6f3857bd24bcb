//! The hub's copy of every order book as price levels, kept from the published events one
//! command at a time, so `ORDER_BOOK` updates and `BOOK_TICKER` ticks are computed once,
//! off the matching thread, without reading the engine.
//!
//! It counts a command as a change of a book exactly when the engine raises that book's
//! sequence (an order booked, a resting order traded, cancelled, or amended to something
//! else), so the `sequence` of every update is the one REST shows for the same book. It
//! starts from the engine replica's resting orders at a known command.

use std::collections::{BTreeMap, HashMap};

use matchbook::{Engine, Event, EventRecord, InstrumentId, OrderRef, Price, Qty, Side};

/// One resting order as the copy needs it to undo it.
#[derive(Debug, Clone, Copy)]
struct Resting {
    instrument: InstrumentId,
    side: Side,
    price: i64,
    remaining: i64,
}

/// One book: amount per price per side, and its book sequence.
#[derive(Debug, Default, Clone)]
pub struct BookCopy {
    /// Bids: price -> amount resting.
    pub bids: BTreeMap<i64, i64>,
    /// Asks: price -> amount resting.
    pub asks: BTreeMap<i64, i64>,
    /// The book sequence (commands that changed it).
    pub sequence: u64,
}

/// The best bid and ask with their amounts.
pub type Top = (Option<(Price, Qty)>, Option<(Price, Qty)>);

impl BookCopy {
    fn side_mut(&mut self, side: Side) -> &mut BTreeMap<i64, i64> {
        match side {
            Side::Buy => &mut self.bids,
            Side::Sell => &mut self.asks,
        }
    }

    /// The amount resting at `price` on `side` (0: no level).
    pub fn amount(&self, side: Side, price: i64) -> i64 {
        let levels = match side {
            Side::Buy => &self.bids,
            Side::Sell => &self.asks,
        };
        levels.get(&price).copied().unwrap_or(0)
    }

    fn add(&mut self, side: Side, price: i64, delta: i64) {
        let levels = self.side_mut(side);
        let amount = levels.entry(price).or_insert(0);
        *amount += delta;
        if *amount <= 0 {
            levels.remove(&price);
        }
    }

    /// The best bid and ask.
    pub fn top(&self) -> Top {
        let level = |(&p, &a): (&i64, &i64)| (Price(p), Qty(a));
        (
            self.bids.iter().next_back().map(level),
            self.asks.iter().next().map(level),
        )
    }
}

/// What one command did to one book.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BookChange {
    /// The market.
    pub instrument: InstrumentId,
    /// Its book sequence after the command.
    pub sequence: u64,
    /// Every level touched, with its amount after the command (0: gone), in the order
    /// first touched.
    pub levels: Vec<(Side, Price, Qty)>,
    /// The top after the command, when it differs from the top before it.
    pub new_top: Option<Top>,
}

/// A book the command being applied touched.
#[derive(Debug)]
struct Touched {
    index: usize,
    top_before: Top,
    levels: Vec<(Side, i64)>,
}

/// Every book of the exchange.
#[derive(Debug, Default)]
pub struct Books {
    books: Vec<BookCopy>,
    resting: HashMap<OrderRef, Resting>,
    touched: Vec<Touched>,
}

impl Books {
    /// The copy of the books of `engine` (the replica, at a command boundary).
    pub fn of(engine: &Engine) -> Self {
        let mut books = Self::default();
        for (index, _) in engine.instruments().iter().enumerate() {
            let id = InstrumentId(u16::try_from(index).unwrap_or(u16::MAX));
            let mut copy = BookCopy::default();
            if let Ok(view) = engine.book_orders(id, usize::MAX) {
                copy.sequence = view.sequence;
                for (side, orders) in [(Side::Buy, &view.bids), (Side::Sell, &view.asks)] {
                    for o in orders {
                        copy.add(side, o.price.0, o.amount.0);
                        let resting = Resting {
                            instrument: id,
                            side,
                            price: o.price.0,
                            remaining: o.amount.0,
                        };
                        books.resting.insert(o.order, resting);
                    }
                }
            }
            books.books.push(copy);
        }
        books
    }

    /// One book, if the market exists.
    pub fn book(&self, id: InstrumentId) -> Option<&BookCopy> {
        self.books.get(usize::from(id.0))
    }

    /// Applies the events of one command; returns the books it changed.
    pub fn apply(&mut self, events: &[EventRecord]) -> Vec<BookChange> {
        for record in events {
            self.on_event(&record.event);
        }
        let touched = std::mem::take(&mut self.touched);
        touched
            .into_iter()
            .filter_map(|touched| {
                let book = self.books.get_mut(touched.index)?;
                book.sequence += 1;
                let top = book.top();
                Some(BookChange {
                    instrument: InstrumentId(u16::try_from(touched.index).ok()?),
                    sequence: book.sequence,
                    levels: (touched.levels.into_iter())
                        .map(|(side, p)| (side, Price(p), Qty(book.amount(side, p))))
                        .collect(),
                    new_top: (top != touched.top_before).then_some(top),
                })
            })
            .collect()
    }

    fn on_event(&mut self, event: &Event) {
        match *event {
            Event::OrderBooked {
                order,
                instrument,
                side,
                price,
                remaining,
            } => {
                let resting = Resting {
                    instrument,
                    side,
                    price: price.0,
                    remaining: remaining.0,
                };
                self.resting.insert(order, resting);
                self.change(instrument, side, price.0, remaining.0);
            }
            Event::Trade(trade) => {
                // What the book showed less the fill: an iceberg's hidden reserve is never
                // shown (its next part arrives as a new `OrderBooked`).
                if let Some(r) = self.resting.get_mut(&trade.maker) {
                    let r = *r;
                    self.set_remaining(trade.maker, r, r.remaining - trade.amount.0);
                }
            }
            Event::OrderCancelled { order, .. } => {
                if let Some(&r) = self.resting.get(&order) {
                    self.set_remaining(order, r, 0);
                }
            }
            Event::OrderAmended {
                order,
                remaining,
                kept_priority,
                ..
            } => {
                let Some(&r) = self.resting.get(&order) else {
                    return;
                };
                if !kept_priority {
                    // Off the book: it trades or is booked again by the events that follow.
                    self.set_remaining(order, r, 0);
                } else if remaining.0 != r.remaining {
                    self.set_remaining(order, r, remaining.0);
                }
            }
            _ => {}
        }
    }

    /// Sets a resting order's remaining amount (0: it left the book).
    fn set_remaining(&mut self, order: OrderRef, r: Resting, remaining: i64) {
        if remaining == 0 {
            self.resting.remove(&order);
        } else if let Some(entry) = self.resting.get_mut(&order) {
            entry.remaining = remaining;
        }
        self.change(r.instrument, r.side, r.price, remaining - r.remaining);
    }

    fn change(&mut self, instrument: InstrumentId, side: Side, price: i64, delta: i64) {
        let index = usize::from(instrument.0);
        let Some(book) = self.books.get_mut(index) else {
            return;
        };
        let position = match self.touched.iter().position(|t| t.index == index) {
            Some(position) => position,
            None => {
                self.touched.push(Touched {
                    index,
                    top_before: book.top(),
                    levels: Vec::new(),
                });
                self.touched.len() - 1
            }
        };
        book.add(side, price, delta);
        let levels = &mut self.touched[position].levels;
        if !levels.contains(&(side, price)) {
            levels.push((side, price));
        }
    }
}
