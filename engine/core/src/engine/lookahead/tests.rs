//! The look-ahead names the lines the command will use, as the store grows, moves, is
//! cloned and is restored; against the records' addresses taken from the store itself.

use proptest::prelude::*;

use super::*;
use crate::event::EventRecord;
use crate::fixed::{Price, Qty};
use crate::ids::{InstrumentId, OrderRef, Timestamp};
use crate::order::{NewOrder, Order, Side};

const T0: Timestamp = Timestamp(1_767_225_600_000_000_000);

/// The demo engine (balances on or off) with two funded accounts.
fn engine(balances: bool) -> Engine {
    let mut config = crate::demo::config();
    config.enforce_balances = balances;
    config.max_open_orders = 10_000;
    let mut engine = Engine::new(config).expect("demo");
    let mut events: Vec<EventRecord> = Vec::new();
    for _ in 0..2 {
        engine
            .apply(&Command::CreateHolder, T0, &mut events)
            .expect("holder");
    }
    for account in [AccountId(0), AccountId(1)] {
        for code in ["BTC", "EUR"] {
            let currency = engine.currency_by_code(code).expect("demo currency");
            let deposit = Command::Deposit {
                account,
                currency,
                amount: 1_000_000_000_000_000,
            };
            engine.apply(&deposit, T0, &mut events).expect("deposit");
        }
    }
    engine
}

/// A resting buy of account `account` at a price that never crosses a sell below it.
fn bid(account: u32, ticks: i64) -> Command {
    Command::PlaceOrder(NewOrder::limit(
        AccountId(account),
        InstrumentId(0),
        Side::Buy,
        Price(1_000_000 + ticks),
        Qty(1_000),
    ))
}

/// Applies `command`, which must place an order, and returns the order's handle.
fn place(engine: &mut Engine, command: &Command, events: &mut Vec<EventRecord>) -> OrderRef {
    (engine.apply(command, T0, events))
        .expect("placed")
        .order
        .expect("an order")
}

fn address(order: &Order) -> usize {
    order as *const Order as usize
}

/// What the look-ahead of a cancel of `order` by `account` must name.
fn expected(engine: &Engine, account: AccountId, order: OrderRef) -> Lookahead {
    let record = address(engine.order(order).expect("live order"));
    let holder_id = engine.accounts.holder_of(account);
    let holder = &engine.accounts.holders[holder_id.0 as usize] as *const _ as usize;
    if !engine.enforce_balances {
        return Lookahead {
            order: record,
            holder,
            ..Lookahead::default()
        };
    }
    let balances = &engine.accounts.accounts[account.0 as usize].balances;
    let first = balances as *const _ as usize;
    Lookahead {
        order: record,
        reservation: record + 64,
        balances: [first, first + std::mem::size_of_val(balances) - 1],
        holder,
    }
}

#[test]
fn a_new_order_is_looked_up_where_it_will_be_stored() {
    for balances in [false, true] {
        let mut engine = engine(balances);
        let mut events = Vec::new();
        for ticks in 0..3 {
            let new_order = bid(0, ticks);
            let ahead = engine.lookahead(&new_order);
            let handle = place(&mut engine, &new_order, &mut events);
            let record = address(engine.order(handle).expect("live"));
            assert_eq!(ahead.order, record, "placement {ticks}");
            assert_eq!(ahead.balances != [0; 2], balances);
            assert_eq!(
                ahead.reservation, 0,
                "a new order reserves after it is stored"
            );
        }
    }
}

#[test]
fn a_clone_names_its_own_records() {
    let mut engine = engine(true);
    let mut events = Vec::new();
    let handle = place(&mut engine, &bid(0, 0), &mut events);
    let cancel = Command::CancelOrder {
        account: AccountId(0),
        order: handle,
    };
    let copy = engine.clone();
    assert_ne!(copy.lookahead(&cancel), engine.lookahead(&cancel));
    assert_eq!(
        copy.lookahead(&cancel),
        expected(&copy, AccountId(0), handle)
    );
}

#[test]
fn a_restored_engine_names_its_own_records() {
    let mut engine = engine(true);
    let mut events = Vec::new();
    let handle = place(&mut engine, &bid(0, 0), &mut events);
    let image = engine.image().expect("image");
    let restored = Engine::restore(&self::engine(true), image).expect("restored");
    let cancel = Command::CancelOrder {
        account: AccountId(0),
        order: handle,
    };
    assert_eq!(
        restored.lookahead(&cancel),
        expected(&restored, AccountId(0), handle)
    );
}

