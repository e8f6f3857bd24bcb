//! Input validation, book views, order lookups, statuses and error codes.

use super::*;

/// Variants of `base` each refused for one reason: amount, price, range, minimum size,
/// instrument, account.
fn bad_orders(base: NewOrder) -> [(NewOrder, EngineError); 9] {
    [
        (
            NewOrder {
                amount: Qty(0),
                ..base
            },
            EngineError::InvalidAmount,
        ),
        (
            NewOrder {
                amount: Qty(-5),
                ..base
            },
            EngineError::InvalidAmount,
        ),
        (
            NewOrder {
                price: None,
                ..base
            },
            EngineError::MissingPrice,
        ),
        (
            NewOrder {
                price: Some(Price(0)),
                ..base
            },
            EngineError::InvalidPrice,
        ),
        (
            NewOrder {
                price: Some(Price(-1)),
                ..base
            },
            EngineError::InvalidPrice,
        ),
        (
            NewOrder {
                price: Some(p("1000000.01")),
                ..base
            },
            EngineError::PriceOutOfRange,
        ),
        (
            NewOrder {
                amount: q("0.09999"),
                ..base
            },
            EngineError::MinSizeNotSatisfied,
        ),
        (
            NewOrder {
                instrument: InstrumentId(77),
                ..base
            },
            EngineError::UnknownInstrument,
        ),
        (
            NewOrder {
                account: AccountId(77),
                ..base
            },
            EngineError::UnknownAccount,
        ),
    ]
}

#[test]
fn input_validation_refuses_bad_orders() {
    let mut b = Bench::new();
    let base = b.order(b.alice, Side::Buy, "100.00", "1");
    for (order, error) in bad_orders(base) {
        b.refuse(Command::PlaceOrder(order), error);
    }
    b.place(NewOrder {
        amount: q("0.1"),
        ..base
    });
    b.refuse(
        Command::CreateSubaccount {
            holder: HolderId(9),
            name: "sub".into(),
            kind: AccountKind::Regular,
        },
        EngineError::UnknownHolder,
    );
    b.refuse(
        Command::SetStpMode {
            account: AccountId(9),
            mode: StpMode::CancelBoth,
        },
        EngineError::UnknownAccount,
    );
}

#[test]
fn book_views_respect_depth_and_order() {
    let mut b = Bench::new();
    for (side, price) in [
        (Side::Buy, "99.00"),
        (Side::Buy, "98.00"),
        (Side::Buy, "99.00"),
        (Side::Sell, "101.00"),
        (Side::Sell, "102.00"),
    ] {
        b.place(b.order(b.alice, side, price, "1"));
    }
    let l1 = b.engine.book_levels(b.inst, 1).expect("book");
    assert_eq!((l1.bids.len(), l1.asks.len()), (1, 1));
    assert_eq!(
        (
            l1.bids[0].price,
            l1.bids[0].number_of_orders,
            l1.asks[0].price
        ),
        (p("99.00"), 2, p("101.00"))
    );
    let l2 = b.engine.book_levels(b.inst, 10).expect("book");
    assert_eq!(
        l2.bids.iter().map(|l| l.price).collect::<Vec<_>>(),
        vec![p("99.00"), p("98.00")]
    );
    // The book sequence counts the five commands that changed this book.
    assert_eq!(l2.sequence, 5);
    let l3 = b.engine.book_orders(b.inst, 1).expect("book");
    assert_eq!(
        l3.bids.iter().map(|o| o.order.id).collect::<Vec<_>>(),
        vec![1, 3]
    );
    assert!(b.engine.book_levels(InstrumentId(50), 1).is_err());
}

#[test]
fn order_uuids_resolve_to_live_orders_only() {
    let mut b = Bench::new();
    let order = b.place(b.order(b.alice, Side::Buy, "90.00", "1"));
    let uuid: Uuid = Uuid::of_order(order)
        .to_string()
        .parse()
        .expect("own uuid parses");
    let resolved = uuid.order_ref().expect("ours");
    assert_eq!(
        b.engine.order(resolved).map(|o| o.sequence()),
        Some(b.events[0].seq)
    );
    b.run(Command::CancelOrder {
        account: b.alice,
        order,
    })
    .expect("cancel");
    let reuse = b.place(b.order(b.alice, Side::Buy, "90.00", "1"));
    assert_eq!(reuse.slot, order.slot, "slot reused");
    assert!(
        b.engine.order(resolved).is_none(),
        "old uuid no longer resolves"
    );
}

