//! The dead-man switch in the engine: it runs out at the first command whose time reaches
//! it, cancelling the account's open orders oldest first and nobody else's; setting it
//! again postpones it, 0 turns it off; it is part of the saved image and the state hash.

#![warn(clippy::too_many_lines)]

mod common;

use common::{p, q, refuse, run};
use matchbook::{
    AccountId, CancelReason, Command, Engine, EngineError, Event, EventRecord, NewOrder, Side,
    Timestamp,
};

const T0: i64 = 1_767_225_600_000_000_000;
const SECOND: u64 = 1_000_000_000;

/// Two funded accounts, each with two bids resting on BTC_EUR.
fn exchange() -> (Engine, Vec<EventRecord>, [AccountId; 2]) {
    let mut engine = Engine::new(matchbook::demo::config()).expect("demo");
    let mut events = Vec::new();
    let eur = engine.currency_by_code("EUR").expect("EUR");
    let btc_eur = engine.instrument_by_code("BTC_EUR").expect("BTC_EUR");
    let mut accounts = [AccountId(0); 2];
    for slot in &mut accounts {
        let account = run(&mut engine, &mut events, T0, &Command::CreateHolder)
            .expect("holder")
            .account
            .expect("main");
        let deposit = Command::Deposit {
            account,
            currency: eur,
            amount: 1 << 50,
        };
        run(&mut engine, &mut events, T0, &deposit).expect("deposit");
        for price in ["100.00", "101.00"] {
            let bid = NewOrder::limit(account, btc_eur, Side::Buy, p(price), q("0.1"));
            run(&mut engine, &mut events, T0, &Command::PlaceOrder(bid)).expect("bid");
        }
        *slot = account;
    }
    (engine, events, accounts)
}

fn arm(account: AccountId, timeout: u64) -> Command {
    Command::SetCancelAllAfter { account, timeout }
}

fn at(seconds: u64) -> i64 {
    T0 + (seconds * SECOND) as i64
}

#[test]
fn it_runs_out_once_cancelling_only_that_accounts_orders_oldest_first() {
    let (mut engine, mut events, [me, other]) = exchange();
    run(&mut engine, &mut events, T0, &arm(me, 10 * SECOND)).expect("armed");
    assert!(matches!(
        events[..],
        [EventRecord { event: Event::CancelAllAfterSet { account, deadline: Some(d) }, .. }]
            if account == me && d == Timestamp(at(10))
    ));
    assert_eq!(engine.next_deadline(), Some(Timestamp(at(10))));
    run(&mut engine, &mut events, at(9), &Command::AdvanceTime).expect("time");
    assert!(events.is_empty(), "{events:?}");
    let mine: Vec<_> = engine.open_orders(me).iter().map(|o| o.handle()).collect();
    run(&mut engine, &mut events, at(10), &Command::AdvanceTime).expect("time");
    let cancelled: Vec<_> = (events.iter())
        .filter_map(|e| match e.event {
            Event::OrderCancelled { order, reason, .. } => Some((order, reason)),
            _ => None,
        })
        .collect();
    let mut oldest_first = mine.clone();
    oldest_first.sort_by_key(|o| o.id);
    let expected: Vec<_> = (oldest_first.into_iter())
        .map(|o| (o, CancelReason::CancelAllAfter))
        .collect();
    assert_eq!(cancelled, expected);
    assert!(matches!(
        events[0].event,
        Event::CancelAllAfterSet { account, deadline: None } if account == me
    ));
    assert!(engine.open_orders(me).is_empty());
    assert_eq!(engine.open_orders(other).len(), 2);
    assert_eq!(
        (engine.cancel_all_after(me), engine.next_deadline()),
        (None, None)
    );
    run(&mut engine, &mut events, at(20), &Command::AdvanceTime).expect("time");
    assert!(events.is_empty(), "it ran out once: {events:?}");
}

#[test]
fn setting_it_again_postpones_it_and_zero_turns_it_off() {
    let (mut engine, mut events, [me, _]) = exchange();
    run(&mut engine, &mut events, T0, &arm(me, 10 * SECOND)).expect("armed");
    run(&mut engine, &mut events, at(8), &arm(me, 10 * SECOND)).expect("again");
    run(&mut engine, &mut events, at(17), &Command::AdvanceTime).expect("time");
    assert_eq!(engine.open_orders(me).len(), 2);
    run(&mut engine, &mut events, at(17), &arm(me, 0)).expect("off");
    assert_eq!(engine.cancel_all_after(me), None);
    run(&mut engine, &mut events, at(100), &Command::AdvanceTime).expect("time");
    assert_eq!(engine.open_orders(me).len(), 2);
}

#[test]
fn bad_switches_are_refused_and_change_nothing() {
    let (mut engine, mut events, [me, _]) = exchange();
    let unknown = arm(AccountId(99), SECOND);
    refuse(
        &mut engine,
        &mut events,
        T0,
        unknown,
        EngineError::UnknownAccount,
    );
    refuse(
        &mut engine,
        &mut events,
        T0,
        arm(me, u64::MAX),
        EngineError::TimeOutOfRange,
    );
}

#[test]
fn an_armed_switch_is_saved_restored_and_hashed() {
    let (mut engine, mut events, [me, _]) = exchange();
    let before = engine.state_hash();
    run(&mut engine, &mut events, T0, &arm(me, 10 * SECOND)).expect("armed");
    assert_ne!(engine.content_hash(), {
        let mut off = engine.clone();
        run(&mut off, &mut events, T0, &arm(me, 0)).expect("off");
        off.content_hash()
    });
    assert_ne!(engine.state_hash(), before);
    let reference = Engine::new(matchbook::demo::config()).expect("demo");
    let mut restored =
        Engine::restore(&reference, engine.image().expect("image")).expect("restore");
    assert_eq!(restored.state_hash(), engine.state_hash());
    assert_eq!(restored.cancel_all_after(me), Some(Timestamp(at(10))));
    let mut restored_events = Vec::new();
    run(&mut engine, &mut events, at(11), &Command::AdvanceTime).expect("time");
    run(
        &mut restored,
        &mut restored_events,
        at(11),
        &Command::AdvanceTime,
    )
    .expect("time");
    assert_eq!(events, restored_events);
    assert_eq!(restored.state_hash(), engine.state_hash());
}
