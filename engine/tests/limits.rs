//! The engine's bounds (issue 19): a deposit or transfer past the balance cap, an order
//! past the largest amount and a time past the horizon are refused without touching
//! state; a fill into a balance at the cap stops there and the rest goes to the fee account
//! (the reported wrap: a holder of 92,233,720,368.54775807 EUR selling 0.001 BTC at 60,000
//! ended at -92,233,720,308.6 EUR);
//! a clock jump of decades settles a bounded number of funding periods and goes on.

#![warn(clippy::too_many_lines)]

mod common;

use common::{p, q, refuse, run};
use matchbook::limits::{
    MAX_BALANCE, MAX_ORDER_LOTS, MAX_PRICE, MAX_SETTLEMENTS_PER_COMMAND, TIME_HORIZON,
};
use matchbook::{
    AccountId, Command, Engine, EngineError, Event, EventRecord, InstrumentId, NewOrder, Price,
    Qty, Side, Timestamp,
};

/// 2026-01-01T00:00:00Z.
const T0: i64 = 1_767_225_600_000_000_000;

/// The engine passes the checks a snapshot of it would have to pass on load.
fn consistent(engine: &Engine) {
    let reference = Engine::new(matchbook::demo::config()).expect("demo");
    engine.check_restored(&reference).expect("consistent");
}

struct Setup {
    engine: Engine,
    events: Vec<EventRecord>,
    btc_eur: InstrumentId,
}

impl Setup {
    fn new() -> Self {
        let engine = Engine::new(matchbook::demo::config()).expect("demo");
        let btc_eur = engine.instrument_by_code("BTC_EUR").expect("BTC_EUR");
        Self {
            engine,
            events: Vec::new(),
            btc_eur,
        }
    }

    fn holder(&mut self) -> AccountId {
        run(
            &mut self.engine,
            &mut self.events,
            T0,
            &Command::CreateHolder,
        )
        .expect("holder")
        .account
        .expect("main")
    }

    fn deposit(&mut self, account: AccountId, code: &str, amount: i64) -> Result<(), EngineError> {
        let currency = self.engine.currency_by_code(code).expect("currency");
        let command = Command::Deposit {
            account,
            currency,
            amount,
        };
        run(&mut self.engine, &mut self.events, T0, &command).map(|_| ())
    }

    fn available(&self, account: AccountId, code: &str) -> i64 {
        let c = self.engine.currency_by_code(code).expect("currency");
        self.engine
            .account(account)
            .expect("account")
            .balances
            .get(c)
            .available
    }
}

#[test]
fn a_balance_never_passes_its_cap_and_the_reported_wrap_cannot_happen() {
    let mut s = Setup::new();
    let (holder, buyer) = (s.holder(), s.holder());
    // The reported deposit: i64::MAX units of EUR.
    let command = Command::Deposit {
        account: holder,
        currency: s.engine.currency_by_code("EUR").expect("EUR"),
        amount: i64::MAX,
    };
    refuse(
        &mut s.engine,
        &mut s.events,
        T0,
        command,
        EngineError::BalanceLimitExceeded,
    );
    // Up to the cap, 50 EUR short of it, and not a unit more.
    let room = 50 * 100_000_000;
    s.deposit(holder, "EUR", MAX_BALANCE - room).expect("fits");
    assert_eq!(
        s.deposit(holder, "EUR", room + 1),
        Err(EngineError::BalanceLimitExceeded)
    );
    s.deposit(buyer, "EUR", 1_000_000 * 100_000_000)
        .expect("buyer");
    s.deposit(holder, "BTC", 100_000).expect("0.001 BTC");
    // The reported fill: the holder sells 0.001 BTC at 60,000. Its EUR stops at the cap
    // and what did not fit goes to the fee account, so units are still conserved.
    let fees_before =
        s.engine.fees_collected()[usize::from(s.engine.currency_by_code("EUR").expect("EUR").0)];
    let sell = NewOrder::limit(holder, s.btc_eur, Side::Sell, p("60000"), q("0.001"));
    run(&mut s.engine, &mut s.events, T0, &Command::PlaceOrder(sell)).expect("ask");
    let buy = NewOrder::limit(buyer, s.btc_eur, Side::Buy, p("60000"), q("0.001"));
    run(&mut s.engine, &mut s.events, T0, &Command::PlaceOrder(buy)).expect("bid");
    assert!(s.events.iter().any(|e| matches!(e.event, Event::Trade(_))));
    assert_eq!(
        s.available(holder, "EUR"),
        MAX_BALANCE,
        "capped, never wrapped"
    );
    let eur = usize::from(s.engine.currency_by_code("EUR").expect("EUR").0);
    let spilled = s.engine.fees_collected()[eur] - fees_before;
    assert!(
        spilled > 0 && spilled <= 60 * 100_000_000 - room,
        "fee and spill: {spilled}"
    );
    // A transfer into a full balance is refused like a deposit.
    let sub = run(
        &mut s.engine,
        &mut s.events,
        T0,
        &Command::CreateSubaccount {
            holder: matchbook::HolderId(0),
            name: "sub".into(),
            kind: matchbook::AccountKind::Regular,
        },
    )
    .expect("sub")
    .account
    .expect("account");
    s.deposit(sub, "EUR", 100).expect("deposit");
    let transfer = Command::Transfer {
        holder: matchbook::HolderId(0),
        source: sub,
        destination: holder,
        currency: s.engine.currency_by_code("EUR").expect("EUR"),
        amount: 1,
    };
    refuse(
        &mut s.engine,
        &mut s.events,
        T0,
        transfer,
        EngineError::BalanceLimitExceeded,
    );
    consistent(&s.engine);
}

