//! Held trigger orders, one test per rule: stop-market, take-profit limit and market,
//! trailing stops (price and basis-point trails, market and limit), their directions, the
//! ratchet that never loosens, checks and reservations at trigger time, mark-price triggers
//! on a future, refusals that leave the state as it was, and images that keep them.

#![warn(clippy::too_many_lines)]

mod common;

use common::{p, q};
use matchbook::{
    AccountId, CancelReason, Command, Engine, EngineError, Event, EventRecord, InstrumentId,
    NewOrder, OrderRef, OrderType, Price, Qty, Side, TimeInForce, Timestamp, Trail, TriggerRef,
};

const T0: i64 = 1_700_000_000_000_000_000;

struct Bench {
    engine: Engine,
    events: Vec<EventRecord>,
    inst: InstrumentId,
    maker: AccountId,
    taker: AccountId,
    owner: AccountId,
}

impl Bench {
    /// Three funded accounts on BTC_EUR: a maker, a taker that moves the last price, and
    /// the owner of the trigger orders (funded with `owner_eur` EUR and 10 BTC).
    fn new(owner_eur: i64) -> Self {
        let mut engine = Engine::new(matchbook::demo::config()).expect("demo config");
        let mut events = Vec::new();
        let mut accounts = Vec::new();
        for eur in [1_000_000_000, 1_000_000_000, owner_eur] {
            let a = engine
                .apply(&Command::CreateHolder, Timestamp(T0), &mut events)
                .expect("holder")
                .account
                .expect("main");
            for (code, amount) in [("EUR", eur), ("BTC", 100)] {
                let currency = engine.currency_by_code(code).expect("demo currency");
                let deposit = Command::Deposit {
                    account: a,
                    currency,
                    amount: amount * 100_000_000,
                };
                engine
                    .apply(&deposit, Timestamp(T0), &mut events)
                    .expect("deposit");
            }
            accounts.push(a);
        }
        let inst = engine.instrument_by_code("BTC_EUR").expect("demo market");
        Self {
            engine,
            events,
            inst,
            maker: accounts[0],
            taker: accounts[1],
            owner: accounts[2],
        }
    }

    fn run(&mut self, command: Command) -> Result<matchbook::Applied, EngineError> {
        common::run(&mut self.engine, &mut self.events, T0, &command)
    }

    /// A trade of 1 BTC at `price`: the maker rests it, the taker takes it (triggers it
    /// reaches may trade further).
    fn trade_at(&mut self, price: &str) {
        for (account, side) in [(self.maker, Side::Sell), (self.taker, Side::Buy)] {
            let o = NewOrder::limit(account, self.inst, side, p(price), q("1"));
            self.run(Command::PlaceOrder(o)).expect("trade leg");
        }
        let traded = self.events.iter().any(
            |r| matches!(r.event, Event::Trade(t) if t.price == p(price) && t.amount == q("1")),
        );
        assert!(traded, "a trade at {price}");
    }

    fn trigger_order(&self, kind: OrderType, side: Side, trigger: Option<&str>) -> NewOrder {
        let mut o = NewOrder::limit(self.owner, self.inst, side, p("1"), q("0.2"));
        o.order_type = kind;
        o.price = None;
        o.trigger_price = trigger.map(p);
        o
    }

    fn place(&mut self, o: NewOrder) -> OrderRef {
        self.run(Command::PlaceOrder(o))
            .expect("accepted")
            .order
            .expect("order")
    }

    fn fired(&self, order: OrderRef) -> Option<(Price, Option<Price>)> {
        self.events.iter().find_map(|r| match r.event {
            Event::StopTriggered {
                order: o,
                trigger_price,
                price,
                ..
            } if o == order => Some((trigger_price, price)),
            _ => None,
        })
    }

    fn moved(&self, order: OrderRef) -> Option<Price> {
        self.events.iter().find_map(|r| match r.event {
            Event::TriggerMoved {
                order: o,
                trigger_price,
                ..
            } if o == order => Some(trigger_price),
            _ => None,
        })
    }

