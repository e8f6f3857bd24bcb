//! Reservations, settlement of fills and fees.

use super::*;

#[test]
fn orders_reserve_then_release_exactly() {
    let mut w = World::new();
    let (_, a) = w.holder();
    let (btc, eur) = (w.btc, w.eur);
    w.deposit(a, eur, 100 * ONE);
    w.deposit(a, btc, ONE);
    // Buy reserves amount x price of quote, sell reserves the amount of base.
    let buy = w
        .ok(Command::PlaceOrder(w.order(a, Side::Buy, "90.00", "1")))
        .order
        .expect("order");
    assert_eq!(w.balance(a, eur), (10 * ONE, 90 * ONE));
    assert_eq!(w.engine.order(buy).map(|o| o.reserved()), Some(90 * ONE));
    let sell = w
        .ok(Command::PlaceOrder(w.order(a, Side::Sell, "110.00", "0.4")))
        .order
        .expect("order");
    assert_eq!(w.balance(a, btc), (ONE * 6 / 10, ONE * 4 / 10));
    // Not enough: refused, nothing changes.
    w.refuse(
        Command::PlaceOrder(w.order(a, Side::Buy, "90.00", "0.12")),
        EngineError::InsufficientFunds,
    );
    w.refuse(
        Command::PlaceOrder(w.order(a, Side::Sell, "110.00", "0.60001")),
        EngineError::InsufficientFunds,
    );
    // Amends move the reservation; one beyond what is available is refused.
    w.ok(Command::AmendOrder {
        account: a,
        order: buy,
        amount: None,
        price: Some(p("80.00")),
    });
    assert_eq!(w.balance(a, eur), (20 * ONE, 80 * ONE));
    w.refuse(
        Command::AmendOrder {
            account: a,
            order: buy,
            amount: Some(q("2")),
            price: None,
        },
        EngineError::InsufficientFunds,
    );
    // Cancels release exactly what was reserved.
    w.ok(Command::CancelOrder {
        account: a,
        order: buy,
    });
    w.ok(Command::CancelOrder {
        account: a,
        order: sell,
    });
    assert_eq!(w.balance(a, eur), (100 * ONE, 0));
    assert_eq!(w.balance(a, btc), (ONE, 0));
}

#[test]
fn fills_settle_both_sides_with_price_improvement_and_fees() {
    let mut w = World::new();
    let (_, seller) = w.holder();
    let (_, buyer) = w.holder();
    let (btc, eur) = (w.btc, w.eur);
    w.deposit(seller, btc, ONE);
    w.deposit(buyer, eur, 200 * ONE);
    w.ok(Command::PlaceOrder(w.order(
        seller,
        Side::Sell,
        "100.00",
        "1",
    )));
    w.ok(Command::PlaceOrder(w.order(
        buyer,
        Side::Buy,
        "101.00",
        "1",
    )));
    let trade = w.events.iter().find_map(|e| match e.event {
        Event::Trade(t) => Some(t),
        _ => None,
    });
    let trade = trade.expect("traded");
    // Taker (buyer) pays 0.15 % of the BTC it receives; maker (seller) 0.10 % of its EUR.
    assert_eq!(
        (trade.taker_fee, trade.maker_fee),
        (ONE * 15 / 10_000, ONE * 100 / 1_000)
    );
    assert_eq!(
        w.balance(buyer, eur),
        (100 * ONE, 0),
        "paid 100, got the 1 EUR improvement back"
    );
    assert_eq!(w.balance(buyer, btc), (ONE - ONE * 15 / 10_000, 0));
    assert_eq!(w.balance(seller, btc), (0, 0));
    assert_eq!(w.balance(seller, eur), (100 * ONE - ONE / 10, 0));
    let fees = w.engine.fees_collected();
    assert_eq!(
        (fees[usize::from(btc.0)], fees[usize::from(eur.0)]),
        (ONE * 15 / 10_000, ONE / 10)
    );
}