#[test]
fn statuses_read_as_the_spec_spells_them() {
    use matchbook::OrderStatus;
    assert_eq!(CancelReason::Requested.status().as_str(), "CANCELLED");
    assert_eq!(CancelReason::Expired.status().as_str(), "CANCELLED");
    assert_eq!(
        CancelReason::FillOrKillUnfilled.status().as_str(),
        "FILLED_REJECTED"
    );
    assert_eq!(
        CancelReason::FillOrKillUnfilled.status().reason(),
        Some("INSUFFICIENT_LIQUIDITY")
    );
    // A refusal code is a reason beside the status, never the status itself.
    let post_only = CancelReason::PostOnlyWouldTake.status();
    assert_eq!(
        (post_only.as_str(), post_only.reason()),
        ("FILLED_REJECTED", Some("POST_ONLY_WOULD_TAKE"))
    );
    assert_eq!(OrderStatus::Cancelled.reason(), None);
    assert_eq!(OrderStatus::Open.as_str(), "OPEN");
    assert_eq!(OrderStatus::FilledFully.as_str(), "FILLED_FULLY");
    assert_eq!(
        EngineError::AccountInDerisk.as_str(),
        "USER_MGMT_USER_IN_DERISK"
    );
    assert_eq!(
        EngineError::InsufficientFunds.as_str(),
        "INSUFFICIENT_FUNDS"
    );
}

#[test]
fn every_error_has_a_distinct_code_in_its_subsystem_range() {
    use std::collections::BTreeSet;
    let all = [
        EngineError::InvalidAmount,
        EngineError::InvalidPrice,
        EngineError::MissingPrice,
        EngineError::InvalidTriggerPrice,
        EngineError::PriceOutOfRange,
        EngineError::MinSizeNotSatisfied,
        EngineError::InvalidExpiry,
        EngineError::InvalidTimeInForce,
        EngineError::UnknownInstrument,
        EngineError::EmptyAmend,
        EngineError::InsufficientLiquidity,
        EngineError::PostOnlyWouldTake,
        EngineError::InstrumentNotTrading,
        EngineError::OnlyPostOnlyAllowed,
        EngineError::OrderNotFound,
        EngineError::MaxOpenOrdersExceeded,
        EngineError::AmendBelowFilled,
        EngineError::UnknownAccount,
        EngineError::UnknownHolder,
        EngineError::UnknownCurrency,
        EngineError::InvalidAccountName,
        EngineError::InsufficientFunds,
        EngineError::InsufficientBalance {
            account: AccountId(1),
            currency: matchbook::CurrencyId(2),
            available: 3,
            requested: 4,
        },
        EngineError::BelowBlpThreshold,
        EngineError::AccountInDerisk,
        EngineError::SameAccount,
        EngineError::PermissionDenied,
        EngineError::InstantTradeAccount,
        EngineError::AccountClosed,
        EngineError::CannotCloseMain,
        EngineError::AccountNameTaken,
        EngineError::NotBlpAccount,
        EngineError::ReduceOnlyWouldIncrease,
        EngineError::NotFutures,
        EngineError::TimeOutOfRange,
        EngineError::AmountTooLarge,
        EngineError::BalanceLimitExceeded,
    ];
    let codes: BTreeSet<u16> = all.iter().map(|e| e.code()).collect();
    assert_eq!(codes.len(), all.len());
    for e in all {
        assert!((1000..5000).contains(&e.code()), "{e:?}");
        assert!(
            e.as_str()
                .chars()
                .all(|c| c.is_ascii_uppercase() || c == '_'),
            "{e:?}"
        );
        assert!(!e.to_string().is_empty());
    }
}