    fn ended(&self, order: OrderRef) -> Option<CancelReason> {
        self.events.iter().find_map(|r| match r.event {
            Event::OrderCancelled {
                order: o, reason, ..
            } if o == order => Some(reason),
            _ => None,
        })
    }

    fn trigger_of(&self, order: OrderRef) -> Option<Price> {
        self.engine.order(order).and_then(|o| o.trigger_price())
    }
}

#[test]
fn stop_market_fires_rising_and_takes_what_the_book_offers() {
    let mut b = Bench::new(1_000_000);
    b.trade_at("100.00");
    for price in ["101.00", "102.00"] {
        let ask = NewOrder::limit(b.maker, b.inst, Side::Sell, p(price), q("0.1"));
        b.place(ask);
    }
    let stop = b.trigger_order(OrderType::StopMarket, Side::Buy, Some("100.50"));
    let stop = b.place(stop);
    assert!(b.fired(stop).is_none(), "100.00 is below the trigger");
    b.trade_at("100.50");
    assert_eq!(
        b.fired(stop),
        Some((p("100.50"), None)),
        "a market order has no limit"
    );
    let fills: Vec<(Price, Qty)> = (b.events.iter())
        .filter_map(|r| match r.event {
            Event::Trade(t) if t.taker == stop => Some((t.price, t.amount)),
            _ => None,
        })
        .collect();
    assert_eq!(
        fills,
        vec![(p("101.00"), q("0.1")), (p("102.00"), q("0.1"))]
    );
    assert!(b.engine.order(stop).is_none(), "filled and gone");
}

#[test]
fn take_profits_fire_in_the_opposite_direction_to_stops() {
    let mut b = Bench::new(1_000_000);
    b.trade_at("100.00");
    let mut sell_tp = b.trigger_order(OrderType::TakeProfit, Side::Sell, Some("105.00"));
    sell_tp.price = Some(p("104.00"));
    let sell_tp = b.place(sell_tp);
    let buy_tp = b.trigger_order(OrderType::TakeProfitMarket, Side::Buy, Some("95.00"));
    let buy_tp = b.place(buy_tp);
    b.trade_at("96.00");
    assert!(b.fired(buy_tp).is_none() && b.fired(sell_tp).is_none());
    b.trade_at("105.00");
    assert_eq!(b.fired(sell_tp), Some((p("105.00"), Some(p("104.00")))));
    assert!(
        b.engine.order(buy_tp).is_some(),
        "a buy take-profit waits for a fall"
    );
    b.trade_at("95.00");
    assert_eq!(b.fired(buy_tp), Some((p("95.00"), None)));
}

#[test]
fn a_trailing_stop_follows_the_high_and_never_loosens() {
    let mut b = Bench::new(1_000_000);
    b.trade_at("100.00");
    let mut o = b.trigger_order(OrderType::TrailingStop, Side::Sell, None);
    o.trail = Some(Trail::Price(p("5.00")));
    let stop = b.place(o);
    assert_eq!(
        b.trigger_of(stop),
        Some(p("95.00")),
        "the last price less the trail"
    );
    b.trade_at("108.00");
    assert_eq!(b.moved(stop), Some(p("103.00")));
    b.trade_at("104.00");
    assert_eq!(b.moved(stop), None, "a fall never loosens it");
    assert_eq!(b.trigger_of(stop), Some(p("103.00")));
    b.trade_at("103.00");
    assert_eq!(b.fired(stop), Some((p("103.00"), None)));
}

#[test]
fn a_basis_point_trail_rounds_away_from_the_price() {
    // 1 % of 100.01 is 1.0001: the distance rounds up to 1.01 for either side.
    assert_eq!(Trail::Bps(100).trigger(Side::Sell, p("100.01")), p("99.00"));
    assert_eq!(Trail::Bps(100).trigger(Side::Buy, p("100.01")), p("101.02"));
    let mut b = Bench::new(1_000_000);
    b.trade_at("100.00");
    let mut o = b.trigger_order(OrderType::TrailingStop, Side::Buy, None);
    o.trail = Some(Trail::Bps(250));
    let stop = b.place(o);
    assert_eq!(b.trigger_of(stop), Some(p("102.50")));
    b.trade_at("90.00");
    assert_eq!(b.moved(stop), Some(p("92.25")), "a buy follows the low");
}

