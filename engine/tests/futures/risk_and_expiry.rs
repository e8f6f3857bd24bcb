//! De-risking, liquidation, expiry of dated futures, margin for amends and transfers, replay.

use super::*;

#[test]
fn equity_below_maintenance_enters_derisk_and_liquidation_closes_the_position() {
    let mut w = World::new();
    let (long, maker) = (w.trader(700), w.trader(100_000));
    w.trade(maker, long, Side::Buy, px(60_000), milli(100));
    assert!(!w.engine.futures_summary(long).expect("a").derisk);
    // Index to 55,000: the mark (last trade, clamped to 52,250..57,750) falls to 57,750
    // and the long loses 225 USD of its ~697: still above 5 % maintenance (289 USD).
    w.run(Command::SetIndexPrice {
        instrument: PERP,
        price: px(55_000),
    })
    .expect("index");
    assert!(!w.engine.futures_summary(long).expect("a").derisk);
    // Index to 50,000: mark 52,500, loss 750 USD: equity below maintenance.
    w.run(Command::SetIndexPrice {
        instrument: PERP,
        price: px(50_000),
    })
    .expect("index");
    assert!(
        w.events.iter().any(
            |e| matches!(e.event, Event::DeriskChanged { account, on: true } if account == long)
        )
    );
    let summary = w.engine.futures_summary(long).expect("a");
    assert!(summary.derisk);
    assert!(summary.margin.equity() < summary.margin.maintenance);
    // In de-risk: no risk-increasing orders, no transfers out.
    let more = w.order(long, Side::Buy, px(52_000), milli(1));
    assert_eq!(w.place(more), Err(EngineError::AccountInDerisk));
    // Liquidation sells into the book.
    let bid = w.order(maker, Side::Buy, px(52_500), milli(100));
    w.place(bid).expect("bid");
    w.run(Command::Liquidate { account: long })
        .expect("liquidate");
    assert_eq!(w.size(long), 0);
    assert!(
        w.events.iter().any(
            |e| matches!(e.event, Event::DeriskChanged { account, on: false } if account == long)
        ),
        "flat again: de-risk lifted"
    );
    w.open_interest_balanced(&[long, maker]);
}

#[test]
fn dated_futures_expire_cancel_orders_and_settle_positions() {
    let mut w = World::new();
    let (a, b) = (w.trader(100_000), w.trader(100_000));
    let ask = NewOrder::limit(a, DATED, Side::Sell, px(60_000), milli(100));
    w.place(ask).expect("ask");
    let bid = NewOrder::limit(b, DATED, Side::Buy, px(60_000), milli(100));
    w.place(bid).expect("bid");
    let resting = NewOrder::limit(a, DATED, Side::Sell, px(65_000), milli(10));
    w.place(resting).expect("rests");
    w.run(Command::SetIndexPrice {
        instrument: DATED,
        price: px(61_000),
    })
    .expect("index");
    // 2027-03-26T00:00:00Z.
    w.now = T0 + (365 + 31 + 28 + 25) * 86_400_000_000_000;
    w.run(Command::AdvanceTime).expect("time");
    assert!(w.events.iter().any(|e| matches!(
        e.event,
        Event::OrderCancelled {
            reason: matchbook::CancelReason::InstrumentClosed,
            ..
        }
    )));
    assert_eq!(
        w.engine.instrument(DATED).expect("dated").state,
        InstrumentState::Closed
    );
    assert!(w.engine.positions(a).is_empty() && w.engine.positions(b).is_empty());
    // Settled at the mark: the book's last trade 60,000 clamped around 61,000 -> 60,000.
    let realised: Vec<i64> = w
        .events
        .iter()
        .filter_map(|e| match e.event {
            Event::PositionChanged { realised, .. } => Some(realised),
            _ => None,
        })
        .collect();
    assert_eq!(realised.len(), 2);
    assert_eq!(
        realised.iter().sum::<i64>(),
        0,
        "settled at one price, no fee"
    );
    assert_eq!(
        w.place(NewOrder::limit(a, DATED, Side::Sell, px(60_000), milli(1))),
        Err(EngineError::InstrumentNotTrading)
    );
}

#[test]
fn amends_need_margin_available_not_just_free_cash() {
    let mut w = World::new();
    let (a, b) = (w.trader(1_000), w.trader(100_000));
    w.trade(b, a, Side::Buy, px(60_000), milli(100));
    // The position holds 600 USD of margin that is not locked: cash is ~997 available.
    let o = w.order(a, Side::Buy, px(50_000), milli(10));
    w.place(o).expect("50 USD of margin fits");
    let resting = w.engine.open_orders(a)[0].handle();
    let mut events = Vec::new();
    // To 0.1 BTC: 450 USD more, within the cash but beyond the ~347 USD of free margin.
    refuse(
        &mut w.engine,
        &mut events,
        T0 + 2,
        Command::AmendOrder {
            account: a,
            order: resting,
            amount: Some(milli(100)),
            price: None,
        },
        EngineError::InsufficientFunds,
    );
    w.run(Command::AmendOrder {
        account: a,
        order: resting,
        amount: Some(milli(50)),
        price: None,
    })
    .expect("200 USD more fits");
}

