//! Every engine the harness drives makes the same trades as the reference book on random
//! small workloads limited to the features they share, so the comparison measures the same
//! work; matchbook is also checked on every feature the format has (FOK, post-only, market
//! orders, cancels by client id). On a mismatch the test prints the workload file up to the
//! command that diverged: a ready reproducer.

#![warn(clippy::too_many_lines)]

use matchbook_bench::rng::SplitMix64;
use matchbook_bench::script::{Line, Op, Script, Side, Target, Tif};
use matchbook_bench::venues;

/// Which order features a workload may use.
#[derive(Clone, Copy)]
struct Features {
    fok: bool,
    market: bool,
    /// Market orders may be fill-or-kill (not only IOC).
    market_fok: bool,
    client_ids: bool,
}

const ALL: Features = Features {
    fok: true,
    market: true,
    market_fok: true,
    client_ids: true,
};

/// A random workload on two instruments around price 100 with a few accounts; cancels and
/// moves name earlier orders of the right account, live or not.
fn workload(seed: u64, n: usize, features: Features) -> Script {
    let mut script = Script {
        name: format!("random-{seed}"),
        instruments: 2,
        accounts: 4,
        ..Script::default()
    };
    let mut time = 1_767_225_600_000_000_000i64;
    for account in 0..script.accounts {
        for currency in 0..=script.instruments {
            time += 1;
            script.setup.push(Line {
                time,
                op: Op::Deposit {
                    account,
                    currency,
                    amount: 1_000_000_000,
                },
            });
        }
    }
    let mut generator = Generator {
        rng: SplitMix64::new(seed),
        features,
        orders: Vec::new(),
        client: 0,
    };
    for _ in 0..n {
        time += 1;
        let op = generator.next_op();
        script.measured.push(Line { time, op });
    }
    script
}

/// Draws the commands of a random workload.
struct Generator {
    rng: SplitMix64,
    features: Features,
    /// (account, price, movable) of every order placed, by number: post-only orders are
    /// not moved, since engines disagree on a move that would cross (refused, kept, or
    /// dropped).
    orders: Vec<(u32, i64, bool)>,
    /// The last client id given.
    client: u64,
}

impl Generator {
    /// A new order (55 %), a cancel (20 %) or a move (25 %) of an earlier order.
    fn next_op(&mut self) -> Op {
        let account = self.rng.below(4) as u32;
        let r = self.rng.below(100);
        if r < 55 || self.orders.is_empty() {
            return self.place(account);
        }
        let k = self.rng.below(self.orders.len() as u64) as u32;
        let (owner, price, movable) = self.orders[k as usize];
        if r < 75 || !movable {
            let target = if self.features.client_ids && self.client > 0 && self.rng.chance(0.2) {
                Target::Client(1 + self.rng.below(self.client))
            } else {
                Target::Order(k)
            };
            return Op::Cancel {
                account: owner,
                target,
            };
        }
        let step = 1 + self.rng.below(4) as i64;
        let new_price = if self.rng.chance(0.5) {
            price + step
        } else {
            price - step
        };
        self.orders[k as usize].1 = new_price;
        Op::Move {
            account: owner,
            order: k,
            price: new_price,
        }
    }

    /// A new order of `account`: its side, price, time in force, market or limit and
    /// client id drawn.
    fn place(&mut self, account: u32) -> Op {
        let (rng, features) = (&mut self.rng, self.features);
        let side = if rng.chance(0.5) {
            Side::Buy
        } else {
            Side::Sell
        };
        let price = 95 + rng.below(11) as i64;
        let tif = match rng.below(10) {
            0..=5 => Tif::Gtc,
            6 | 7 => Tif::Ioc,
            8 => Tif::PostOnly,
            _ if features.fok => Tif::Fok,
            _ => Tif::Gtc,
        };
        let market = features.market
            && (tif == Tif::Ioc || (tif == Tif::Fok && features.market_fok))
            && rng.chance(0.2);
        let use_client = features.client_ids && tif == Tif::Gtc && rng.chance(0.3);
        self.client += u64::from(use_client);
        self.orders.push((account, price, tif != Tif::PostOnly));
        Op::Place {
            account,
            instrument: rng.below(2) as u16,
            side,
            price: (!market).then_some(price),
            amount: 1 + rng.below(9) as i64,
            tif,
            client: use_client.then_some(self.client),
        }
    }
}

fn agrees_with_reference(name: &str, script: &Script) {
    if let Err(d) = venues::check::against_reference(name, script) {
        panic!(
            "{name} differs from the reference at `{}`:\n  {name}: {}\n  reference: {}\nreproducer:\n{}",
            d.line, d.got, d.want, d.reproducer
        );
    }
}

#[test]
fn matchbook_agrees_with_the_reference_on_every_feature() {
    for seed in 0..30 {
        let script = workload(seed, 400, ALL);
        agrees_with_reference("matchbook", &script);
        agrees_with_reference("matchbook-balances", &script);
    }
}

#[test]
fn the_floor_agrees_with_the_reference_on_every_feature() {
    for seed in 0..30 {
        agrees_with_reference("floor", &workload(seed, 400, ALL));
    }
}

#[test]
fn peers_agree_with_the_reference_where_features_overlap() {
    // Every peer has limit orders (GTC, IOC, post-only, some emulated), cancels and moves;
    // market and fill-or-kill orders are left to the peers that have them.
    let common = Features {
        fok: false,
        market: false,
        market_fok: false,
        client_ids: true,
    };
    for seed in 0..30 {
        let script = workload(seed, 400, common);
        for name in ["rust-order-book", "lobster", "orderbook-rs"] {
            agrees_with_reference(name, &script);
        }
    }
    let with_fok_and_market = Features {
        fok: true,
        market: true,
        market_fok: false,
        client_ids: false,
    };
    for seed in 100..130 {
        let script = workload(seed, 400, with_fok_and_market);
        agrees_with_reference("rust-order-book", &script);
        agrees_with_reference("orderbook-rs", &script);
    }
}

/// matchcore 0.4 trades through its limit price: a peer found incorrect is reported, not
/// timed. When a later version passes, this test says so and the report must change.
#[test]
fn matchcore_is_caught_trading_through_its_limit() {
    let common = Features {
        fok: false,
        market: false,
        market_fok: false,
        client_ids: false,
    };
    let divergence = (0..30)
        .find_map(|seed| {
            venues::check::against_reference("matchcore", &workload(seed, 400, common)).err()
        })
        .expect("matchcore still diverges from the reference");
    let fill = divergence.through_limit.unwrap_or_else(|| {
        panic!(
            "a different divergence: {}\n{}\n{}",
            divergence.got, divergence.want, divergence.reproducer
        )
    });
    eprintln!("{fill:?}\n{}", divergence.reproducer);
    let lines = divergence.reproducer.lines().count();
    assert!(lines < 40, "shrunk to {lines} lines");
}

#[test]
fn generated_workloads_round_trip_through_the_text_format() {
    let script = workload(7, 500, ALL);
    assert_eq!(Script::parse(&script.to_text()), Ok(script));
}
