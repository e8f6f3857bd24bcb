//! The book sequence against a simple model: over random order flow, a book's sequence
//! rises by exactly one for every command after which its resting orders (L3: orders,
//! amounts and queue order) differ, and stays put otherwise. Streams number their book
//! updates with it, so a spurious or missing step would show clients a gap or a stale book.

#![warn(clippy::too_many_lines)]

mod common;

use common::{p, q, run};
use matchbook::{
    AccountId, BookView, CancelScope, Command, Engine, EventRecord, InstrumentId, NewOrder,
    OrderRef, OrderType, OrderView, Price, Side, TimeInForce, Timestamp,
};
use proptest::prelude::*;

const T0: i64 = 1_767_225_600_000_000_000;
const SECOND: i64 = 1_000_000_000;

/// One step of the random flow.
#[derive(Debug, Clone)]
enum Step {
    Limit {
        trader: usize,
        buy: bool,
        tick: i64,
        lots: i64,
        tif: u8,
    },
    Stop {
        trader: usize,
        buy: bool,
        trigger: i64,
        lots: i64,
    },
    Amend {
        pick: usize,
        tick: Option<i64>,
        lots: Option<i64>,
    },
    Cancel {
        pick: usize,
    },
    CancelAll {
        trader: usize,
    },
    Wait {
        seconds: i64,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0..3usize, any::<bool>(), -5..5i64, 1..4i64, 0..5u8).prop_map(
            |(trader, buy, tick, lots, tif)| Step::Limit { trader, buy, tick, lots, tif }
        ),
        1 => (0..3usize, any::<bool>(), -5..5i64, 1..4i64)
            .prop_map(|(trader, buy, trigger, lots)| Step::Stop { trader, buy, trigger, lots }),
        2 => (any::<usize>(), proptest::option::of(-5..5i64), proptest::option::of(1..5i64))
            .prop_map(|(pick, tick, lots)| Step::Amend { pick, tick, lots }),
        2 => any::<usize>().prop_map(|pick| Step::Cancel { pick }),
        1 => (0..3usize).prop_map(|trader| Step::CancelAll { trader }),
        1 => (1..3i64).prop_map(|seconds| Step::Wait { seconds }),
    ]
}

struct Exchange {
    engine: Engine,
    events: Vec<EventRecord>,
    traders: Vec<AccountId>,
    market: InstrumentId,
    now: i64,
}

impl Exchange {
    fn new() -> Self {
        let mut engine = Engine::new(matchbook::demo::config()).expect("demo");
        let mut events = Vec::new();
        let market = engine.instrument_by_code("BTC_EUR").expect("BTC_EUR");
        let (eur, btc) = (
            engine.currency_by_code("EUR").expect("EUR"),
            engine.currency_by_code("BTC").expect("BTC"),
        );
        let mut traders = Vec::new();
        for _ in 0..3 {
            let account = run(&mut engine, &mut events, T0, &Command::CreateHolder)
                .expect("holder")
                .account
                .expect("main");
            for currency in [eur, btc] {
                let deposit = Command::Deposit {
                    account,
                    currency,
                    amount: 1 << 50,
                };
                run(&mut engine, &mut events, T0, &deposit).expect("deposit");
            }
            traders.push(account);
        }
        Self {
            engine,
            events,
            traders,
            market,
            now: T0,
        }
    }

    fn book(&self) -> BookView<OrderView> {
        self.engine
            .book_orders(self.market, usize::MAX)
            .expect("book")
    }

    fn resting(&self) -> Vec<(AccountId, OrderRef)> {
        let book = self.book();
        (book.bids.iter().chain(&book.asks))
            .map(|o| (o.account, o.order))
            .collect()
    }

    fn price(tick: i64) -> Price {
        Price(p("50000").0 + tick * 100)
    }

    fn command(&self, step: &Step) -> Command {
        let side = |buy: bool| if buy { Side::Buy } else { Side::Sell };
        let lots = |n: i64| matchbook::Qty(q("0.01").0 * n);
        match *step {
            Step::Limit {
                trader,
                buy,
                tick,
                lots: n,
                tif,
            } => {
                let order = NewOrder::limit(
                    self.traders[trader],
                    self.market,
                    side(buy),
                    Self::price(tick),
                    lots(n),
                );
                let order = match tif {
                    0 => order.with_tif(TimeInForce::ImmediateOrCancelled),
                    1 => order.with_tif(TimeInForce::PostOnly),
                    2 => NewOrder {
                        time_in_force: TimeInForce::GoodTillTime,
                        expire_at: Some(Timestamp(self.now + SECOND)),
                        ..order
                    },
                    _ => order,
                };
                Command::PlaceOrder(order)
            }
            Step::Stop {
                trader,
                buy,
                trigger,
                lots: n,
            } => Command::PlaceOrder(NewOrder {
                order_type: OrderType::Stop,
                trigger_price: Some(Self::price(trigger)),
                ..NewOrder::limit(
                    self.traders[trader],
                    self.market,
                    side(buy),
                    Self::price(trigger),
                    lots(n),
                )
            }),
            Step::Amend {
                pick,
                tick,
                lots: n,
            } => {
                let resting = self.resting();
                let Some(&(account, order)) = resting.get(pick % resting.len().max(1)) else {
                    return Command::AdvanceTime;
                };
                Command::AmendOrder {
                    account,
                    order,
                    amount: n.map(lots),
                    price: tick.map(Self::price).or(Some(self.engine_price(order))),
                }
            }
            Step::Cancel { pick } => {
                let resting = self.resting();
                let Some(&(account, order)) = resting.get(pick % resting.len().max(1)) else {
                    return Command::AdvanceTime;
                };
                Command::CancelOrder { account, order }
            }
            Step::CancelAll { trader } => Command::CancelAll {
                account: self.traders[trader],
                scope: CancelScope::All,
            },
            Step::Wait { .. } => Command::AdvanceTime,
        }
    }

    /// The price an order rests at (amending to it keeps the price).
    fn engine_price(&self, order: OrderRef) -> Price {
        let book = self.book();
        (book.bids.iter().chain(&book.asks))
            .find(|o| o.order == order)
            .map_or(Self::price(0), |o| o.price)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_book_sequence_counts_the_commands_that_changed_the_book(
        steps in proptest::collection::vec(step(), 1..120)
    ) {
        let mut exchange = Exchange::new();
        for step in &steps {
            if let Step::Wait { seconds } = step {
                exchange.now += seconds * SECOND;
            }
            let command = exchange.command(step);
            let before = exchange.book();
            let now = exchange.now;
            let _ = run(&mut exchange.engine, &mut exchange.events, now, &command);
            let after = exchange.book();
            let changed = (before.bids, before.asks) != (after.bids.clone(), after.asks.clone());
            prop_assert_eq!(
                after.sequence,
                before.sequence + u64::from(changed),
                "{:?} changed the book: {}", command, changed
            );
        }
    }
}