#[test]
fn a_trailing_stop_limit_enters_at_its_offset_past_the_trigger() {
    let mut b = Bench::new(1_000_000);
    b.trade_at("100.00");
    let mut o = b.trigger_order(OrderType::TrailingStopLimit, Side::Sell, None);
    o.trail = Some(Trail::Price(p("2.00")));
    o.limit_offset = Some(p("0.50"));
    let stop = b.place(o);
    b.trade_at("98.00");
    assert_eq!(b.fired(stop), Some((p("98.00"), Some(p("97.50")))));
    let rests = b.engine.order(stop).expect("no bid at 97.50: it rests");
    assert_eq!(rests.price(), Some(p("97.50")));
    assert_eq!(rests.order_type(), OrderType::TrailingStopLimit);
}

#[test]
fn funds_are_reserved_when_a_market_type_order_fires_and_a_shortfall_ends_it() {
    let mut b = Bench::new(5);
    b.trade_at("100.00");
    let eur = b.engine.currency_by_code("EUR").expect("EUR");
    let before = b.engine.account(b.owner).expect("owner").balances.get(eur);
    let stop = b.trigger_order(OrderType::StopMarket, Side::Buy, Some("100.50"));
    let stop = b.place(stop);
    let held = b.engine.account(b.owner).expect("owner").balances.get(eur);
    assert_eq!(held, before, "nothing is reserved while it is held");
    let ask = NewOrder::limit(b.maker, b.inst, Side::Sell, p("101.00"), q("1"));
    b.place(ask);
    b.trade_at("100.50");
    assert_eq!(
        b.ended(stop),
        Some(CancelReason::TriggerRefused(EngineError::InsufficientFunds)),
        "0.2 BTC at 101 is 20.20 EUR; the owner has 5"
    );
    let after = b.engine.account(b.owner).expect("owner").balances.get(eur);
    assert_eq!(
        (after.available, after.locked),
        (before.available, before.locked)
    );
    let holder = b.engine.holder_of(b.owner).expect("holder");
    assert_eq!(b.engine.open_order_count(holder), Ok(0));
}

#[test]
fn a_fired_order_meets_the_checks_of_a_new_order() {
    let mut b = Bench::new(1_000_000);
    b.trade_at("100.00");
    // 0.11 BTC is 10.89 EUR at the trigger, above the 10 EUR minimum; at the 40 EUR bid it
    // would be 4.40.
    let mut stop = b.trigger_order(OrderType::StopMarket, Side::Sell, Some("99.00"));
    stop.amount = q("0.11");
    let stop = b.place(stop);
    let bid = NewOrder::limit(b.maker, b.inst, Side::Buy, p("40.00"), q("1"));
    b.place(bid);
    b.trade_at("99.00");
    assert_eq!(
        b.ended(stop),
        Some(CancelReason::TriggerRefused(
            EngineError::MinSizeNotSatisfied
        ))
    );
}

/// Trigger orders each refused for one reason: variants of the trailing stop `trailing`
/// (trails, offsets, prices), then of other types (trigger references, times in force,
/// sizes).
fn malformed_trigger_orders(b: &Bench, trailing: NewOrder) -> Vec<(NewOrder, EngineError)> {
    let mut cases = malformed_trails(trailing);
    cases.extend(malformed_triggers(b));
    cases
}