#[test]
fn an_order_past_the_largest_amount_is_refused_and_amends_are_bounded_too() {
    let mut s = Setup::new();
    let maker = s.holder();
    s.deposit(maker, "BTC", MAX_BALANCE).expect("deposit");
    let too_big = NewOrder::limit(
        maker,
        s.btc_eur,
        Side::Sell,
        p("60000"),
        Qty(MAX_ORDER_LOTS + 1),
    );
    refuse(
        &mut s.engine,
        &mut s.events,
        T0,
        Command::PlaceOrder(too_big),
        EngineError::AmountTooLarge,
    );
    let largest = NewOrder::limit(
        maker,
        s.btc_eur,
        Side::Sell,
        p("60000"),
        Qty(MAX_ORDER_LOTS),
    );
    let order = run(
        &mut s.engine,
        &mut s.events,
        T0,
        &Command::PlaceOrder(largest),
    )
    .expect("the largest amount rests")
    .order
    .expect("order");
    let amend = Command::AmendOrder {
        account: maker,
        order,
        amount: Some(Qty(MAX_ORDER_LOTS + 1)),
        price: None,
    };
    refuse(
        &mut s.engine,
        &mut s.events,
        T0,
        amend,
        EngineError::AmountTooLarge,
    );
}

#[test]
fn a_time_past_the_horizon_is_refused_and_the_horizon_itself_is_taken() {
    let mut s = Setup::new();
    s.holder();
    let hash = s.engine.content_hash();
    for late in [TIME_HORIZON.0 + 1, i64::MAX] {
        s.events.clear();
        assert_eq!(
            s.engine
                .apply(&Command::AdvanceTime, Timestamp(late), &mut s.events),
            Err(EngineError::TimeOutOfRange)
        );
        assert_eq!(
            s.engine.content_hash(),
            hash,
            "a refused time moves nothing"
        );
    }
    s.events.clear();
    s.engine
        .apply(&Command::AdvanceTime, TIME_HORIZON, &mut s.events)
        .expect("the horizon itself");
    assert_eq!(s.engine.now(), TIME_HORIZON);
}

/// A perp with positions and quotes above the index, so every period pays funding.
fn funded_perp() -> (Engine, Vec<EventRecord>) {
    let mut s = Setup::new();
    let perp = InstrumentId(5);
    let (long, short) = (s.holder(), s.holder());
    for a in [long, short] {
        s.deposit(a, "USD", 1_000_000 * 100_000_000).expect("USD");
    }
    let place = |s: &mut Setup, a, side, price: i64| {
        let o = NewOrder::limit(a, perp, side, matchbook::Price(price * 10), Qty(1000));
        run(&mut s.engine, &mut s.events, T0, &Command::PlaceOrder(o)).expect("order");
    };
    place(&mut s, short, Side::Sell, 60_000);
    place(&mut s, long, Side::Buy, 60_000);
    place(&mut s, long, Side::Buy, 60_990);
    place(&mut s, short, Side::Sell, 61_010);
    let index = Command::SetIndexPrice {
        instrument: perp,
        price: matchbook::Price(600_000),
    };
    run(&mut s.engine, &mut s.events, T0, &index).expect("index");
    (s.engine, s.events)
}

