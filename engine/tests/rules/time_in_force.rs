//! Priority, the maker's price and each time in force.

use super::*;

#[test]
fn price_time_priority_and_maker_price() {
    let mut b = Bench::new();
    let first = b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
    let second = b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
    let better = b.place(b.order(b.alice, Side::Sell, "99.50", "1"));
    let taker = b.place(b.order(b.bob, Side::Buy, "101.00", "2.5"));
    assert_eq!(
        b.trades(),
        vec![
            (p("99.50"), q("1"), better.id, taker.id),
            (p("100.00"), q("1"), first.id, taker.id),
            (p("100.00"), q("0.5"), second.id, taker.id),
        ]
    );
    assert_eq!(b.asks(), vec![(p("100.00"), q("0.5"), 1)]);
    assert_eq!(
        b.engine.last_price(b.inst).expect("book"),
        Some(p("100.00"))
    );
    let rest = b.engine.order(second).expect("still open");
    assert_eq!(rest.filled(), q("0.5"));
    assert!(
        b.engine.order(taker).is_none(),
        "taker filled fully and left"
    );
}

#[test]
fn good_till_cancelled_rests_its_remainder() {
    let mut b = Bench::new();
    b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
    let taker = b.place(b.order(b.bob, Side::Buy, "100.00", "3"));
    assert!(
        b.events.iter().any(
            |r| matches!(r.event, Event::OrderBooked { remaining, .. } if remaining == q("2"))
        )
    );
    // The touch moved: the bid is now 100.00 and the ask side is empty.
    assert!(matches!(
        b.events.last().map(|r| r.event),
        Some(Event::TopOfBook { bid: Some(bid), ask: None, .. }) if bid == p("100.00")
    ));
    let o = b.engine.order(taker).expect("rests");
    assert_eq!(
        (o.state(), o.filled(), o.remaining()),
        (LiveState::Resting, q("1"), q("2"))
    );
    assert_eq!(
        o.filled_notional().0 / i128::from(o.filled().0),
        i128::from(p("100.00").0),
        "average price"
    );
    assert_eq!(b.bids(), vec![(p("100.00"), q("2"), 1)]);
}

#[test]
fn immediate_or_cancel_never_rests() {
    let mut b = Bench::new();
    b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
    let ioc = b.place(
        b.order(b.bob, Side::Buy, "100.00", "3")
            .with_tif(TimeInForce::ImmediateOrCancelled),
    );
    assert_eq!(b.trades().len(), 1);
    assert_eq!(b.cancels(), vec![(ioc.id, CancelReason::Unfilled)]);
    assert!(b.bids().is_empty());
    assert_eq!(b.engine.open_order_count(HolderId(1)), Ok(0));
}

#[test]
fn fill_or_kill_is_all_or_nothing_before_any_fill() {
    let mut b = Bench::new();
    b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
    b.place(b.order(b.alice, Side::Sell, "101.00", "1"));
    let (bob, inst) = (b.bob, b.inst);
    let fok = |amount, price| {
        Command::PlaceOrder(
            NewOrder::limit(bob, inst, Side::Buy, p(price), q(amount))
                .with_tif(TimeInForce::FillOrKill),
        )
    };
    b.reject_at_entry(fok("2.1", "101.00"), EngineError::InsufficientLiquidity);
    b.reject_at_entry(fok("1.5", "100.50"), EngineError::InsufficientLiquidity);
    let c = fok("2", "101.00");
    b.run(c).expect("fills");
    assert_eq!(b.trades().len(), 2);
    assert!(b.asks().is_empty());
}

#[test]
fn post_only_refuses_to_take() {
    let mut b = Bench::new();
    b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
    let crossing = Command::PlaceOrder(
        b.order(b.bob, Side::Buy, "100.00", "1")
            .with_tif(TimeInForce::PostOnly),
    );
    b.reject_at_entry(crossing, EngineError::PostOnlyWouldTake);
    b.place(
        b.order(b.bob, Side::Buy, "99.99", "1")
            .with_tif(TimeInForce::PostOnly),
    );
    assert_eq!(b.bids(), vec![(p("99.99"), q("1"), 1)]);
}

#[test]
fn market_orders_sweep_up_to_protection_and_never_rest() {
    let mut b = Bench::new();
    for price in ["100.00", "101.00", "102.00"] {
        b.place(b.order(b.alice, Side::Sell, price, "1"));
    }
    let (bob, inst) = (b.bob, b.inst);
    let market = |amount: &str, protection: Option<&str>| {
        let mut o = NewOrder::limit(bob, inst, Side::Buy, p("1"), q(amount));
        o.order_type = OrderType::Market;
        o.time_in_force = TimeInForce::ImmediateOrCancelled;
        o.price = protection.map(p);
        o
    };
    let m = b.place(market("5", Some("101.00")));
    assert_eq!(b.trades().len(), 2);
    assert_eq!(b.cancels(), vec![(m.id, CancelReason::Unfilled)]);
    let m = b.place(market("5", None));
    assert_eq!(b.trades(), vec![(p("102.00"), q("1"), 3, m.id)]);
    let m = b.place(market("1", None));
    assert_eq!(
        b.cancels(),
        vec![(m.id, CancelReason::Unfilled)],
        "empty book: nothing to take"
    );
    let mut post_only = market("1", None);
    post_only.time_in_force = TimeInForce::PostOnly;
    b.refuse(
        Command::PlaceOrder(post_only),
        EngineError::InvalidTimeInForce,
    );
    assert!(b.bids().is_empty());
}
