//! Initial margin, positions and reduce-only orders.

use super::*;

#[test]
fn orders_reserve_initial_margin_in_usd_and_are_refused_beyond_it() {
    let mut w = World::new();
    let a = w.trader(1_000);
    // 0.1 BTC at 60,000: 6,000 USD notional, 10 % initial margin = 600 USD.
    let o = w.order(a, Side::Buy, px(60_000), milli(100));
    w.place(o).expect("within margin");
    assert_eq!(w.cash(a), (400 * USD, 600 * USD));
    let summary = w.engine.futures_summary(a).expect("account");
    assert_eq!(summary.margin.used(), 600 * i128::from(USD));
    assert_eq!(summary.margin.available(), 400 * i128::from(USD));
    // 0.1 BTC more needs another 600 USD: refused, nothing changes.
    let o = w.order(a, Side::Sell, px(70_000), milli(100));
    let mut events = Vec::new();
    refuse(
        &mut w.engine,
        &mut events,
        T0 + 1,
        Command::PlaceOrder(o),
        EngineError::InsufficientFunds,
    );
    // Cancelling releases the margin.
    w.run(Command::CancelAll {
        account: a,
        scope: matchbook::CancelScope::All,
    })
    .expect("cancel");
    assert_eq!(w.cash(a), (1_000 * USD, 0));
    assert_eq!(
        w.engine.futures_summary(a).expect("a").margin.order_margin,
        0
    );
}

#[test]
fn fills_move_positions_and_realise_pnl_and_fees_in_usd() {
    let mut w = World::new();
    let (long, short) = (w.trader(10_000), w.trader(10_000));
    w.trade(short, long, Side::Buy, px(60_000), milli(100));
    assert_eq!((w.size(long), w.size(short)), (1_000, -1_000));
    let p = w.engine.positions(long)[0];
    assert_eq!(p.entry_price, px(60_000));
    // Fees: taker 0.05 % and maker 0.02 % of 6,000 USD.
    assert_eq!(w.cash(long), (10_000 * USD - 3 * USD, 0));
    assert_eq!(w.cash(short), (10_000 * USD - USD * 12 / 10, 0));
    w.open_interest_balanced(&[long, short]);

    // The long sells half at 61,000: +50 USD realised, less the taker fee.
    w.trade(short, long, Side::Sell, px(61_000), milli(50));
    assert_eq!(w.size(long), 500);
    let fee = 3_050 * USD * 5 / 10_000;
    assert_eq!(w.cash(long).0, 10_000 * USD - 3 * USD + 50 * USD - fee);
    let changed = w
        .events
        .iter()
        .find_map(|e| match e.event {
            Event::PositionChanged {
                account,
                size,
                realised,
                ..
            } if account == long => Some((size, realised)),
            _ => None,
        })
        .expect("position event");
    assert_eq!(changed, (500, 50 * USD - fee));

    // Flip: the long sells 0.15 BTC at 59,000: closes 0.05 (-50 USD) and opens a 0.1 short
    // with a new position number.
    let before = w.engine.positions(long)[0].position_id;
    w.trade(short, long, Side::Sell, px(59_000), milli(150));
    let after = w.engine.positions(long)[0];
    assert_eq!(after.size, -1_000);
    assert_eq!(after.entry_price, px(59_000));
    assert_ne!(after.position_id, before, "a flip opens a new position");
    w.open_interest_balanced(&[long, short]);
}

#[test]
fn reduce_only_never_opens_or_adds() {
    let mut w = World::new();
    let (a, b) = (w.trader(10_000), w.trader(10_000));
    let reduce = |o: NewOrder| NewOrder {
        reduce_only: true,
        ..o.with_tif(TimeInForce::ImmediateOrCancelled)
    };
    let flat = reduce(w.order(a, Side::Sell, px(60_000), milli(10)));
    assert_eq!(w.place(flat), Err(EngineError::ReduceOnlyWouldIncrease));
    w.trade(b, a, Side::Buy, px(60_000), milli(100));
    let adds = reduce(w.order(a, Side::Buy, px(60_000), milli(10)));
    assert_eq!(w.place(adds), Err(EngineError::ReduceOnlyWouldIncrease));
    let too_big = reduce(w.order(a, Side::Sell, px(60_000), milli(101)));
    assert_eq!(w.place(too_big), Err(EngineError::ReduceOnlyWouldIncrease));
    let spot = NewOrder {
        reduce_only: true,
        instrument: InstrumentId(0),
        ..reduce(w.order(a, Side::Sell, Price(6_000_000), Qty(1_000)))
    };
    assert_eq!(w.place(spot), Err(EngineError::ReduceOnlyWouldIncrease));
    // A reduce-only order within the position reserves nothing and reduces it.
    let bid = w.order(b, Side::Buy, px(60_000), milli(40));
    w.place(bid).expect("bid");
    let ok = reduce(w.order(a, Side::Sell, px(60_000), milli(40)));
    w.place(ok).expect("reduces");
    assert_eq!(w.size(a), 600);
}