#[test]
fn fees_round_up_in_the_exchanges_favour() {
    let mut w = World::new();
    let (_, seller) = w.holder();
    let (_, buyer) = w.holder();
    let (btc, eur) = (w.btc, w.eur);
    w.deposit(seller, btc, ONE);
    w.deposit(buyer, eur, 200 * ONE);
    w.ok(Command::PlaceOrder(NewOrder::limit(
        seller,
        w.btc_eur,
        Side::Sell,
        p("1000.01"),
        q("0.01001"),
    )));
    w.ok(Command::PlaceOrder(NewOrder::limit(
        buyer,
        w.btc_eur,
        Side::Buy,
        p("1000.01"),
        q("0.01001"),
    )));
    let trade = w
        .events
        .iter()
        .find_map(|e| {
            if let Event::Trade(t) = e.event {
                Some(t)
            } else {
                None
            }
        })
        .expect("trade");
    // Buyer receives 1,001,000 BTC units: 0.15 % is 1,501.5, charged 1,502.
    assert_eq!(trade.taker_fee, 1_502);
    // Seller receives 1,001,010,010 EUR units (10.0101001 EUR): 0.10 % is 1,001,010.01,
    // charged 1,001,011.
    assert_eq!(trade.maker_fee, 1_001_011);
    assert_eq!(w.balance(seller, eur), (1_001_010_010 - 1_001_011, 0));
}

#[test]
fn ioc_remainder_and_market_buys_release_what_they_did_not_use() {
    let mut w = World::new();
    let (_, seller) = w.holder();
    let (_, buyer) = w.holder();
    let (btc, eur) = (w.btc, w.eur);
    w.deposit(seller, btc, ONE);
    w.deposit(buyer, eur, 1_000 * ONE);
    w.ok(Command::PlaceOrder(w.order(
        seller,
        Side::Sell,
        "100.00",
        "0.5",
    )));
    w.ok(Command::PlaceOrder(
        w.order(buyer, Side::Buy, "100.00", "2")
            .with_tif(TimeInForce::ImmediateOrCancelled),
    ));
    assert_eq!(w.balance(buyer, eur), (950 * ONE, 0));
    w.ok(Command::PlaceOrder(w.order(
        seller,
        Side::Sell,
        "200.00",
        "0.5",
    )));
    let mut market = w.order(buyer, Side::Buy, "1", "1");
    market.order_type = OrderType::Market;
    market.price = None;
    w.ok(Command::PlaceOrder(market));
    // Reserved exactly the cost of what the book offered (100 EUR), spent it all.
    assert!(
        w.events.iter().any(
            |e| matches!(e.event, Event::BalanceChanged { locked, .. } if locked == 100 * ONE)
        )
    );
    assert_eq!(w.balance(buyer, eur), (850 * ONE, 0));
    // A market buy that cannot pay for what the book offers is refused.
    w.deposit(seller, btc, ONE);
    w.ok(Command::PlaceOrder(w.order(
        seller,
        Side::Sell,
        "100.00",
        "0.5",
    )));
    let (_, broke) = w.holder();
    w.refuse(
        Command::PlaceOrder(NewOrder {
            account: broke,
            ..market
        }),
        EngineError::InsufficientFunds,
    );
}

