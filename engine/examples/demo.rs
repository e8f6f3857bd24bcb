//! A short session on the demo markets: two holders trade BTC_EUR with limit, IOC, FOK,
//! post-only and stop orders; prints every event and the book after each step.

use matchbook::{
    Command, Engine, EngineError, Event, EventRecord, InstrumentId, NewOrder, OrderType, Side,
    TimeInForce, Timestamp,
};

fn show(
    engine: &Engine,
    inst: InstrumentId,
    label: &str,
    result: Result<matchbook::Applied, EngineError>,
    events: &[EventRecord],
) {
    let market = engine.instrument(inst).expect("demo market");
    println!(
        "== {label}: {}",
        match result {
            Ok(_) => "accepted".to_owned(),
            Err(e) => format!("refused {} ({})", e.as_str(), e.code()),
        }
    );
    for record in events {
        match record.event {
            Event::Trade(t) => println!(
                "   #{:<3} trade {} {} @ {} (maker order {}, taker order {})",
                record.seq,
                t.taker_side.as_str(),
                market.show_qty(t.amount),
                market.show_price(t.price),
                t.maker.id,
                t.taker.id
            ),
            other => println!("   #{:<3} {other:?}", record.seq),
        }
    }
    let book = engine.book_levels(inst, 5).expect("book");
    for level in book.asks.iter().rev() {
        println!(
            "      ask {:>10} x {:>8} ({} orders)",
            market.show_price(level.price),
            market.show_qty(level.amount),
            level.number_of_orders
        );
    }
    for level in &book.bids {
        println!(
            "      bid {:>10} x {:>8} ({} orders)",
            market.show_price(level.price),
            market.show_qty(level.amount),
            level.number_of_orders
        );
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut engine = Engine::new(matchbook::demo::config())?;
    let mut events = Vec::new();
    let mut t = Timestamp::from_millis(1_767_225_600_000);
    let maker = engine
        .apply(&Command::CreateHolder, t, &mut events)?
        .account
        .ok_or("no account")?;
    let taker = engine
        .apply(&Command::CreateHolder, t, &mut events)?
        .account
        .ok_or("no account")?;
    let inst = engine.instrument_by_code("BTC_EUR").ok_or("no BTC_EUR")?;
    let btc = engine.currency_by_code("BTC").ok_or("no BTC")?;
    let eur = engine.currency_by_code("EUR").ok_or("no EUR")?;
    // Balances are integers at 8 decimals for BTC and EUR: fund 2 BTC and 100,000 EUR each.
    for account in [maker, taker] {
        engine.apply(
            &Command::Deposit {
                account,
                currency: btc,
                amount: 200_000_000,
            },
            t,
            &mut events,
        )?;
        engine.apply(
            &Command::Deposit {
                account,
                currency: eur,
                amount: 10_000_000_000_000,
            },
            t,
            &mut events,
        )?;
    }
    let market = engine.instrument(inst)?.clone();
    let order = |account,
                 side,
                 price: &str,
                 amount: &str|
     -> Result<NewOrder, Box<dyn std::error::Error>> {
        Ok(NewOrder::limit(
            account,
            inst,
            side,
            market.parse_price(price)?,
            market.parse_qty(amount)?,
        ))
    };
    let steps: Vec<(&str, Command)> = vec![
        (
            "maker asks 0.5 @ 30000",
            Command::PlaceOrder(order(maker, Side::Sell, "30000.00", "0.5")?),
        ),
        (
            "maker asks 1.0 @ 30100",
            Command::PlaceOrder(order(maker, Side::Sell, "30100.00", "1.0")?),
        ),
        (
            "maker bids 0.8 @ 29900",
            Command::PlaceOrder(order(maker, Side::Buy, "29900.00", "0.8")?),
        ),
        (
            "taker FOK buy 2.0 @ 30100 (too little liquidity)",
            Command::PlaceOrder(
                order(taker, Side::Buy, "30100.00", "2.0")?.with_tif(TimeInForce::FillOrKill),
            ),
        ),
        (
            "taker post-only buy @ 30000 (would take)",
            Command::PlaceOrder(
                order(taker, Side::Buy, "30000.00", "0.1")?.with_tif(TimeInForce::PostOnly),
            ),
        ),
        (
            "taker stop: buy 0.2 @ 30200 once the price reaches 30100",
            Command::PlaceOrder(NewOrder {
                order_type: OrderType::Stop,
                trigger_price: Some(market.parse_price("30100.00")?),
                ..order(taker, Side::Buy, "30200.00", "0.2")?
            }),
        ),
        (
            "taker IOC buy 1.0 @ 30100 (sweeps two levels, triggers the stop)",
            Command::PlaceOrder(
                order(taker, Side::Buy, "30100.00", "1.0")?
                    .with_tif(TimeInForce::ImmediateOrCancelled),
            ),
        ),
    ];
    for (label, command) in steps {
        t = Timestamp(t.0 + 1_000_000);
        events.clear();
        let result = engine.apply(&command, t, &mut events);
        show(&engine, inst, label, result, &events);
    }
    for (name, account) in [("maker", maker), ("taker", taker)] {
        let view = engine.account(account)?;
        let b = |c: matchbook::CurrencyId| view.balances.get(c);
        let show = |v: i64| matchbook::fixed::format_scaled(v.into(), 8);
        println!(
            "{name}: BTC {} available, {} locked; EUR {} available, {} locked",
            show(b(btc).available),
            show(b(btc).locked),
            show(b(eur).available),
            show(b(eur).locked),
        );
    }
    println!(
        "state hash {:016x} after {} events",
        engine.state_hash(),
        engine.sequence()
    );
    Ok(())
}