#[test]
fn a_clock_jump_of_decades_settles_a_bounded_number_of_funding_periods() {
    let (mut engine, mut events) = funded_perp();
    let settled = |events: &[EventRecord]| {
        events
            .iter()
            .filter(|e| matches!(e.event, Event::FundingSettled { .. }))
            .count()
    };
    let later = T0 + 70 * 365 * 86_400 * 1_000_000_000;
    run(&mut engine, &mut events, later, &Command::AdvanceTime).expect("jump");
    assert_eq!(settled(&events), MAX_SETTLEMENTS_PER_COMMAND as usize);
    // The skipped periods are gone: the next command pays nothing more until the next
    // boundary, and then exactly one period.
    run(&mut engine, &mut events, later + 1, &Command::AdvanceTime).expect("next");
    assert_eq!(settled(&events), 0);
    let next = engine
        .funding_view(InstrumentId(5))
        .expect("perp")
        .next_settlement
        .expect("scheduled");
    assert!(next.0 > later && next.0 - later <= 240 * 60 * 1_000_000_000);
    run(&mut engine, &mut events, next.0, &Command::AdvanceTime).expect("boundary");
    assert_eq!(settled(&events), 1);
    // The last time the engine takes settles in bounded work too.
    run(
        &mut engine,
        &mut events,
        TIME_HORIZON.0,
        &Command::AdvanceTime,
    )
    .expect("horizon");
    assert_eq!(settled(&events), MAX_SETTLEMENTS_PER_COMMAND as usize);
    consistent(&engine);
}

/// The demo configuration, book only, with an instrument priced 1..=`max_price`.
fn with_range(max_price: &str) -> matchbook::EngineConfig {
    let mut config = matchbook::demo::config();
    config.enforce_balances = false;
    config.instruments.push(matchbook::InstrumentSpec {
        code: "WIDE_EUR".into(),
        base: "BTC".into(),
        quote: "EUR".into(),
        amount_precision: 0,
        market_precision: 0,
        min_size: "1".into(),
        min_price: "1".into(),
        max_price: max_price.into(),
        kind: matchbook::InstrumentKind::Spot,
        state: matchbook::InstrumentState::Active,
        futures: None,
    });
    config
}

/// A price range reaching past `MAX_PRICE` is refused with the configuration. It was
/// taken up to `i64::MAX`, where an ask at `i64::MAX` was the ladder's "no level" key (a
/// bid at that price then rested against it, a crossed book), a bid there overflowed the
/// window arithmetic (a panic with overflow checks, as the tests and fuzzers build) and
/// an ask near it left a window a restored book refused.
#[test]
fn a_price_range_past_the_largest_price_is_refused() {
    for max_price in [i64::MAX.to_string(), (MAX_PRICE + 1).to_string()] {
        assert!(
            matches!(
                Engine::new(with_range(&max_price)),
                Err(matchbook::ConfigError::BadRange(code)) if code == "WIDE_EUR"
            ),
            "max price {max_price}"
        );
    }
}

/// At the top of the widest range allowed, both sides rest, trade and survive a
/// snapshot.
#[test]
fn prices_at_the_top_of_the_range_rest_trade_and_are_restored() {
    let mut engine = Engine::new(with_range(&MAX_PRICE.to_string())).expect("config");
    let wide = engine.instrument_by_code("WIDE_EUR").expect("WIDE_EUR");
    let reference = engine.clone();
    let mut events = Vec::new();
    let t = Timestamp(T0);
    engine
        .apply(&Command::CreateHolder, t, &mut events)
        .expect("holder");
    let mut place = |engine: &mut Engine, side: Side, price: i64| {
        let order = NewOrder::limit(AccountId(0), wide, side, Price(price), Qty(1));
        engine
            .apply(&Command::PlaceOrder(order), t, &mut events)
            .expect("placed")
    };
    let top = MAX_PRICE;
    place(&mut engine, Side::Buy, top - 10);
    place(&mut engine, Side::Buy, 1);
    place(&mut engine, Side::Sell, top);
    place(&mut engine, Side::Sell, top - 1);
    let best = |engine: &Engine| engine.best_bid_ask(wide).expect("book");
    assert_eq!(best(&engine), (Some(Price(top - 10)), Some(Price(top - 1))));
    let restored = Engine::restore(&reference, engine.image().expect("image")).expect("restore");
    assert_eq!(restored.state_hash(), engine.state_hash());
    // Bids at the top take both asks, one each, and the third rests.
    place(&mut engine, Side::Buy, top);
    assert_eq!(best(&engine), (Some(Price(top - 10)), Some(Price(top))));
    place(&mut engine, Side::Buy, top);
    place(&mut engine, Side::Buy, top);
    assert_eq!(best(&engine), (Some(Price(top)), None));
    let restored = Engine::restore(&reference, engine.image().expect("image")).expect("restore");
    assert_eq!(restored.state_hash(), engine.state_hash());
}