#[test]
fn commands_that_name_no_order_have_no_look_ahead() {
    let engine = engine(true);
    assert_eq!(
        engine.lookahead(&Command::CreateHolder),
        Lookahead::default()
    );
    let unknown_account = Command::CancelOrder {
        account: AccountId(99),
        order: OrderRef { id: 1, slot: 0 },
    };
    // No such account: nothing of its own, only where slot 0 lies.
    let ahead = engine.lookahead(&unknown_account);
    assert_eq!((ahead.balances, ahead.holder), ([0; 2], 0));
    assert_eq!(ahead.order, engine.orders.record_address(0));
}

proptest! {
    /// Places and cancels from a store of 1,024 records grown past its first size (so it
    /// moves): a cancel's look-ahead always names the order's record where it lies now.
    #[test]
    fn a_cancel_names_the_record_where_it_lies(
        balances in any::<bool>(),
        steps in proptest::collection::vec((any::<bool>(), 0u32..2, 0i64..50, any::<prop::sample::Index>()), 1..300),
    ) {
        let mut engine = engine(balances);
        let mut events = Vec::new();
        // Enough orders first that the store outgrows its first 1,024 records.
        let mut live: Vec<(AccountId, OrderRef)> = Vec::new();
        for k in 0..1_100 {
            let account = AccountId(k % 2);
            let handle = place(&mut engine, &bid(account.0, i64::from(k % 40)), &mut events);
            live.push((account, handle));
        }
        for (placing, account, ticks, pick) in steps {
            if placing || live.is_empty() {
                let handle = place(&mut engine, &bid(account, ticks), &mut events);
                live.push((AccountId(account), handle));
            } else {
                let (account, order) = live.swap_remove(pick.index(live.len()));
                let cancel = Command::CancelOrder { account, order };
                prop_assert_eq!(engine.lookahead(&cancel), expected(&engine, account, order));
                engine.apply(&cancel, T0, &mut events).expect("cancelled");
            }
        }
    }
}

#[test]
fn hints_pay_once_live_orders_and_accounts_outgrow_the_caches() {
    let mut engine = engine(false);
    let mut events = Vec::new();
    let accounts = engine.accounts.core.len();
    let mut placed = Vec::new();
    // Each command sees the size it starts from: the last placement below starts one short.
    for k in 0..(HINT_FROM - accounts) {
        assert!(!engine.hints_pay(), "no hints at {k} orders");
        let account = (k % 2) as u32;
        placed.push(place(
            &mut engine,
            &bid(account, (k % 40) as i64),
            &mut events,
        ));
        events.clear();
    }
    assert!(!engine.hints_pay());
    placed.push(place(&mut engine, &bid(0, 0), &mut events));
    assert!(engine.hints_pay(), "{HINT_FROM} orders and accounts");
    // Two orders end; the command after them starts one short again.
    for order in placed.drain(..2) {
        let account = engine.order(order).expect("live").account;
        let cancel = Command::CancelOrder { account, order };
        engine.apply(&cancel, T0, &mut events).expect("cancelled");
        assert!(engine.hints_pay());
    }
    engine
        .apply(&Command::AdvanceTime, T0, &mut events)
        .expect("time");
    assert!(!engine.hints_pay(), "back under once orders end");
}

#[test]
fn with_balances_accounts_weigh_more() {
    let mut events = Vec::new();
    let mut engine = engine(true);
    engine
        .apply(&Command::AdvanceTime, T0, &mut events)
        .expect("time");
    assert!(!engine.hints_pay(), "two accounts and no order");
    let accounts = engine.accounts.core.len();
    let weighed = accounts * ACCOUNT_WEIGHT_WITH_BALANCES;
    assert!(weighed > accounts);
    for k in 0..(HINT_FROM - weighed) {
        place(
            &mut engine,
            &bid((k % 2) as u32, (k % 40) as i64),
            &mut events,
        );
        events.clear();
    }
    engine
        .apply(&Command::AdvanceTime, T0, &mut events)
        .expect("time");
    assert!(engine.hints_pay(), "fewer orders than book only needs");
}
