//! Seeded workload generators that write [`Script`]s, one per profile of the harness
//! (`benches/README.md` describes each). The generator replays what it writes through
//! matchbook as it goes, so every cancel and move names an order that is live at that point
//! and the book holds its target size; the file itself is engine-neutral.

use std::collections::BTreeMap;

use crate::rng::SplitMix64;
use crate::script::{Line, Op, OrderCounter, Script, Side, Target, Tif};
use crate::venues::matchbook::Matchbook;
use crate::venues::{Outcome, Venue};

/// Time of the first command; each later command is one microsecond after the previous one.
pub const START: i64 = 1_767_225_600_000_000_000;

/// Price every book starts around, in ticks.
pub const START_PRICE: i64 = 1_000_000;

/// Whole quote units (tick x lots) each account is given: 2 x 10^18 balance units at the
/// quote's 8 decimals, half the engine's per-balance limit (`limits::MAX_BALANCE`), so the
/// deposit is taken and what sells bring in still fits. (5 x 10^10 was refused by the
/// limit, leaving every buy unfunded when balances were on.)
pub const QUOTE_FUNDING: i64 = 20_000_000_000;

/// Whole base units (lots) each account is given per instrument it trades.
pub const BASE_FUNDING: i64 = 1_000_000_000;

/// Shape of a generated workload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Profile {
    /// Name used on the command line and in reports.
    pub name: &'static str,
    /// Instruments; each command picks one uniformly.
    pub instruments: u16,
    /// Accounts; account `a` trades instrument `a % instruments` (so deposits stay few).
    pub accounts: u32,
    /// Resting orders per instrument the generator holds the book around.
    pub target_orders: usize,
    /// Ticks from the last trade over which passive orders spread, per side.
    pub price_span: i64,
    /// Share of new passive (GTC) orders while the book is at its target size; it rises
    /// below the target and falls above it.
    pub gtc: f64,
    /// Share of IOC orders priced to sweep a few ticks past the last trade.
    pub ioc: f64,
    /// Share of cancels; the rest of the commands are moves.
    pub cancel: f64,
    /// Cancels and moves pick among the newest live orders (market makers re-quoting)
    /// instead of the oldest.
    pub newest_first: bool,
    /// Share of passive orders placed 10 to 100 spans away from the last trade.
    pub far: f64,
    /// Chance per command that the fair price jumps by 5 to 20 spans.
    pub jump: f64,
}

/// exchange-core's published mix (DESIGN section 6).
pub const EXCHANGE_CORE: Profile = Profile {
    name: "exchange-core",
    instruments: 1,
    accounts: 2_000,
    target_orders: 1_000,
    price_span: 400,
    gtc: 0.09,
    ioc: 0.03,
    cancel: 0.06,
    newest_first: false,
    far: 0.0,
    jump: 0.0,
};

/// The same mix on a book of 100,000 resting orders.
pub const DEEP_BOOK: Profile = Profile {
    name: "deep-book",
    target_orders: 100_000,
    price_span: 2_000,
    ..EXCHANGE_CORE
};

/// Market makers re-quoting: most commands are new quotes near the touch and cancels of
/// recent ones.
pub const CANCEL_HEAVY: Profile = Profile {
    name: "cancel-heavy",
    target_orders: 5_000,
    price_span: 50,
    gtc: 0.50,
    ioc: 0.03,
    cancel: 0.45,
    newest_first: true,
    ..EXCHANGE_CORE
};

/// Orders far from the touch and sudden moves of the price that IOC orders chase.
pub const PRICE_JUMPS: Profile = Profile {
    name: "price-jumps",
    far: 0.10,
    jump: 0.0005,
    ..EXCHANGE_CORE
};

/// Hundreds of instruments and tens of thousands of accounts.
pub const MANY_MARKETS: Profile = Profile {
    name: "many-markets",
    instruments: 200,
    accounts: 20_000,
    target_orders: 100,
    price_span: 100,
    ..EXCHANGE_CORE
};

/// Every profile, in report order.
pub const PROFILES: [Profile; 5] = [
    EXCHANGE_CORE,
    DEEP_BOOK,
    CANCEL_HEAVY,
    PRICE_JUMPS,
    MANY_MARKETS,
];

