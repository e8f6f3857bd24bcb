//! The mark price, and funding that never overdraws and sums to zero.

use super::*;

#[test]
fn mark_price_is_the_mid_clamped_to_the_collar_around_the_index() {
    let mut w = World::new();
    let (a, b) = (w.trader(100_000), w.trader(100_000));
    let bid = w.order(a, Side::Buy, px(59_000), milli(10));
    w.place(bid).expect("bid");
    let ask = w.order(b, Side::Sell, px(61_000), milli(10));
    w.place(ask).expect("ask");
    assert_eq!(
        w.engine.funding_view(PERP).expect("perp").mark_price,
        Some(px(60_000))
    );
    w.run(Command::SetIndexPrice {
        instrument: PERP,
        price: px(50_000),
    })
    .expect("index");
    // 5 % collar around 50,000: at most 52,500.
    assert_eq!(
        w.engine.funding_view(PERP).expect("perp").mark_price,
        Some(px(52_500))
    );
    assert_eq!(
        w.run(Command::SetIndexPrice {
            instrument: InstrumentId(0),
            price: px(1),
        }),
        Err(EngineError::NotFutures)
    );
}

/// A book left far from a fallen index: fills must stay within what the taker's margin
/// covers (a fuzz finding: a market buy margined at the collared mark of 0.10 USD filled
/// at 53,040 and its fee took its cash below zero).
#[test]
fn takers_on_a_book_far_from_the_index_never_overdraw_their_cash() {
    let mut w = World::new();
    let (maker, taker) = (w.trader(100_000), w.trader(2));
    // The index at the bottom of its range.
    w.quote(maker, px(53_000), maker, px(53_040), Price(1));

    // A market buy matches only up to the collar above the mark: nothing here.
    let buy = NewOrder {
        order_type: matchbook::OrderType::Market,
        price: None,
        time_in_force: TimeInForce::ImmediateOrCancelled,
        ..w.order(taker, Side::Buy, px(1), milli(1))
    };
    w.place(buy)
        .expect("a market buy within its margin is accepted");
    assert!(
        !w.events.iter().any(|e| matches!(e.event, Event::Trade(_))),
        "no fill beyond the collar: {:?}",
        w.events
    );
    assert_eq!(
        w.cash(taker),
        (2 * USD, 0),
        "nothing charged, nothing left locked"
    );

    // A sell priced at the bottom would fill at the best bid: it is margined there.
    let sell = w.order(taker, Side::Sell, Price(1), milli(100_000));
    let now = w.now;
    refuse(
        &mut w.engine,
        &mut w.events,
        now,
        Command::PlaceOrder(sell),
        EngineError::InsufficientFunds,
    );
    assert_eq!(w.cash(taker), (2 * USD, 0));
    assert_eq!(w.size(taker), 0);
}

fn funding_payments(events: &[EventRecord]) -> Vec<(AccountId, i64)> {
    events
        .iter()
        .filter_map(|e| match e.event {
            Event::FundingPaid {
                account, payment, ..
            } => Some((account, payment)),
            _ => None,
        })
        .collect()
}

/// A long that cannot pay its funding pays what it has, never more (a fuzz finding: one
/// `AdvanceTime` over five weeks settled 219 periods at the cap and drove its cash below
/// zero); the short receives exactly what was paid.
#[test]
fn funding_never_takes_cash_below_zero_and_still_sums_to_zero() {
    let mut w = World::new();
    let (s, l) = (w.trader(100_000), w.trader(700));
    w.trade(s, l, Side::Buy, px(60_000), milli(100));
    w.quote_above_index(s, s);
    let total = |w: &World| w.cash(s).0 + w.cash(s).1 + w.cash(l).0 + w.cash(l).1;
    let before = total(&w);
    // 0.75 % of about 6,100 USD is about 46 USD per period: 700 USD lasts about 15.
    w.now = T0 + 40 * 240 * MINUTE;
    w.run(Command::AdvanceTime).expect("time");
    let paid = funding_payments(&w.events);
    assert!(paid.len() >= 60, "40 periods settled: {}", paid.len());
    assert_eq!(paid.iter().map(|p| p.1).sum::<i64>(), 0, "zero sum");
    let (available, locked) = w.cash(l);
    assert!(
        available >= 0 && locked >= 0,
        "long's cash {available} {locked}"
    );
    assert_eq!(available, 0, "the long paid all it had");
    assert_eq!(total(&w), before, "cash conserved between the two");
}

#[test]
fn funding_settles_on_schedule_longs_pay_when_positive_and_sums_to_zero() {
    let mut w = World::new();
    let (s, l1, l2) = (w.trader(100_000), w.trader(100_000), w.trader(100_000));
    w.trade(s, l1, Side::Buy, px(60_000), milli(70));
    w.trade(s, l2, Side::Buy, px(60_000), milli(30));
    w.quote_above_index(l1, s);
    let view = w.engine.funding_view(PERP).expect("perp");
    let next = view.next_settlement.expect("perp has funding");
    assert_eq!(
        next,
        Timestamp(T0 + 240 * MINUTE),
        "FIXED_INTERVAL 240 from midnight"
    );
    assert!(view.funding_rate > 0);
    let cash_before: Vec<i64> = [s, l1, l2].iter().map(|&a| w.cash(a).0).collect();
    w.now = T0 + 240 * MINUTE;
    w.run(Command::AdvanceTime).expect("time");
    let paid = funding_payments(&w.events);
    assert_eq!(paid.len(), 3);
    assert_eq!(paid.iter().map(|p| p.1).sum::<i64>(), 0, "zero sum");
    let of = |a| paid.iter().find(|p| p.0 == a).map_or(0, |p| p.1);
    assert!(
        of(l1) < 0 && of(l2) < 0 && of(s) > 0,
        "longs pay shorts: {paid:?}"
    );
    assert!(of(l1) < of(l2), "the bigger long pays more");
    // The capped rate (0.75 %) of 6,100 x 0.07 BTC... in any case the cash moved by it.
    for (i, &a) in [s, l1, l2].iter().enumerate() {
        assert_eq!(w.cash(a).0, cash_before[i] + of(a));
    }
    let settled = w
        .events
        .iter()
        .find_map(|e| match e.event {
            Event::FundingSettled { rate, .. } => Some(rate),
            _ => None,
        })
        .expect("settled");
    assert!(
        settled > 0 && settled <= 750_000,
        "capped at 0.75 %: {settled}"
    );
    // Nothing more until the next period.
    w.now += 239 * MINUTE;
    w.run(Command::AdvanceTime).expect("time");
    assert!(funding_payments(&w.events).is_empty());
    w.now += MINUTE;
    w.run(Command::AdvanceTime).expect("time");
    assert_eq!(funding_payments(&w.events).len(), 3);
}

#[test]
fn negative_premium_makes_shorts_pay() {
    let mut w = World::new();
    let (s, l) = (w.trader(100_000), w.trader(100_000));
    w.trade(s, l, Side::Buy, px(60_000), milli(100));
    w.run(Command::SetIndexPrice {
        instrument: PERP,
        price: px(62_000),
    })
    .expect("index");
    w.now = T0 + 240 * MINUTE;
    w.run(Command::AdvanceTime).expect("time");
    let paid = funding_payments(&w.events);
    let of = |a| paid.iter().find(|p| p.0 == a).map_or(0, |p| p.1);
    assert!(of(s) < 0 && of(l) > 0, "{paid:?}");
    assert_eq!(of(s) + of(l), 0);
}