#[test]
fn transfers_out_keep_the_margin_positions_need() {
    let mut w = World::new();
    let (a, b) = (w.trader(1_000), w.trader(100_000));
    let holder = w.engine.holder_of(a).expect("holder");
    let sub = w
        .run(Command::CreateSubaccount {
            holder,
            name: "s".into(),
            kind: matchbook::AccountKind::Regular,
        })
        .expect("sub")
        .account
        .expect("sub");
    w.trade(b, a, Side::Buy, px(60_000), milli(100));
    // 600 USD initial margin held by the position; about 397 free.
    let usd = w.engine.currency_by_code("USD").expect("USD");
    let transfer = |amount| Command::Transfer {
        holder,
        source: a,
        destination: sub,
        currency: usd,
        amount,
    };
    assert!(matches!(
        w.run(transfer(500 * USD)),
        Err(EngineError::InsufficientBalance { .. })
    ));
    w.run(transfer(300 * USD)).expect("free margin moves");
}

#[test]
fn futures_replay_gives_the_same_state() {
    let run = || {
        let mut w = World::new();
        let (a, b, c) = (w.trader(50_000), w.trader(50_000), w.trader(50_000));
        w.trade(a, b, Side::Buy, px(60_000), milli(30));
        w.trade(c, a, Side::Buy, px(60_500), milli(50));
        w.run(Command::SetIndexPrice {
            instrument: PERP,
            price: px(60_100),
        })
        .expect("index");
        for step in 1..=5 {
            w.now = T0 + step * 97 * MINUTE;
            w.run(Command::AdvanceTime).expect("time");
        }
        w.engine.state_hash()
    };
    assert_eq!(run(), run());
}

#[test]
fn session_based_funding_splits_the_utc_day() {
    let mut config = matchbook::demo::config();
    let perp = config
        .instruments
        .iter_mut()
        .find(|i| i.code == "BTC_USD_PERP")
        .expect("perp");
    if let Some(terms) = &mut perp.futures {
        terms.funding_schedule = matchbook::FundingSchedule::SessionBased {
            calendar: "UTC".into(),
            max_periods_per_day: 2,
            split: "SESSION_MIDPOINT".into(),
        };
    }
    let mut engine = Engine::new(config).expect("valid");
    let mut events = Vec::new();
    engine
        .apply(
            &Command::AdvanceTime,
            Timestamp(T0 + 3_600_000_000_000),
            &mut events,
        )
        .expect("clock");
    let next = engine.funding_view(PERP).expect("perp").next_settlement;
    assert_eq!(
        next,
        Some(Timestamp(T0 + 12 * 60 * MINUTE)),
        "the session midpoint"
    );
    assert_eq!(engine.funding_view(PERP).expect("perp").period_minutes, 720);
    let mut bad = matchbook::demo::config();
    for i in &mut bad.instruments {
        if let Some(terms) = &mut i.futures {
            terms.funding_schedule =
                matchbook::FundingSchedule::FixedInterval { period_minutes: 7 };
        }
    }
    assert!(Engine::new(bad).is_err(), "a period must divide the day");
}

#[test]
fn de_risk_lifts_when_the_price_recovers() {
    let mut w = World::new();
    let (long, maker) = (w.trader(700), w.trader(100_000));
    w.trade(maker, long, Side::Buy, px(60_000), milli(100));
    w.run(Command::SetIndexPrice {
        instrument: PERP,
        price: px(50_000),
    })
    .expect("index");
    assert!(w.engine.futures_summary(long).expect("a").derisk);
    w.run(Command::SetIndexPrice {
        instrument: PERP,
        price: px(60_000),
    })
    .expect("index");
    assert!(w.events.iter().any(
        |e| matches!(e.event, Event::DeriskChanged { account, on: false } if account == long)
    ));
    assert!(!w.engine.futures_summary(long).expect("a").derisk);
    // An operator's de-risk is not lifted by the price.
    w.run(Command::SetDerisk {
        account: long,
        on: true,
    })
    .expect("manual");
    w.run(Command::SetIndexPrice {
        instrument: PERP,
        price: px(61_000),
    })
    .expect("index");
    assert!(w.engine.futures_summary(long).expect("a").derisk);
}

/// A long closed far past its bankruptcy price (the operator's liquidation into a book
/// that collapsed; a fuzz finding: the cash went below zero) costs the account all its cash
/// and no more; the exchange's USD fee pot absorbs the rest, so money is still conserved.
#[test]
fn a_loss_beyond_the_cash_empties_it_and_the_fee_pot_absorbs_the_rest() {
    let mut w = World::new();
    let (s, l, b) = (w.trader(100_000), w.trader(700), w.trader(100_000));
    w.trade(s, l, Side::Buy, px(60_000), milli(100));
    let bid = w.order(b, Side::Buy, px(30_000), milli(100));
    w.place(bid).expect("a bid far below");
    let usd = usize::from(w.engine.currency_by_code("USD").expect("USD").0);
    let pot = |w: &World| w.engine.fees_collected()[usd];
    let (cash_before, pot_before) = (w.cash(l).0 + w.cash(l).1, pot(&w));
    w.run(Command::Liquidate { account: l }).expect("liquidate");
    let trade = w
        .events
        .iter()
        .find_map(|e| match e.event {
            Event::Trade(t) => Some(t),
            _ => None,
        })
        .expect("the long was sold");
    assert_eq!((trade.price, trade.amount), (px(30_000), milli(100)));
    assert_eq!(w.size(l), 0);
    assert_eq!(w.cash(l), (0, 0), "all its cash, no more");
    // 0.1 BTC from 60,000 to 30,000: a 3,000 USD loss (plus the taker fee) against 700.
    let loss = 3_000 * USD;
    assert!(loss > cash_before);
    assert_eq!(
        pot(&w),
        pot_before + trade.maker_fee - (loss - cash_before),
        "the pot keeps the maker's fee and pays what the cash could not"
    );
}