/// A fill of an OCO leg cancels its peer mid-sweep, so the walk before a sweep (what a market
/// buy reserves, whether a fill-or-kill order fills whole) must not count a peer it reaches
/// after the leg: counted, the market buy reserved too little and spent past its balance,
/// and the fill-or-kill order filled in part.
#[test]
fn a_sweep_that_cancels_an_oco_peer_is_priced_without_it() {
    let mut w = World::new();
    let (_, seller) = w.holder();
    let (_, far_seller) = w.holder();
    let (_, buyer) = w.holder();
    let (btc, eur) = (w.btc, w.eur);
    w.deposit(seller, btc, ONE);
    w.deposit(far_seller, btc, ONE);
    w.deposit(buyer, eur, 1_000 * ONE);
    let near = w.order(seller, Side::Sell, "100.00", "0.5");
    let peer = w.order(seller, Side::Sell, "110.00", "0.5");
    w.ok(Command::PlaceOco {
        first: near,
        second: Box::new(peer),
    });
    w.ok(Command::PlaceOrder(w.order(
        far_seller,
        Side::Sell,
        "200.00",
        "1",
    )));
    let traded = |w: &World| -> Vec<(Price, Qty)> {
        w.events
            .iter()
            .filter_map(|e| match e.event {
                Event::Trade(t) => Some((t.price, t.amount)),
                _ => None,
            })
            .collect()
    };
    // Up to 110 the book holds 0.5 once the leg at 100 has traded: all or nothing is nothing.
    let fok = w
        .order(buyer, Side::Buy, "110.00", "1")
        .with_tif(TimeInForce::FillOrKill);
    w.ok(Command::PlaceOrder(fok));
    assert_eq!(traded(&w), []);
    assert_eq!(w.balance(buyer, eur), (1_000 * ONE, 0));
    // The market buy reserves 0.5 at 100 and 0.5 at 200, and spends exactly that.
    let mut market = w.order(buyer, Side::Buy, "1", "1");
    market.order_type = OrderType::Market;
    market.price = None;
    w.ok(Command::PlaceOrder(market));
    assert!(w.events.iter().any(|e| matches!(
        e.event,
        Event::BalanceChanged { account, locked, .. } if account == buyer && locked == 150 * ONE
    )));
    assert_eq!(
        traded(&w),
        [(p("100.00"), q("0.5")), (p("200.00"), q("0.5"))]
    );
    assert_eq!(w.balance(buyer, eur), (850 * ONE, 0));
}

#[test]
fn fee_tiers_follow_combined_volume_and_expire_after_30_days() {
    let mut w = World::new();
    let (holder, main) = w.holder();
    let sub = w.sub(holder, "sub", AccountKind::Regular);
    let (_, other) = w.holder();
    let (btc, eur) = (w.btc, w.eur);
    for a in [main, sub, other] {
        w.deposit(a, btc, 10_000 * ONE);
        w.deposit(a, eur, 10_000_000 * ONE);
    }
    let fees = w.engine.account_fees(main).expect("fees");
    assert_eq!(
        fees.running_volumes
            .iter()
            .map(|v| v.fee_group_id)
            .collect::<Vec<_>>(),
        vec!["SPOT", "FUTURES"]
    );
    assert_eq!(fees.active_fee_tiers[0].taker_fee, "0.1500");
    // 60,000 EUR by the main account and 40,000 EUR by the subaccount: 100,000 together.
    w.ok(Command::PlaceOrder(w.order(
        other,
        Side::Sell,
        "100.00",
        "1000",
    )));
    w.ok(Command::PlaceOrder(w.order(
        main,
        Side::Buy,
        "100.00",
        "600",
    )));
    w.ok(Command::PlaceOrder(w.order(
        sub,
        Side::Buy,
        "100.00",
        "400",
    )));
    let fees = w.engine.account_fees(sub).expect("fees");
    assert_eq!(fees.running_volumes[0].volume, 100_000 * i128::from(ONE));
    assert_eq!(
        (
            fees.active_fee_tiers[0].maker_fee,
            fees.active_fee_tiers[0].taker_fee
        ),
        ("0.0800", "0.1300")
    );
    // The next trade is charged at the new taker rate.
    w.ok(Command::PlaceOrder(w.order(
        other,
        Side::Sell,
        "100.00",
        "1",
    )));
    w.ok(Command::PlaceOrder(w.order(main, Side::Buy, "100.00", "1")));
    let trade = w
        .events
        .iter()
        .find_map(|e| {
            if let Event::Trade(t) = e.event {
                Some(t)
            } else {
                None
            }
        })
        .expect("trade");
    assert_eq!(trade.taker_fee, ONE * 13 / 10_000);
    // Thirty days on, the volume has left the window.
    w.now += 30 * DAY;
    w.ok(Command::AdvanceTime);
    let fees = w.engine.account_fees(main).expect("fees");
    assert_eq!(
        (
            fees.running_volumes[0].volume,
            fees.active_fee_tiers[0].taker_fee
        ),
        (0, "0.1500")
    );
    let groups: Vec<_> = w
        .engine
        .fee_groups()
        .map(|g| (g.id.as_str(), g.volume_currency.as_str(), g.tiers.len()))
        .collect();
    assert_eq!(groups, vec![("SPOT", "EUR", 6), ("FUTURES", "USD", 4)]);
}