/// The profile of that name.
pub fn by_name(name: &str) -> Option<Profile> {
    PROFILES.iter().copied().find(|p| p.name == name)
}

#[derive(Debug, Clone, Copy)]
struct Live {
    account: u32,
    side: Side,
    price: i64,
    remaining: i64,
}

#[derive(Debug, Default)]
struct Market {
    /// Live orders by number (age order).
    live: BTreeMap<u32, Live>,
    last: i64,
    /// Where IOC orders aim: the last trade, or where a jump moved the price to.
    fair: i64,
}

struct Generator {
    profile: Profile,
    rng: SplitMix64,
    engine: Matchbook,
    markets: Vec<Market>,
    /// Instrument of each live order, by number.
    instrument_of: BTreeMap<u32, u16>,
    numbers: OrderCounter,
    time: i64,
    out: Outcome,
}

impl Generator {
    fn size(&mut self) -> i64 {
        let r = self.rng.below(6) as i64;
        1 + r * r * r
    }

    fn side(&mut self) -> Side {
        if self.rng.chance(0.5) {
            Side::Buy
        } else {
            Side::Sell
        }
    }

    fn account(&mut self, instrument: u16) -> u32 {
        let per = (self.profile.accounts / u32::from(self.profile.instruments)).max(1);
        let k = self.rng.below(u64::from(per)) as u32;
        (k * u32::from(self.profile.instruments) + u32::from(instrument))
            .min(self.profile.accounts - 1)
    }

    fn passive(&mut self, instrument: u16) -> Op {
        let side = self.side();
        let u = self.rng.unit();
        let span = self.profile.price_span;
        let mut offset = 1 + (u * u * span as f64) as i64;
        if self.profile.far > 0.0 && self.rng.chance(self.profile.far) {
            offset = span * (10 + self.rng.below(91) as i64);
        }
        let last = self.markets[usize::from(instrument)].last;
        let price = match side {
            Side::Buy => last - offset,
            Side::Sell => last + offset,
        };
        Op::Place {
            account: self.account(instrument),
            instrument,
            side,
            price: Some(price.max(1)),
            amount: self.size(),
            tif: Tif::Gtc,
            client: None,
        }
    }

    fn sweep(&mut self, instrument: u16) -> Op {
        let side = self.side();
        let reach = 1 + self.rng.below(8) as i64;
        let fair = self.markets[usize::from(instrument)].fair;
        let price = match side {
            Side::Buy => fair + reach,
            Side::Sell => fair - reach,
        };
        Op::Place {
            account: self.account(instrument),
            instrument,
            side,
            price: Some(price.max(1)),
            amount: self.size(),
            tif: Tif::Ioc,
            client: None,
        }
    }

    /// One of the 128 oldest (or newest) live orders of an instrument.
    fn pick(&mut self, instrument: u16) -> Option<(u32, Live)> {
        let live = &self.markets[usize::from(instrument)].live;
        let window = live.len().min(128) as u64;
        if window == 0 {
            return None;
        }
        let k = self.rng.below(window) as usize;
        let found = if self.profile.newest_first {
            live.iter().nth_back(k)
        } else {
            live.iter().nth(k)
        };
        found.map(|(n, l)| (*n, *l))
    }

    fn next_op(&mut self) -> Op {
        let instrument = self.rng.below(u64::from(self.profile.instruments)) as u16;
        let p = self.profile;
        if p.jump > 0.0 && self.rng.chance(p.jump) {
            let spans = 5 + self.rng.below(16) as i64;
            let sign = if self.rng.chance(0.5) { 1 } else { -1 };
            let m = &mut self.markets[usize::from(instrument)];
            m.fair = (m.last + sign * spans * p.price_span).max(p.price_span * 200);
        }
        let n = self.markets[usize::from(instrument)].live.len();
        let target = p.target_orders;
        let gtc = if n < target * 95 / 100 {
            (p.gtc * 1.7).min(0.9)
        } else if n > target * 105 / 100 {
            p.gtc * 0.45
        } else {
            p.gtc
        };
        let r = self.rng.unit();
        if r < gtc {
            return self.passive(instrument);
        }
        if r < gtc + p.ioc {
            return self.sweep(instrument);
        }
        let Some((number, order)) = self.pick(instrument) else {
            return self.passive(instrument);
        };
        if r < gtc + p.ioc + p.cancel {
            return Op::Cancel {
                account: order.account,
                target: Target::Order(number),
            };
        }
        // Toward the last trade by up to half the distance (at least a tick), so old orders
        // drift to the touch and some cross it; an order at the last price steps back.
        let distance = self.markets[usize::from(instrument)].last - order.price;
        let step = if distance != 0 {
            distance.signum() * (1 + self.rng.below(distance.unsigned_abs() / 2 + 1) as i64)
        } else if order.side == Side::Buy {
            -1
        } else {
            1
        };
        Op::Move {
            account: order.account,
            order: number,
            price: (order.price + step).max(1),
        }
    }

