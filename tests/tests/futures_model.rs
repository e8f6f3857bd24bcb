//! Futures state machine: random order entry (limit and market, every time in force,
//! reduce-only), cancels, index moves, time jumps across funding settlements and
//! liquidations on the demo perpetual, with the futures invariants checked after every
//! command against an independent computation:
//! - long open interest equals short open interest, and equals the engine's figure;
//! - every funding settlement's payments sum to zero;
//! - USD is conserved: the sum of every account's equity (cash + unrealised PnL at mark)
//!   plus the fees collected equals what was deposited;
//! - no order is accepted beyond margin: a limit order whose initial margin exceeds the
//!   margin available before it is refused, and an accepted one fitted;
//! - USD locked equals the margin reserved by open orders;
//! - after a time step, an account is in de-risk exactly when its equity is below its
//!   maintenance margin.

#![warn(clippy::too_many_lines)]

use matchbook::{
    AccountId, CancelScope, Command, CurrencyId, Engine, EngineError, Event, EventRecord,
    InstrumentId, NewOrder, OrderType, Price, Qty, Side, TimeInForce, Timestamp,
};
use proptest::prelude::*;

const PERP: InstrumentId = InstrumentId(5);
const T0: i64 = 1_767_225_600_000_000_000;
const MINUTE: i64 = 60_000_000_000;
const USD_UNIT: i64 = 100_000_000;
/// USD balance units per (tick x lot) on the perp: 8 - (4 + 1) decimals.
const QUOTE_UNIT: i128 = 1_000;
const TRADERS: u32 = 5;

#[derive(Debug, Clone)]
enum Op {
    Place {
        account: u32,
        buy: bool,
        offset: i64,
        lots: i64,
        tif: u8,
        reduce_only: bool,
        market: bool,
    },
    CancelAll {
        account: u32,
    },
    Index {
        offset: i64,
    },
    Advance {
        minutes: i64,
    },
    Liquidate {
        account: u32,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0..TRADERS, any::<bool>(), -30i64..30, 1i64..400, 0u8..4, prop::bool::weighted(0.15), prop::bool::weighted(0.1))
            .prop_map(|(account, buy, offset, lots, tif, reduce_only, market)| Op::Place {
                account, buy, offset, lots, tif, reduce_only, market
            }),
        1 => (0..TRADERS).prop_map(|account| Op::CancelAll { account }),
        2 => (-8_000i64..8_000).prop_map(|offset| Op::Index { offset }),
        2 => (0i64..300).prop_map(|minutes| Op::Advance { minutes }),
        1 => (0..TRADERS).prop_map(|account| Op::Liquidate { account }),
    ]
}

struct Sim {
    engine: Engine,
    now: i64,
    usd: CurrencyId,
    deposited: i128,
    accounts: Vec<AccountId>,
}

impl Sim {
    fn new(funds: &[i64]) -> Self {
        let engine = Engine::new(matchbook::demo::config()).expect("demo");
        let usd = engine.currency_by_code("USD").expect("USD");
        let mut sim = Self {
            engine,
            now: T0,
            usd,
            deposited: 0,
            accounts: Vec::new(),
        };
        for &f in funds {
            let account = sim
                .apply(&Command::CreateHolder)
                .0
                .expect("holder")
                .account
                .expect("main");
            sim.apply(&Command::Deposit {
                account,
                currency: usd,
                amount: f * USD_UNIT,
            })
            .0
            .expect("deposit");
            sim.deposited += i128::from(f * USD_UNIT);
            sim.accounts.push(account);
        }
        sim
    }

    fn apply(
        &mut self,
        command: &Command,
    ) -> (Result<matchbook::Applied, EngineError>, Vec<EventRecord>) {
        let mut events = Vec::new();
        let r = self.engine.apply(command, Timestamp(self.now), &mut events);
        (r, events)
    }

    fn command(&self, op: &Op) -> Command {
        match *op {
            Op::Place {
                account,
                buy,
                offset,
                lots,
                tif,
                reduce_only,
                market,
            } => {
                let side = if buy { Side::Buy } else { Side::Sell };
                let price = Price(600_000 + offset * 100);
                let order = NewOrder {
                    order_type: if market {
                        OrderType::Market
                    } else {
                        OrderType::Limit
                    },
                    price: (!market).then_some(price),
                    reduce_only,
                    ..NewOrder::limit(
                        self.accounts[account as usize],
                        PERP,
                        side,
                        price,
                        Qty(lots * 10),
                    )
                };
                let tif = [
                    TimeInForce::GoodTillCancelled,
                    TimeInForce::ImmediateOrCancelled,
                    TimeInForce::FillOrKill,
                    TimeInForce::PostOnly,
                ][usize::from(tif)];
                let tif = if market && tif.rests() {
                    TimeInForce::ImmediateOrCancelled
                } else {
                    tif
                };
                Command::PlaceOrder(order.with_tif(tif))
            }
            Op::CancelAll { account } => Command::CancelAll {
                account: self.accounts[account as usize],
                scope: CancelScope::All,
            },
            Op::Index { offset } => Command::SetIndexPrice {
                instrument: PERP,
                price: Price(600_000 + offset * 10),
            },
            Op::Advance { .. } => Command::AdvanceTime,
            Op::Liquidate { account } => Command::Liquidate {
                account: self.accounts[account as usize],
            },
        }
    }