#[test]
fn a_resting_reduce_only_order_fills_only_what_is_left_of_the_position() {
    let mut w = World::new();
    let (a, b, c) = (w.trader(10_000), w.trader(10_000), w.trader(10_000));
    w.trade(b, a, Side::Buy, px(60_000), milli(100));
    // A take-profit for the whole long rests above the market.
    let take_profit = NewOrder {
        reduce_only: true,
        ..w.order(a, Side::Sell, px(62_000), milli(100))
    };
    w.place(take_profit).expect("rests");
    assert_eq!(w.cash(a).1, 0, "reduce-only reserves no margin");
    // Meanwhile the long is mostly closed by another sale.
    w.trade(c, a, Side::Sell, px(61_000), milli(70));
    assert_eq!(w.size(a), 300);
    // A buyer lifts the take-profit for 0.1 BTC: only the 0.03 left may fill.
    let lift = w.order(c, Side::Buy, px(62_000), milli(100));
    w.place(lift).expect("taker");
    assert_eq!(w.size(a), 0, "closed, never short");
    assert!(w.events.iter().any(|e| matches!(
        e.event,
        Event::Trade(t) if t.maker_account == a && t.amount == milli(30)
    )));
    assert!(
        w.engine.open_orders(a).is_empty(),
        "the rest of the take-profit is gone"
    );
    assert_eq!(
        w.size(c),
        milli(100).0,
        "the buyer got 0.07 + 0.03; its rest waits"
    );
    // A reduce-only taker stops at flat too.
    w.run(Command::CancelAll {
        account: c,
        scope: matchbook::CancelScope::All,
    })
    .expect("clear the buyer's rest");
    w.trade(b, a, Side::Buy, px(60_000), milli(20));
    let bid = w.order(b, Side::Buy, px(59_000), milli(100));
    w.place(bid).expect("bid");
    let close = NewOrder {
        reduce_only: true,
        ..w.order(a, Side::Sell, px(59_000), milli(20))
    };
    w.place(close).expect("reduces");
    assert_eq!(w.size(a), 0);
    assert!(w.engine.open_orders(a).is_empty());
}

/// A resting reduce-only order offers only what is left of its position: a fill-or-kill
/// taker that needs more than that from it is refused whole, never filled in part.
#[test]
fn fill_or_kill_counts_a_reduce_only_maker_for_its_position_only() {
    let mut w = World::new();
    let [a, _, c, d] = w.traders_first_long();
    let take_profit = NewOrder {
        reduce_only: true,
        ..w.order(a, Side::Sell, px(62_000), milli(100))
    };
    w.place(take_profit).expect("rests");
    w.trade(c, a, Side::Sell, px(61_000), milli(70));
    // 0.05 from d, then 0.03 from a's take-profit: 0.08 of the 0.1 wanted.
    let ask = w.order(d, Side::Sell, px(61_500), milli(50));
    w.place(ask).expect("ask");
    let fok = w
        .order(c, Side::Buy, px(62_000), milli(100))
        .with_tif(TimeInForce::FillOrKill);
    let applied = w.place(fok).expect("accepted, then refused whole");
    assert_eq!(applied.rejected, Some(EngineError::InsufficientLiquidity));
    assert!(
        !w.events.iter().any(|e| matches!(e.event, Event::Trade(_))),
        "{:?}",
        w.events
    );
    // Wanting what is there, it fills.
    let fok = w
        .order(c, Side::Buy, px(62_000), milli(80))
        .with_tif(TimeInForce::FillOrKill);
    w.place(fok).expect("fills");
    assert_eq!(w.size(a), 0);
    assert_eq!(w.size(d), -milli(50).0);
}

/// A reduce-only stop is checked against its position when it fires, and may then find
/// less left than its amount: as a fill-or-kill order it is refused whole, not filled up
/// to flat.
#[test]
fn a_reduce_only_fill_or_kill_stop_wanting_more_than_its_position_is_refused_whole() {
    let mut w = World::new();
    let [a, _, c, d] = w.traders_first_long();
    let stop = NewOrder {
        order_type: matchbook::OrderType::Stop,
        trigger_price: Some(px(59_000)),
        reduce_only: true,
        ..w.order(a, Side::Sell, px(58_000), milli(100))
    }
    .with_tif(TimeInForce::FillOrKill);
    w.place(stop).expect("held");
    w.trade(c, a, Side::Sell, px(61_000), milli(70));
    let bid = w.order(c, Side::Buy, px(58_500), milli(200));
    w.place(bid).expect("bid");
    // A trade at 58,900 fires the stop: 0.03 of the long is left for its 0.1.
    w.trade(c, d, Side::Sell, px(58_900), milli(10));
    assert!(w.events.iter().any(|e| matches!(
        e.event,
        Event::OrderCancelled {
            reason: matchbook::CancelReason::FillOrKillUnfilled,
            ..
        }
    )));
    assert!(
        !w.events
            .iter()
            .any(|e| matches!(e.event, Event::Trade(t) if t.taker_account == a)),
        "{:?}",
        w.events
    );
    assert_eq!(w.size(a), milli(30).0);
}