fn malformed_trails(trailing: NewOrder) -> Vec<(NewOrder, EngineError)> {
    vec![
        (
            NewOrder {
                trail: None,
                ..trailing
            },
            EngineError::InvalidTrail,
        ),
        (
            NewOrder {
                trail: Some(Trail::Bps(0)),
                ..trailing
            },
            EngineError::InvalidTrail,
        ),
        (
            NewOrder {
                trail: Some(Trail::Bps(10_000)),
                ..trailing
            },
            EngineError::InvalidTrail,
        ),
        (
            NewOrder {
                trail: Some(Trail::Price(Price(0))),
                ..trailing
            },
            EngineError::InvalidTrail,
        ),
        (
            NewOrder {
                limit_offset: Some(p("1.00")),
                ..trailing
            },
            EngineError::InvalidTrail,
        ),
        (
            NewOrder {
                price: Some(p("99.00")),
                ..trailing
            },
            EngineError::InvalidPrice,
        ),
        (
            NewOrder {
                trigger_price: Some(p("99.00")),
                ..trailing
            },
            EngineError::InvalidTriggerPrice,
        ),
        (
            NewOrder {
                order_type: OrderType::TrailingStopLimit,
                ..trailing
            },
            EngineError::InvalidTrail,
        ),
    ]
}

fn malformed_triggers(b: &Bench) -> Vec<(NewOrder, EngineError)> {
    vec![
        (
            NewOrder {
                trail: Some(Trail::Price(p("1.00"))),
                ..NewOrder::limit(b.owner, b.inst, Side::Buy, p("99.00"), q("0.2"))
            },
            EngineError::InvalidTrail,
        ),
        (
            NewOrder {
                trigger_ref: TriggerRef::MarkPrice,
                ..b.trigger_order(OrderType::StopMarket, Side::Buy, Some("101.00"))
            },
            EngineError::InvalidTriggerReference,
        ),
        (
            b.trigger_order(OrderType::TakeProfit, Side::Buy, Some("99.00")),
            EngineError::MissingPrice,
        ),
        (
            b.trigger_order(OrderType::StopMarket, Side::Buy, None),
            EngineError::InvalidTriggerPrice,
        ),
        (
            b.trigger_order(OrderType::StopMarket, Side::Buy, Some("101.00"))
                .with_tif(TimeInForce::PostOnly),
            EngineError::InvalidTimeInForce,
        ),
        (
            NewOrder {
                amount: q("0.0001"),
                ..b.trigger_order(OrderType::StopMarket, Side::Buy, Some("101.00"))
            },
            EngineError::MinSizeNotSatisfied,
        ),
    ]
}

#[test]
fn malformed_trigger_orders_are_refused_and_change_nothing() {
    let mut b = Bench::new(1_000_000);
    let mut trailing = b.trigger_order(OrderType::TrailingStop, Side::Sell, None);
    trailing.trail = Some(Trail::Price(p("5.00")));
    common::refuse(
        &mut b.engine,
        &mut b.events,
        T0,
        Command::PlaceOrder(trailing),
        EngineError::NoReferencePrice,
    );
    b.trade_at("100.00");
    for (order, error) in malformed_trigger_orders(&b, trailing) {
        common::refuse(
            &mut b.engine,
            &mut b.events,
            T0,
            Command::PlaceOrder(order),
            error,
        );
    }
    // A held market-type order has no limit to amend.
    let stop = b.place(b.trigger_order(OrderType::StopMarket, Side::Buy, Some("101.00")));
    let amend = Command::AmendOrder {
        account: b.owner,
        order: stop,
        amount: None,
        price: Some(p("102.00")),
    };
    common::refuse(
        &mut b.engine,
        &mut b.events,
        T0,
        amend,
        EngineError::InvalidPrice,
    );
}

