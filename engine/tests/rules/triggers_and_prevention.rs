//! Stop orders, good-till-time expiry and self-trade prevention.

use super::*;

#[test]
fn stop_orders_wait_for_their_trigger_then_enter_in_trigger_order() {
    let mut b = Bench::new();
    let stop = |b: &Bench, trigger: &str, price: &str| {
        let mut o = b.order(b.bob, Side::Buy, price, "1");
        o.order_type = OrderType::Stop;
        o.trigger_price = Some(p(trigger));
        o
    };
    let high = b.place(stop(&b, "105.00", "110.00"));
    let low = b.place(stop(&b, "103.00", "110.00"));
    let cancelled = b.place(stop(&b, "102.00", "110.00"));
    assert!(b.bids().is_empty(), "stops stay off the book");
    b.run(Command::CancelOrder {
        account: b.bob,
        order: cancelled,
    })
    .expect("cancel before trigger");
    for price in ["104.00", "106.00", "107.00"] {
        b.place(b.order(b.alice, Side::Sell, price, "1"));
    }
    // A trade at 104 triggers the 103 stop, which buys at 106 and so triggers the 105 stop.
    b.place(b.order(b.bob, Side::Buy, "104.00", "1"));
    let triggered: Vec<u64> = b
        .events
        .iter()
        .filter_map(|r| match r.event {
            Event::StopTriggered { order, .. } => Some(order.id),
            _ => None,
        })
        .collect();
    assert_eq!(triggered, vec![low.id, high.id]);
    assert_eq!(
        b.trades().iter().map(|t| t.0).collect::<Vec<_>>(),
        vec![p("104.00"), p("106.00"), p("107.00")]
    );
    // Placed when the last price is already past its trigger: enters at once.
    b.place(b.order(b.alice, Side::Sell, "108.00", "1"));
    let now = b.place(stop(&b, "100.00", "108.00"));
    assert!(matches!(b.events[0].event, Event::OrderAccepted(_)));
    assert!(
        matches!(b.events[1].event, Event::BalanceChanged { .. }),
        "reservation"
    );
    assert!(matches!(b.events[2].event, Event::StopTriggered { order, .. } if order == now));
    let mut no_trigger = stop(&b, "1", "1");
    no_trigger.trigger_price = None;
    b.refuse(
        Command::PlaceOrder(no_trigger),
        EngineError::InvalidTriggerPrice,
    );
    let mut trigger_on_limit = b.order(b.bob, Side::Buy, "100.00", "1");
    trigger_on_limit.trigger_price = Some(p("100.00"));
    b.refuse(
        Command::PlaceOrder(trigger_on_limit),
        EngineError::InvalidTriggerPrice,
    );
}

#[test]
fn good_till_time_expires_on_time_advance() {
    let mut b = Bench::new();
    let mut gtt = b
        .order(b.alice, Side::Sell, "100.00", "1")
        .with_tif(TimeInForce::GoodTillTime);
    gtt.expire_at = Some(Timestamp(T0 + 5_000_000));
    let order = b.place(gtt);
    b.now += 4_999_999;
    b.run(Command::AdvanceTime).expect("advance");
    assert!(b.events.is_empty());
    b.now += 1;
    b.run(Command::AdvanceTime).expect("advance");
    assert_eq!(b.cancels(), vec![(order.id, CancelReason::Expired)]);
    assert!(b.asks().is_empty());
    let mut past = gtt;
    past.expire_at = Some(Timestamp(b.now));
    b.refuse(Command::PlaceOrder(past), EngineError::InvalidExpiry);
    past.expire_at = None;
    b.refuse(Command::PlaceOrder(past), EngineError::InvalidExpiry);
    let mut gtc_with_expiry = b.order(b.alice, Side::Sell, "100.00", "1");
    gtc_with_expiry.expire_at = Some(Timestamp(b.now + 10));
    b.refuse(
        Command::PlaceOrder(gtc_with_expiry),
        EngineError::InvalidExpiry,
    );
}

#[test]
fn self_trade_prevention_modes() {
    let cases = [
        (StpMode::None, 1, vec![]),
        (StpMode::CancelNewest, 0, vec![(2, CancelReason::SelfTrade)]),
        (StpMode::CancelOldest, 1, vec![(1, CancelReason::SelfTrade)]),
        (
            StpMode::CancelBoth,
            0,
            vec![(1, CancelReason::SelfTrade), (3, CancelReason::SelfTrade)],
        ),
    ];
    for (mode, trades, cancels) in cases {
        let mut b = Bench::new();
        b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
        b.place(b.order(b.bob, Side::Sell, "100.00", "1"));
        b.run(Command::SetStpMode {
            account: b.alice,
            mode,
        })
        .expect("set mode");
        let taker = b
            .order(b.alice, Side::Buy, "100.00", "1")
            .with_tif(TimeInForce::ImmediateOrCancelled);
        let taker_ref = b.place(taker);
        let mut want = cancels.clone();
        for c in &mut want {
            if c.0 != 1 {
                c.0 = taker_ref.id;
            }
        }
        assert_eq!(b.trades().len(), trades, "{mode:?}");
        assert_eq!(b.cancels(), want, "{mode:?}");
    }
    // The order's own mode overrides the account default.
    let mut b = Bench::new();
    b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
    let mut taker = b.order(b.alice, Side::Buy, "100.00", "1");
    taker.stp = Some(StpMode::CancelNewest);
    b.place(taker);
    assert!(b.trades().is_empty());
}
