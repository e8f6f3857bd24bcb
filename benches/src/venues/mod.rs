//! Engines the harness replays a [`Script`] through, behind one small trait: matchbook
//! itself (book only, or with balances and fees), a deliberately simple reference book that
//! every other engine's fills are checked against, the floor (the bare-book limit matchbook
//! is measured against), and adapters for order books published on crates.io. Each adapter translates commands only; what an engine cannot do is listed in
//! [`Venue::gaps`] and either emulated (said so) or skipped, never faked.

pub mod check;
pub mod floor;
pub mod lobster;
pub mod matchbook;
pub mod matchcore;
pub mod null;
pub mod orderbook_rs;
pub mod reference;
pub mod rust_order_book;

use std::collections::HashMap;

use crate::script::{Line, Script, Target};

/// One fill as every engine reports it, in the file's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fill {
    /// Instrument.
    pub instrument: u16,
    /// Order number (in the file) of the incoming order.
    pub taker: u32,
    /// Order number of the resting order it met.
    pub maker: u32,
    /// Price in ticks.
    pub price: i64,
    /// Lots.
    pub amount: i64,
}

/// What one command did, in the terms every engine can report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Fills, in the order the engine made them; empty when the engine does not report
    /// them one by one (see [`Venue::reports_fills`]).
    pub fills: Vec<Fill>,
    /// Lots the command's own order took from the book.
    pub taken: i64,
    /// Whether the command was applied (false: refused, or skipped as unsupported).
    pub applied: bool,
}

impl Outcome {
    /// Clears it for the next command, keeping its buffer.
    pub fn clear(&mut self) {
        self.fills.clear();
        self.taken = 0;
        self.applied = false;
    }
}

/// A feature an engine lacks and how the adapter deals with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    /// The feature.
    pub feature: &'static str,
    /// Emulated (with what) or skipped.
    pub handling: &'static str,
}

/// Best price and the lots resting there.
pub type Level = Option<(i64, i64)>;

/// An order book the harness can drive.
pub trait Venue {
    /// Name used on the command line and in reports.
    fn name(&self) -> &'static str;

    /// Applies one command. `number` is the order number a placing line's order takes
    /// (what `#k` names; [`OrderCounter`](crate::script::OrderCounter) hands it out). `out`
    /// is cleared by the caller; with `record` on, the adapter fills in everything
    /// [`Outcome`] holds, otherwise only `applied` (timed runs).
    fn apply(&mut self, line: &Line, number: u32, out: &mut Outcome, record: bool);

    /// Told the lines after the one about to be applied (none, one or more), so the
    /// engine can have what the next one names fetched while the current one runs, as a
    /// matching stage that holds a batch does; nothing by default.
    fn look_ahead(&self, _upcoming: &[Line]) {}

    /// Best bid and best ask of an instrument, as (price, lots at that price). May cost a
    /// walk of the book for engines without a per-level total.
    fn top(&self, instrument: u16) -> (Level, Level);

    /// Best bid and best ask prices only (cheap on every engine); by default from
    /// [`Venue::top`].
    fn best(&self, instrument: u16) -> (Option<i64>, Option<i64>) {
        let (bid, ask) = self.top(instrument);
        (bid.map(|l| l.0), ask.map(|l| l.0))
    }

    /// Whether [`Outcome::fills`] lists fills one by one.
    fn reports_fills(&self) -> bool {
        true
    }

    /// Features the engine lacks.
    fn gaps(&self) -> &'static [Gap] {
        &[]
    }

    /// Whether it places the order types beyond limit and market (`PlaceWith` lines).
    fn places_extended_orders(&self) -> bool {
        false
    }
}

/// Names accepted by `--engine`, in report order.
pub const NAMES: [&str; 9] = [
    "matchbook",
    "matchbook-balances",
    "floor",
    "reference",
    "rust-order-book",
    "lobster",
    "orderbook-rs",
    "matchcore",
    "null",
];

/// A fresh engine of the given name, prepared for `script` (accounts created, nothing
/// applied yet), or `None` for an unknown name.
pub fn open(name: &str, script: &Script) -> Option<Box<dyn Venue>> {
    Some(match name {
        "matchbook" => Box::new(matchbook::Matchbook::new(script, false)),
        "matchbook-balances" => Box::new(matchbook::Matchbook::new(script, true)),
        "floor" => Box::new(floor::Floor::new(script)),
        "reference" => Box::new(reference::ReferenceBook::new(script)),
        "rust-order-book" => Box::new(rust_order_book::RustOrderBook::new(script)),
        "lobster" => Box::new(lobster::Lobster::new(script)),
        "matchcore" => Box::new(matchcore::Matchcore::new(script)),
        "null" => Box::new(null::Null::default()),
        "orderbook-rs" => Box::new(orderbook_rs::OrderbookRs::new(script)),
        _ => return None,
    })
}

/// Per-instrument table from the file's order numbers to an engine's own order ids, grown
/// as orders are placed (indexing, no hashing, on the timed path).
#[derive(Debug)]
pub struct OrderIds<T: Copy> {
    ids: Vec<Option<T>>,
}

impl<T: Copy> Default for OrderIds<T> {
    fn default() -> Self {
        Self { ids: Vec::new() }
    }
}

impl<T: Copy> OrderIds<T> {
    /// Records the id order `k` got (`None`: refused or fully filled at once).
    pub fn set(&mut self, k: u32, id: Option<T>) {
        let k = k as usize;
        if self.ids.len() <= k {
            self.ids.resize(k + 1, None);
        }
        self.ids[k] = id;
    }
    /// The id of order `k`, if it was accepted.
    pub fn get(&self, k: u32) -> Option<T> {
        self.ids.get(k as usize).copied().flatten()
    }
    /// Where the entry of order `k` is (0: past the table), for a prefetch hint.
    pub fn address(&self, k: u32) -> usize {
        self.ids
            .get(k as usize)
            .map_or(0, |entry| entry as *const Option<T> as usize)
    }
    /// A table with room for every order `script` places.
    pub fn for_script(script: &crate::script::Script) -> Self {
        let mut ids = Self::default();
        ids.reserve(script.setup.len() + script.measured.len());
        ids
    }
    /// Makes room for `n` orders, written now: a number's first use on the timed path
    /// then faults no fresh page in (reserving alone left some 900 page faults in 1 M
    /// exchange-core commands, every one charged to the venue being timed).
    pub fn reserve(&mut self, n: usize) {
        if self.ids.len() < n {
            self.ids.resize(n, None);
        }
    }
}

/// Client order ids for engines that have none: the open order each (account, client id)
/// names, resolved when a cancel names it.
#[derive(Debug, Default)]
pub struct ClientOrders {
    open: HashMap<(u32, u64), u32>,
}

impl ClientOrders {
    /// Order `number` of `account` rests with `client` (if any).
    pub fn rests(&mut self, account: u32, client: Option<u64>, number: u32) {
        if let Some(c) = client {
            self.open.insert((account, c), number);
        }
    }
    /// The order number a cancel names (a client id is forgotten once used).
    pub fn resolve(&mut self, account: u32, target: Target) -> Option<u32> {
        match target {
            Target::Order(k) => Some(k),
            Target::Client(c) => self.open.remove(&(account, c)),
        }
    }
}