#[test]
fn an_image_keeps_trailing_terms_and_the_restored_engine_goes_on_the_same() {
    let mut b = Bench::new(1_000_000);
    b.trade_at("100.00");
    let mut o = b.trigger_order(OrderType::TrailingStopLimit, Side::Sell, None);
    o.trail = Some(Trail::Bps(300));
    o.limit_offset = Some(p("0.10"));
    b.place(o);
    b.trade_at("110.00");
    let reference = Engine::new(matchbook::demo::config()).expect("demo config");
    let mut restored =
        Engine::restore(&reference, b.engine.image().expect("image")).expect("restore");
    assert_eq!(restored.state_hash(), b.engine.state_hash());
    for price in ["115.00", "111.00"] {
        for (account, side) in [(b.maker, Side::Sell), (b.taker, Side::Buy)] {
            let o = Command::PlaceOrder(NewOrder::limit(account, b.inst, side, p(price), q("1")));
            let mut theirs = Vec::new();
            let _ = restored.apply(&o, Timestamp(T0), &mut theirs);
            b.run(o).expect("leg");
            assert_eq!(theirs, b.events);
        }
    }
    assert!(
        b.events
            .iter()
            .any(|r| matches!(r.event, Event::StopTriggered { .. }))
    );
    assert_eq!(restored.state_hash(), b.engine.state_hash());
}

#[test]
fn a_mark_price_trigger_fires_when_the_index_moves_the_mark() {
    const PERP: InstrumentId = InstrumentId(5);
    let mut engine = Engine::new(matchbook::demo::config()).expect("demo config");
    let mut events = Vec::new();
    let mut run = |engine: &mut Engine, command: Command| {
        common::run(engine, &mut events, T0, &command).map(|applied| (applied, events.clone()))
    };
    let (created, _) = run(&mut engine, Command::CreateHolder).expect("holder");
    let trader = created.account.expect("main");
    let usd = engine.currency_by_code("USD").expect("USD");
    let deposit = Command::Deposit {
        account: trader,
        currency: usd,
        amount: 100_000 * 100_000_000,
    };
    run(&mut engine, deposit).expect("deposit");
    let index = |price: i64| Command::SetIndexPrice {
        instrument: PERP,
        price: Price(price * 10),
    };
    run(&mut engine, index(60_000)).expect("index");
    let mut stop = NewOrder::limit(trader, PERP, Side::Sell, Price(0), Qty(100));
    stop.order_type = OrderType::StopMarket;
    stop.price = None;
    stop.trigger_price = Some(Price(59_000 * 10));
    stop.trigger_ref = TriggerRef::MarkPrice;
    let (placed, events) = run(&mut engine, Command::PlaceOrder(stop)).expect("accepted");
    let stop = placed.order.expect("order");
    assert!(events.iter().any(|r| matches!(r.event,
        Event::OrderTerms { order, reference: TriggerRef::MarkPrice, .. } if order == stop)));
    let (_, events) = run(&mut engine, index(59_500)).expect("index");
    assert!(
        !events
            .iter()
            .any(|r| matches!(r.event, Event::StopTriggered { .. }))
    );
    let (_, events) = run(&mut engine, index(58_900)).expect("index");
    let fired = events.iter().find_map(|r| match r.event {
        Event::StopTriggered {
            order,
            trigger_price,
            ..
        } if order == stop => Some(trigger_price),
        _ => None,
    });
    assert_eq!(
        fired,
        Some(Price(59_000 * 10)),
        "the mark (the index, no book) reached it"
    );
    assert!(engine.order(stop).is_none(), "no bids: it ended unfilled");
}

#[test]
fn a_trailing_stop_limit_whose_limit_comes_to_zero_is_refused_not_sent_to_market() {
    let mut b = Bench::new(1_000_000);
    b.trade_at("100.00");
    let mut o = b.trigger_order(OrderType::TrailingStopLimit, Side::Sell, None);
    o.trail = Some(Trail::Price(p("5.00")));
    o.limit_offset = Some(p("95.00"));
    let stop = b.place(o);
    let bid = NewOrder::limit(b.maker, b.inst, Side::Buy, p("90.00"), q("1"));
    let bid = b.place(bid);
    b.trade_at("95.00");
    assert_eq!(
        b.fired(stop),
        Some((p("95.00"), None)),
        "its limit, 95.00 - 95.00, is zero"
    );
    assert_eq!(
        b.ended(stop),
        Some(CancelReason::TriggerRefused(EngineError::InvalidPrice))
    );
    assert_eq!(
        b.engine.order(bid).map(|o| o.filled()),
        Some(Qty(0)),
        "nothing sold at market"
    );
}