    fn check(&self, events: &[EventRecord], after_time_step: bool) -> Result<(), TestCaseError> {
        let positions: Vec<i64> = self
            .accounts
            .iter()
            .map(|&a| self.engine.positions(a).iter().map(|p| p.size).sum())
            .collect();
        prop_assert_eq!(positions.iter().sum::<i64>(), 0, "long OI == short OI");
        let longs: i64 = positions.iter().map(|s| s.max(&0)).sum();
        prop_assert_eq!(
            self.engine.funding_view(PERP).expect("perp").open_interest,
            longs
        );

        // Payments between two settlement markers (one settlement) sum to zero.
        let mut sum = 0i64;
        let mut open = false;
        for e in events {
            match e.event {
                Event::FundingSettled { .. } => {
                    prop_assert_eq!(sum, 0, "a settlement sums to zero");
                    open = true;
                }
                Event::FundingPaid { payment, .. } => {
                    prop_assert!(open);
                    sum += payment;
                }
                _ => {}
            }
        }
        prop_assert_eq!(sum, 0, "the last settlement sums to zero");

        let mut equity = 0i128;
        for &a in &self.accounts {
            let s = self.engine.futures_summary(a).expect("account");
            equity += s.margin.equity();
            let locked = self
                .engine
                .account(a)
                .expect("account")
                .balances
                .get(self.usd)
                .locked;
            prop_assert_eq!(
                i128::from(locked),
                s.margin.order_margin,
                "locked == order margin"
            );
            if after_time_step {
                let below = s.margin.maintenance > 0 && s.margin.equity() < s.margin.maintenance;
                prop_assert_eq!(s.derisk, below, "de-risk follows maintenance margin");
            }
        }
        let fees = i128::from(self.engine.fees_collected()[usize::from(self.usd.0)]);
        prop_assert_eq!(equity + fees, self.deposited, "USD conserved");
        Ok(())
    }
}

fn initial_margin(lots: i64, price: Price) -> i128 {
    let value = i128::from(lots * 10) * i128::from(price.0) * QUOTE_UNIT;
    (value * 100_000 + 999_999) / 1_000_000
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, max_shrink_iters: 5_000, ..ProptestConfig::default() })]

    #[test]
    fn futures_invariants_hold_after_every_command(
        funds in prop::collection::vec(100i64..20_000, TRADERS as usize),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let mut sim = Sim::new(&funds);
        sim.apply(&Command::AdvanceTime).0.expect("clock");
        let mut accepted = 0;
        for op in &ops {
            if let Op::Advance { minutes } = op {
                sim.now += minutes * MINUTE;
            }
            let command = sim.command(op);
            let before = match (op, &command) {
                (Op::Place { account, reduce_only: false, market: false, .. }, Command::PlaceOrder(o)) => {
                    let a = sim.accounts[*account as usize];
                    let s = sim.engine.futures_summary(a).expect("account");
                    Some((s.margin.available(), s.derisk, o.amount, o.price))
                }
                _ => None,
            };
            let (result, events) = sim.apply(&command);
            if let (Some((available, derisk, amount, Some(price))), Op::Place { lots, .. }) = (before, op) {
                let need = initial_margin(*lots, price);
                prop_assert_eq!(amount.0, lots * 10);
                if result.is_ok() {
                    accepted += 1;
                    // Orders that only reduce the position need no margin; the rest fitted.
                    let reducing = events.iter().any(|e| matches!(e.event, Event::PositionChanged { .. }));
                    prop_assert!(need <= available || reducing || derisk,
                        "accepted beyond margin: need {} available {}", need, available);
                } else if need > available && !derisk {
                    prop_assert!(matches!(result, Err(EngineError::InsufficientFunds)
                        | Err(EngineError::PostOnlyWouldTake)
                        | Err(EngineError::InsufficientLiquidity)
                        | Err(EngineError::AccountInDerisk)), "{:?}", result);
                }
            }
            sim.check(&events, matches!(op, Op::Advance { .. }))?;
        }
        let _ = accepted;
    }
}

/// The generator is worth running: across a few hundred sequences it trades, settles
/// funding, refuses orders for margin, puts accounts in de-risk and liquidates.
#[test]
fn generator_reaches_every_futures_outcome() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = (
        prop::collection::vec(100i64..20_000, TRADERS as usize),
        prop::collection::vec(op(), 1..80),
    );
    let (mut trades, mut payments, mut refused, mut derisk, mut liquidated_fills) = (0, 0, 0, 0, 0);
    for _ in 0..300 {
        let (funds, ops) = strategy.new_tree(&mut runner).expect("tree").current();
        let mut sim = Sim::new(&funds);
        sim.apply(&Command::AdvanceTime).0.expect("clock");
        for op in &ops {
            if let Op::Advance { minutes } = op {
                sim.now += minutes * MINUTE;
            }
            let command = sim.command(op);
            let (result, events) = sim.apply(&command);
            refused += usize::from(result == Err(EngineError::InsufficientFunds));
            for e in &events {
                match e.event {
                    Event::Trade(_) => {
                        trades += 1;
                        liquidated_fills += usize::from(matches!(op, Op::Liquidate { .. }));
                    }
                    Event::FundingPaid { .. } => payments += 1,
                    Event::DeriskChanged { on: true, .. } => derisk += 1,
                    _ => {}
                }
            }
        }
    }
    let seen = (trades, payments, refused, derisk, liquidated_fills);
    assert!(
        trades > 1_000 && payments > 100 && refused > 100 && derisk > 5 && liquidated_fills > 5,
        "trades, funding payments, margin refusals, de-risk entries, liquidation fills: {seen:?}"
    );
}