    /// Applies `op` to the generator's engine, follows the live orders, returns the line.
    fn apply(&mut self, op: Op) -> Line {
        self.time += 1_000;
        let line = Line {
            time: self.time,
            op,
        };
        self.out.clear();
        let number = self.numbers.number(&line);
        self.engine.apply(&line, number, &mut self.out, true);
        for fill in &self.out.fills {
            let m = &mut self.markets[usize::from(fill.instrument)];
            m.last = fill.price;
            m.fair = fill.price;
            if let Some(maker) = m.live.get_mut(&fill.maker) {
                maker.remaining -= fill.amount;
                if maker.remaining <= 0 {
                    m.live.remove(&fill.maker);
                    self.instrument_of.remove(&fill.maker);
                }
            }
        }
        match op {
            Op::Place {
                account,
                instrument,
                side,
                price: Some(price),
                amount,
                tif: Tif::Gtc | Tif::PostOnly,
                ..
            } => {
                let left = amount - self.out.taken;
                if self.out.applied && left > 0 {
                    self.markets[usize::from(instrument)].live.insert(
                        number,
                        Live {
                            account,
                            side,
                            price,
                            remaining: left,
                        },
                    );
                    self.instrument_of.insert(number, instrument);
                }
            }
            Op::Cancel {
                target: Target::Order(k),
                ..
            } if self.out.applied => {
                if let Some(i) = self.instrument_of.remove(&k) {
                    self.markets[usize::from(i)].live.remove(&k);
                }
            }
            Op::Move { order, price, .. } if self.out.applied => {
                if let Some(&i) = self.instrument_of.get(&order) {
                    let m = &mut self.markets[usize::from(i)];
                    // What a crossing move took came back as fills, with this order the
                    // taker; what is left rests at the new price.
                    let taken = self.out.taken;
                    if let Some(live) = m.live.get_mut(&order) {
                        live.price = price;
                        live.remaining -= taken;
                        if live.remaining <= 0 {
                            m.live.remove(&order);
                            self.instrument_of.remove(&order);
                        }
                    }
                }
            }
            _ => {}
        }
        line
    }
}

/// Generates `n` measured commands of `profile` from `seed`, after a set-up that funds every
/// account (used when balances are on) and fills each book to its target size.
pub fn generate(profile: Profile, seed: u64, n: usize) -> Script {
    let mut script = Script {
        name: profile.name.to_owned(),
        instruments: profile.instruments,
        accounts: profile.accounts,
        ..Script::default()
    };
    let mut g = Generator {
        profile,
        rng: SplitMix64::new(seed),
        engine: Matchbook::new(&script, false),
        markets: (0..profile.instruments)
            .map(|_| Market {
                last: START_PRICE,
                fair: START_PRICE,
                ..Market::default()
            })
            .collect(),
        instrument_of: BTreeMap::new(),
        numbers: OrderCounter::default(),
        time: START,
        out: Outcome::default(),
    };
    for account in 0..profile.accounts {
        let instrument = (account % u32::from(profile.instruments)) as u16;
        script.setup.push(g.apply(Op::Deposit {
            account,
            currency: 0,
            amount: QUOTE_FUNDING,
        }));
        script.setup.push(g.apply(Op::Deposit {
            account,
            currency: 1 + instrument,
            amount: BASE_FUNDING,
        }));
    }
    for instrument in 0..profile.instruments {
        while g.markets[usize::from(instrument)].live.len() < profile.target_orders {
            let op = g.passive(instrument);
            script.setup.push(g.apply(op));
        }
    }
    script.measured.reserve(n);
    for _ in 0..n {
        let op = g.next_op();
        script.measured.push(g.apply(op));
    }
    script
}