/// The demo configuration's first future.
fn future(config: &mut matchbook::EngineConfig) -> &mut matchbook::FuturesTerms {
    (config.instruments.iter_mut())
        .find_map(|i| i.futures.as_mut())
        .expect("the demo has a future")
}

/// The demo configuration's first perpetual's funding settings.
fn funding(config: &mut matchbook::EngineConfig) -> &mut matchbook::FundingSettings {
    (config.instruments.iter_mut())
        .find_map(|i| i.futures.as_mut()?.funding.as_mut())
        .expect("the demo has a perpetual")
}

/// Sets the demo's dated future's expiry.
fn expiry(config: &mut matchbook::EngineConfig, date: &str) {
    let dated = (config.instruments.iter_mut())
        .find_map(|i| {
            i.futures
                .as_mut()
                .filter(|f| f.contract_expiry_date.is_some())
        })
        .expect("the demo has a dated future");
    dated.contract_expiry_date = Some(date.to_owned());
}

/// Settings the types allow and the engine cannot work with are refused with the
/// configuration, naming the setting: a negative price collar or funding bound (each
/// inverted a clamp: the first mark price after an index was set panicked), a collateral
/// share outside 0 to 100, an instrument trading a currency against itself, and a
/// precision past the 18 decimals a balance holds (refused before, as "too many entries"),
/// and an expiry that is no date of the engine's time (2027-02-30 was taken as 2027-03-02;
/// a year of 13 digits overflowed the time arithmetic).
#[test]
fn settings_outside_what_the_engine_works_with_are_refused_by_name() {
    use rust_decimal::Decimal;
    type Change = Box<dyn Fn(&mut matchbook::EngineConfig)>;
    let cases: Vec<(&str, Change)> = vec![
        (
            "price_collar_percentage",
            Box::new(|c| future(c).price_collar_percentage = Decimal::NEGATIVE_ONE),
        ),
        (
            "price_collar_percentage",
            Box::new(|c| future(c).price_collar_percentage = Decimal::from(101)),
        ),
        (
            "funding cap",
            Box::new(|c| funding(c).cap = Decimal::new(-75, 2)),
        ),
        (
            "funding clamp threshold",
            Box::new(|c| funding(c).clamp_threshold = Decimal::new(-5, 2)),
        ),
        (
            "collateral_percentage",
            Box::new(|c| c.currencies[0].collateral_percentage = Decimal::from(-5)),
        ),
        (
            "collateral_percentage",
            Box::new(|c| c.currencies[0].collateral_percentage = Decimal::from(500)),
        ),
        (
            "quote",
            Box::new(|c| c.instruments[0].quote = c.instruments[0].base.clone()),
        ),
        ("precision", Box::new(|c| c.currencies[0].precision = 19)),
        (
            "contract_expiry_date",
            Box::new(|c| expiry(c, "2027-02-30")),
        ),
        (
            "contract_expiry_date",
            Box::new(|c| expiry(c, "2027-13-01")),
        ),
        (
            "contract_expiry_date",
            Box::new(|c| expiry(c, "2100-01-01")),
        ),
        (
            "contract_expiry_date",
            Box::new(|c| expiry(c, "9000000000000-01-01")),
        ),
        (
            "contract_expiry_date",
            Box::new(|c| expiry(c, "2027-03-26-01")),
        ),
    ];
    for (field, change) in cases {
        let mut config = matchbook::demo::config();
        change(&mut config);
        match Engine::new(config) {
            Err(matchbook::ConfigError::OutOfRange { field: named, .. }) => {
                assert_eq!(named, field);
            }
            other => panic!("{field}: {:?}", other.map(|_| "accepted")),
        }
    }
    // The ends of each range are taken.
    let mut config = matchbook::demo::config();
    future(&mut config).price_collar_percentage = Decimal::ONE_HUNDRED;
    funding(&mut config).cap = Decimal::ZERO;
    config.currencies[0].collateral_percentage = Decimal::ONE_HUNDRED;
    config.currencies[1].collateral_percentage = Decimal::ZERO;
    config.currencies[0].precision = 18;
    expiry(&mut config, "2099-12-31");
    assert!(Engine::new(config).is_ok());
}
