//! Amends, cancels of every scope, open-order limits and market states.

use super::*;

#[test]
fn amend_keeps_priority_only_for_a_size_down() {
    let mut b = Bench::new();
    let first = b.place(b.order(b.alice, Side::Sell, "100.00", "2"));
    let second = b.place(b.order(b.alice, Side::Sell, "100.00", "2"));
    let alice = b.alice;
    let amend = |order, amount: Option<&str>, price: Option<&str>| Command::AmendOrder {
        account: alice,
        order,
        amount: amount.map(q),
        price: price.map(p),
    };
    b.run(amend(first, Some("1"), None)).expect("size down");
    assert_eq!(b.asks(), vec![(p("100.00"), q("3"), 2)]);
    let l3 = b.engine.book_orders(b.inst, 1).expect("book");
    assert_eq!(
        l3.asks.iter().map(|o| o.order).collect::<Vec<_>>(),
        vec![first, second]
    );
    b.run(amend(first, Some("3"), None)).expect("size up");
    let l3 = b.engine.book_orders(b.inst, 1).expect("book");
    assert_eq!(
        l3.asks.iter().map(|o| o.order).collect::<Vec<_>>(),
        vec![second, first],
        "size-up goes to the back"
    );
    b.place(b.order(b.bob, Side::Buy, "99.00", "1"));
    b.run(amend(second, None, Some("99.00")))
        .expect("move onto the bid");
    assert_eq!(b.trades().len(), 1, "a moved order may trade");
    assert_eq!(
        b.asks(),
        vec![(p("99.00"), q("1"), 1), (p("100.00"), q("3"), 1)]
    );
    // Refused amends leave the order untouched.
    b.refuse(
        amend(second, Some("1"), None),
        EngineError::AmendBelowFilled,
    );
    b.refuse(
        amend(second, None, Some("2000000.00")),
        EngineError::PriceOutOfRange,
    );
    b.refuse(
        amend(second, Some("0.00001"), None),
        EngineError::AmendBelowFilled,
    );
    b.refuse(
        amend(first, Some("0.05"), None),
        EngineError::MinSizeNotSatisfied,
    );
    b.refuse(amend(first, None, None), EngineError::EmptyAmend);
    b.refuse(
        Command::AmendOrder {
            account: b.bob,
            order: first,
            amount: Some(q("1")),
            price: None,
        },
        EngineError::OrderNotFound,
    );
    let post = b.place(
        b.order(b.bob, Side::Buy, "90.00", "1")
            .with_tif(TimeInForce::PostOnly),
    );
    b.refuse(
        Command::AmendOrder {
            account: b.bob,
            order: post,
            amount: None,
            price: Some(p("99.00")),
        },
        EngineError::PostOnlyWouldTake,
    );
}

/// Cancels by client id take the newest order with it first, then the older.
#[test]
fn a_cancel_by_client_id_takes_the_newest_first() {
    let mut b = Bench::new();
    let c1 = Uuid(0xabc);
    let mut with_client = b.order(b.alice, Side::Buy, "90.00", "1");
    with_client.client_id = Some(c1);
    let older = b.place(with_client);
    let newer = b.place(with_client);
    b.run(Command::CancelByClientId {
        account: b.alice,
        client_id: c1,
    })
    .expect("cancel newest");
    assert_eq!(b.cancels(), vec![(newer.id, CancelReason::Requested)]);
    b.run(Command::CancelByClientId {
        account: b.alice,
        client_id: c1,
    })
    .expect("then the older one");
    assert_eq!(b.cancels(), vec![(older.id, CancelReason::Requested)]);
    b.refuse(
        Command::CancelByClientId {
            account: b.alice,
            client_id: c1,
        },
        EngineError::OrderNotFound,
    );
}

/// A cancel by id finds only the account's own live order.
#[test]
fn a_cancel_by_id_names_one_of_the_accounts_own_orders() {
    let mut b = Bench::new();
    let a = b.place(b.order(b.alice, Side::Buy, "90.00", "1"));
    b.refuse(
        Command::CancelOrder {
            account: b.bob,
            order: a,
        },
        EngineError::OrderNotFound,
    );
    b.run(Command::CancelOrder {
        account: b.alice,
        order: a,
    })
    .expect("cancel");
    b.refuse(
        Command::CancelOrder {
            account: b.alice,
            order: a,
        },
        EngineError::OrderNotFound,
    );
}

