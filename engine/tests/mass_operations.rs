//! Mass operations cost what the account owns, not what the exchange holds: cancelling all
//! of an account's orders, closing a subaccount and listing open orders walk the account's
//! own chain of live orders. Measured as a ratio in one run (the same loop beside 100 and
//! beside 100,000 orders of another account), so the machine's speed does not matter.

#![warn(clippy::too_many_lines)]

mod common;

use std::time::Instant;

use common::{p, q, run};
use matchbook::{
    AccountId, CancelScope, Command, Engine, EventRecord, InstrumentId, NewOrder, Side,
};

const T0: i64 = 1_767_225_600_000_000_000;

/// An engine where another account rests `others` bids, and `me` owns nothing yet.
fn exchange(others: usize) -> (Engine, Vec<EventRecord>, AccountId, InstrumentId) {
    let mut config = matchbook::demo::config();
    config.max_open_orders = 1_000_000;
    let mut engine = Engine::new(config).expect("demo");
    let mut events = Vec::new();
    let holder = |e: &mut Engine, ev: &mut Vec<EventRecord>| {
        run(e, ev, T0, &Command::CreateHolder)
            .expect("holder")
            .account
            .expect("main")
    };
    let (crowd, me) = (
        holder(&mut engine, &mut events),
        holder(&mut engine, &mut events),
    );
    let eur = engine.currency_by_code("EUR").expect("EUR");
    for account in [crowd, me] {
        let deposit = Command::Deposit {
            account,
            currency: eur,
            amount: 1 << 60,
        };
        run(&mut engine, &mut events, T0, &deposit).expect("deposit");
    }
    let btc_eur = engine.instrument_by_code("BTC_EUR").expect("BTC_EUR");
    for i in 0..others {
        let price = p("50000").0 - (i % 5_000) as i64 * 100;
        let bid = NewOrder::limit(
            crowd,
            btc_eur,
            Side::Buy,
            matchbook::Price(price),
            q("0.001"),
        );
        run(&mut engine, &mut events, T0, &Command::PlaceOrder(bid)).expect("bid");
    }
    (engine, events, me, btc_eur)
}

/// Median time of `rounds` of: place one order, list open orders, cancel all of them.
fn own_order_cycle(others: usize) -> f64 {
    let (mut engine, mut events, me, btc_eur) = exchange(others);
    let mut times = Vec::new();
    for _ in 0..7 {
        let started = Instant::now();
        for _ in 0..100 {
            let bid = NewOrder::limit(me, btc_eur, Side::Buy, p("40000"), q("0.001"));
            run(&mut engine, &mut events, T0, &Command::PlaceOrder(bid)).expect("bid");
            assert_eq!(engine.open_orders(me).len(), 1);
            let cancel = Command::CancelAll {
                account: me,
                scope: CancelScope::All,
            };
            run(&mut engine, &mut events, T0, &cancel).expect("cancel");
        }
        times.push(started.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

#[test]
fn cancel_all_and_open_orders_cost_the_accounts_own_orders() {
    let (few, many) = (own_order_cycle(100), own_order_cycle(100_000));
    let ratio = many / few;
    // Scanning every live order made this about 100x; walking the account's chain, ~1x.
    assert!(ratio < 5.0, "100,000 others cost {ratio:.1}x what 100 do");
}
