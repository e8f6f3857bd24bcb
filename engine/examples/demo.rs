//! A short session on the demo markets: two holders trade BTC_EUR with limit, IOC, FOK,
//! post-only and stop orders; prints every event and the book after each step.

#![warn(clippy::too_many_lines)]

use matchbook::{
    AccountId, Command, CurrencyId, Engine, EngineError, Event, EventRecord, Instrument,
    InstrumentId, NewOrder, OrderType, Side, TimeInForce, Timestamp,
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
    fund(&mut engine, [maker, taker], [btc, eur], t)?;
    let steps = steps(engine.instrument(inst)?, inst, [maker, taker])?;
    for (label, command) in steps {
        t = Timestamp(t.0 + 1_000_000);
        events.clear();
        let result = engine.apply(&command, t, &mut events);
        show(&engine, inst, label, result, &events);
    }
    show_balances(&engine, [maker, taker], [btc, eur])?;
    println!(
        "state hash {:016x} after {} events",
        engine.state_hash(),
        engine.sequence()
    );
    Ok(())
}

/// Funds each account with 2 BTC and 100,000 EUR (balances are integers at 8 decimals).
fn fund(
    engine: &mut Engine,
    accounts: [AccountId; 2],
    [btc, eur]: [CurrencyId; 2],
    t: Timestamp,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut events = Vec::new();
    for account in accounts {
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
    Ok(())
}

/// The demo's commands, each with what it shows: a book built by the maker, then a
/// fill-or-kill and a post-only order refused, a stop, and a sweep that triggers it.
fn steps(
    market: &Instrument,
    inst: InstrumentId,
    [maker, taker]: [AccountId; 2],
) -> Result<Vec<(&'static str, Command)>, Box<dyn std::error::Error>> {
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
    Ok(vec![
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
    ])
}

/// Each account's BTC and EUR, available and locked.
fn show_balances(
    engine: &Engine,
    [maker, taker]: [AccountId; 2],
    [btc, eur]: [CurrencyId; 2],
) -> Result<(), Box<dyn std::error::Error>> {
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
    Ok(())
}