/// Cancel-all by list (foreign and repeated ids skipped), by market and all; unknown markets and accounts refused.
#[test]
fn cancel_all_covers_a_list_a_market_or_everything() {
    let mut b = Bench::new();
    let other = b.engine.instrument_by_code("ETH_EUR").expect("demo");
    let x = b.place(b.order(b.alice, Side::Buy, "90.00", "1"));
    let y = b.place(NewOrder::limit(
        b.alice,
        other,
        Side::Buy,
        p("90.00"),
        Qty(10_000),
    ));
    let z = b.place(b.order(b.alice, Side::Buy, "91.00", "1"));
    let bobs = b.place(b.order(b.bob, Side::Buy, "91.00", "1"));
    b.run(Command::CancelAll {
        account: b.alice,
        scope: CancelScope::Orders(vec![z, bobs, z]),
    })
    .expect("list");
    assert_eq!(
        b.cancels(),
        vec![(z.id, CancelReason::Requested)],
        "foreign and repeated ids skipped"
    );
    b.run(Command::CancelAll {
        account: b.alice,
        scope: CancelScope::Instrument(other),
    })
    .expect("per market");
    assert_eq!(b.cancels(), vec![(y.id, CancelReason::Requested)]);
    b.run(Command::CancelAll {
        account: b.alice,
        scope: CancelScope::All,
    })
    .expect("all");
    assert_eq!(b.cancels(), vec![(x.id, CancelReason::Requested)]);
    assert!(b.engine.order(bobs).is_some());
    b.refuse(
        Command::CancelAll {
            account: b.alice,
            scope: CancelScope::Instrument(InstrumentId(999)),
        },
        EngineError::UnknownInstrument,
    );
    b.refuse(
        Command::CancelAll {
            account: AccountId(99),
            scope: CancelScope::All,
        },
        EngineError::UnknownAccount,
    );
}

#[test]
fn open_orders_are_limited_per_holder_across_markets_and_subaccounts() {
    let mut b = Bench::new();
    let sub = b
        .run(Command::CreateSubaccount {
            holder: HolderId(0),
            name: "sub".into(),
            kind: AccountKind::Regular,
        })
        .expect("sub")
        .account
        .expect("account");
    for currency in 0..b.engine.currencies().len() {
        let deposit = Command::Deposit {
            account: sub,
            currency: matchbook::CurrencyId(currency as u16),
            amount: 1 << 60,
        };
        b.run(deposit).expect("deposit");
    }
    let other = b.engine.instrument_by_code("ETH_EUR").expect("demo");
    for i in 0..200 {
        let account = if i % 2 == 0 { b.alice } else { sub };
        let order = if i % 3 == 0 {
            NewOrder::limit(account, other, Side::Buy, p("90.00"), Qty(10_000))
        } else {
            b.order(account, Side::Buy, "90.00", "1")
        };
        b.place(order);
    }
    assert_eq!(b.engine.open_order_count(HolderId(0)), Ok(200));
    b.refuse(
        Command::PlaceOrder(b.order(sub, Side::Buy, "90.00", "1")),
        EngineError::MaxOpenOrdersExceeded,
    );
    // Orders that cannot rest do not count and are still accepted.
    b.place(
        b.order(sub, Side::Buy, "90.00", "1")
            .with_tif(TimeInForce::ImmediateOrCancelled),
    );
    b.place(b.order(b.bob, Side::Buy, "90.00", "1"));
}

#[test]
fn instrument_state_governs_order_entry_but_not_cancels() {
    let mut b = Bench::new();
    let resting = b.place(b.order(b.alice, Side::Buy, "90.00", "1"));
    let set = |state| Command::SetInstrumentState {
        instrument: InstrumentId(0),
        state,
    };
    b.run(set(InstrumentState::PostOnly)).expect("post only");
    b.refuse(
        Command::PlaceOrder(b.order(b.bob, Side::Sell, "95.00", "1")),
        EngineError::OnlyPostOnlyAllowed,
    );
    b.place(
        b.order(b.bob, Side::Sell, "95.00", "1")
            .with_tif(TimeInForce::PostOnly),
    );
    b.refuse(
        Command::AmendOrder {
            account: b.alice,
            order: resting,
            amount: None,
            price: Some(p("96.00")),
        },
        EngineError::PostOnlyWouldTake,
    );
    for state in [InstrumentState::Suspended, InstrumentState::Closed] {
        b.run(set(state)).expect("state");
        let post_only = b
            .order(b.bob, Side::Sell, "95.00", "1")
            .with_tif(TimeInForce::PostOnly);
        b.refuse(
            Command::PlaceOrder(post_only),
            EngineError::InstrumentNotTrading,
        );
        b.refuse(
            Command::AmendOrder {
                account: b.alice,
                order: resting,
                amount: Some(q("2")),
                price: None,
            },
            EngineError::InstrumentNotTrading,
        );
    }
    b.run(Command::CancelOrder {
        account: b.alice,
        order: resting,
    })
    .expect("cancels still work");
    b.refuse(
        set(InstrumentState::Active).clone_with(InstrumentId(42)),
        EngineError::UnknownInstrument,
    );
}

trait WithInstrument {
    fn clone_with(&self, instrument: InstrumentId) -> Command;
}
impl WithInstrument for Command {
    fn clone_with(&self, instrument: InstrumentId) -> Command {
        match self {
            Command::SetInstrumentState { state, .. } => Command::SetInstrumentState {
                instrument,
                state: *state,
            },
            other => other.clone(),
        }
    }
}
