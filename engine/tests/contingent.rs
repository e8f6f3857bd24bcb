//! One-cancels-the-other pairs and brackets: a leg's first fill or trigger cancels the
//! other, so does the end of a leg; legs must share account, instrument and side and wait
//! on the book; a bracket places its exits, sized to what its entry filled, once the entry
//! is done (not when its owner cancels it); exits fire and cancel each other; images keep
//! the links.

#![warn(clippy::too_many_lines)]

mod common;

use common::{p, q};
use matchbook::{
    AccountId, BracketExits, CancelReason, Command, Engine, EngineError, Event, EventRecord,
    InstrumentId, NewOrder, OrderRef, OrderType, Side, TimeInForce, Timestamp,
};

const T0: i64 = 1_700_000_000_000_000_000;

struct Bench {
    engine: Engine,
    events: Vec<EventRecord>,
    inst: InstrumentId,
    owner: AccountId,
    other: AccountId,
}

impl Bench {
    fn new() -> Self {
        let mut engine = Engine::new(matchbook::demo::config()).expect("demo config");
        let mut events = Vec::new();
        let mut accounts = Vec::new();
        for _ in 0..2 {
            let account = (engine.apply(&Command::CreateHolder, Timestamp(T0), &mut events))
                .expect("holder")
                .account
                .expect("main");
            for code in ["EUR", "BTC"] {
                let currency = engine.currency_by_code(code).expect("currency");
                let deposit = Command::Deposit {
                    account,
                    currency,
                    amount: 1 << 50,
                };
                engine
                    .apply(&deposit, Timestamp(T0), &mut events)
                    .expect("deposit");
            }
            accounts.push(account);
        }
        let inst = engine.instrument_by_code("BTC_EUR").expect("demo market");
        Self {
            engine,
            events,
            inst,
            owner: accounts[0],
            other: accounts[1],
        }
    }

    fn run(&mut self, command: Command) -> Result<matchbook::Applied, EngineError> {
        common::run(&mut self.engine, &mut self.events, T0, &command)
    }

    fn limit(&self, account: AccountId, side: Side, price: &str, amount: &str) -> NewOrder {
        NewOrder::limit(account, self.inst, side, p(price), q(amount))
    }

    fn stop(&self, side: Side, trigger: &str, amount: &str) -> NewOrder {
        NewOrder {
            order_type: OrderType::StopMarket,
            price: None,
            trigger_price: Some(p(trigger)),
            ..self.limit(self.owner, side, "1", amount)
        }
    }

    fn trade_at(&mut self, price: &str) {
        let (maker, taker) = (self.other, self.other);
        let ask = self.limit(maker, Side::Sell, price, "0.5");
        self.run(Command::PlaceOrder(ask)).expect("maker");
        let bid = self.limit(taker, Side::Buy, price, "0.5");
        self.run(Command::PlaceOrder(bid)).expect("taker");
    }

    fn ended(&self, order: OrderRef) -> Option<CancelReason> {
        self.events.iter().find_map(|r| match r.event {
            Event::OrderCancelled {
                order: o, reason, ..
            } if o == order => Some(reason),
            _ => None,
        })
    }

    fn oco(&mut self) -> (OrderRef, OrderRef) {
        let first = self.limit(self.owner, Side::Sell, "105.00", "1");
        let second = self.stop(Side::Sell, "95.00", "1");
        let second = Box::new(second);
        let applied = self.run(Command::PlaceOco { first, second }).expect("pair");
        (
            applied.order.expect("first"),
            applied.linked.expect("second"),
        )
    }
}

#[test]
fn the_first_fill_of_a_leg_cancels_the_other() {
    let mut b = Bench::new();
    let (limit, stop) = b.oco();
    assert!(b.events.iter().any(|r| matches!(r.event,
        Event::OrdersLinked { first, second, parent: None, .. } if first == limit && second == stop)));
    let bid = b.limit(b.other, Side::Buy, "105.00", "0.3");
    b.run(Command::PlaceOrder(bid)).expect("taker");
    assert_eq!(b.ended(stop), Some(CancelReason::ContingentCancelled));
    let rest = b.engine.order(limit).expect("the filled leg works on");
    assert_eq!(rest.remaining(), q("0.7"));
}

#[test]
fn a_leg_that_fires_cancels_the_other_before_it_trades() {
    let mut b = Bench::new();
    let (limit, stop) = b.oco();
    let bid = b.limit(b.other, Side::Buy, "90.00", "2");
    b.run(Command::PlaceOrder(bid)).expect("bid");
    b.trade_at("95.00");
    let cancelled = b.events.iter().position(|r| matches!(r.event,
        Event::OrderCancelled { order, reason: CancelReason::ContingentCancelled, .. } if order == limit));
    let traded = b
        .events
        .iter()
        .position(|r| matches!(r.event, Event::Trade(t) if t.taker == stop));
    assert!(cancelled.is_some() && cancelled < traded, "{:?}", b.events);
}

#[test]
fn cancelling_one_leg_cancels_both() {
    let mut b = Bench::new();
    let (limit, stop) = b.oco();
    b.run(Command::CancelOrder {
        account: b.owner,
        order: stop,
    })
    .expect("cancel");
    assert_eq!(b.ended(limit), Some(CancelReason::ContingentCancelled));
    let holder = b.engine.holder_of(b.owner).expect("holder");
    assert_eq!(b.engine.open_order_count(holder), Ok(0));
}

#[test]
fn a_pair_the_rules_forbid_is_refused_and_changes_nothing() {
    let mut b = Bench::new();
    let ask = b.limit(b.other, Side::Sell, "100.00", "1");
    b.run(Command::PlaceOrder(ask)).expect("ask");
    let limit = b.limit(b.owner, Side::Sell, "105.00", "1");
    let cases = [
        (
            limit,
            b.stop(Side::Buy, "95.00", "1"),
            EngineError::InvalidContingent,
        ),
        (
            limit,
            NewOrder {
                order_type: OrderType::Market,
                price: None,
                ..limit
            },
            EngineError::InvalidContingent,
        ),
        (
            limit,
            limit.with_tif(TimeInForce::ImmediateOrCancelled),
            EngineError::InvalidContingent,
        ),
        (
            b.limit(b.owner, Side::Buy, "101.00", "1"),
            b.stop(Side::Buy, "110.00", "1"),
            EngineError::PostOnlyWouldTake,
        ),
    ];
    for (first, second, error) in cases {
        common::refuse(
            &mut b.engine,
            &mut b.events,
            T0,
            Command::PlaceOco {
                first,
                second: Box::new(second),
            },
            error,
        );
    }
    let exits = BracketExits {
        take_profit: p("90.00"),
        stop_loss: p("95.00"),
        stop_limit: None,
    };
    let entry = b.limit(b.owner, Side::Buy, "99.00", "1");
    common::refuse(
        &mut b.engine,
        &mut b.events,
        T0,
        Command::PlaceBracket { entry, exits },
        EngineError::InvalidContingent,
    );
}

#[test]
fn a_bracket_places_its_exits_for_what_its_entry_filled() {
    let mut b = Bench::new();
    let ask = b.limit(b.other, Side::Sell, "100.00", "0.6");
    b.run(Command::PlaceOrder(ask)).expect("ask");
    let exits = BracketExits {
        take_profit: p("110.00"),
        stop_loss: p("95.00"),
        stop_limit: None,
    };
    let entry = b
        .limit(b.owner, Side::Buy, "100.00", "1")
        .with_tif(TimeInForce::ImmediateOrCancelled);
    let entry = b
        .run(Command::PlaceBracket { entry, exits })
        .expect("bracket")
        .order
        .expect("entry");
    let linked = b.events.iter().find_map(|r| match r.event {
        Event::OrdersLinked {
            first,
            second,
            parent: Some(parent),
            ..
        } if parent == entry => Some((first, second)),
        _ => None,
    });
    let (tp, sl) = linked.expect("the exits were placed and linked");
    let (tp_order, sl_order) = (
        b.engine.order(tp).expect("tp"),
        b.engine.order(sl).expect("sl"),
    );
    assert_eq!(
        (tp_order.side(), tp_order.amount(), tp_order.price()),
        (Side::Sell, q("0.6"), Some(p("110.00")))
    );
    assert_eq!(
        (
            sl_order.order_type(),
            sl_order.amount(),
            sl_order.trigger_price()
        ),
        (OrderType::StopMarket, q("0.6"), Some(p("95.00")))
    );
    b.trade_at("95.00");
    assert_eq!(
        b.ended(tp),
        Some(CancelReason::ContingentCancelled),
        "the stop-loss fired"
    );
}

#[test]
fn an_entry_its_owner_cancels_places_no_exits() {
    let mut b = Bench::new();
    let ask = b.limit(b.other, Side::Sell, "100.00", "0.4");
    b.run(Command::PlaceOrder(ask)).expect("ask");
    let exits = BracketExits {
        take_profit: p("110.00"),
        stop_loss: p("95.00"),
        stop_limit: Some(p("94.00")),
    };
    let entry = b.limit(b.owner, Side::Buy, "100.00", "1");
    let entry = b
        .run(Command::PlaceBracket { entry, exits })
        .expect("bracket")
        .order
        .expect("entry");
    assert!(
        b.engine.order(entry).is_some(),
        "0.4 filled, 0.6 rests: not done yet"
    );
    b.run(Command::CancelOrder {
        account: b.owner,
        order: entry,
    })
    .expect("cancel");
    assert!(
        !b.events
            .iter()
            .any(|r| matches!(r.event, Event::OrdersLinked { .. }))
    );
    let holder = b.engine.holder_of(b.owner).expect("holder");
    assert_eq!(b.engine.open_order_count(holder), Ok(0));
}

#[test]
fn an_image_keeps_the_links() {
    let mut b = Bench::new();
    let (limit, _) = b.oco();
    let exits = BracketExits {
        take_profit: p("120.00"),
        stop_loss: p("90.00"),
        stop_limit: None,
    };
    let entry = b.limit(b.owner, Side::Buy, "99.00", "1");
    b.run(Command::PlaceBracket { entry, exits })
        .expect("bracket");
    let reference = Engine::new(matchbook::demo::config()).expect("demo config");
    let mut restored =
        Engine::restore(&reference, b.engine.image().expect("image")).expect("restore");
    assert_eq!(restored.state_hash(), b.engine.state_hash());
    for command in [
        Command::PlaceOrder(b.limit(b.other, Side::Buy, "105.00", "0.1")),
        Command::PlaceOrder(b.limit(b.other, Side::Sell, "99.00", "1")),
    ] {
        let mut theirs = Vec::new();
        let _ = restored.apply(&command, Timestamp(T0), &mut theirs);
        b.run(command).expect("command");
        assert_eq!(theirs, b.events);
    }
    assert!(b.engine.order(limit).is_some());
    assert!(b.events.iter().any(|r| matches!(
        r.event,
        Event::OrdersLinked {
            parent: Some(_),
            ..
        }
    )));
    assert_eq!(restored.state_hash(), b.engine.state_hash());
}

/// A holder whose only base is what its bracket entry bought: the take-profit reserves it
/// all, and the stop-loss, which reserves only when it fires, must still be placed (it was
/// checked against what the take-profit had just taken and refused for want of funds).
#[test]
fn a_stop_limit_exit_is_placed_when_the_take_profit_holds_all_the_base() {
    let mut b = Bench::new();
    let buyer = (b.run(Command::CreateHolder))
        .expect("holder")
        .account
        .expect("main");
    let eur = b.engine.currency_by_code("EUR").expect("EUR");
    let deposit = Command::Deposit {
        account: buyer,
        currency: eur,
        amount: 1 << 50,
    };
    b.run(deposit).expect("deposit");
    let ask = b.limit(b.other, Side::Sell, "100.00", "0.6");
    b.run(Command::PlaceOrder(ask)).expect("ask");
    let exits = BracketExits {
        take_profit: p("110.00"),
        stop_loss: p("95.00"),
        stop_limit: Some(p("94.00")),
    };
    let entry =
        (b.limit(buyer, Side::Buy, "100.00", "0.6")).with_tif(TimeInForce::ImmediateOrCancelled);
    b.run(Command::PlaceBracket { entry, exits })
        .expect("bracket");
    let refused = b.events.iter().find_map(|r| match r.event {
        Event::OrderCancelled { reason, .. } => Some(reason),
        _ => None,
    });
    assert_eq!(refused, None, "no exit refused");
    let stop_loss = (b.engine.open_orders(buyer).into_iter())
        .find(|o| o.order_type() == OrderType::Stop)
        .map(|o| (o.trigger_price(), o.price()));
    assert_eq!(stop_loss, Some((Some(p("95.00")), Some(p("94.00")))));
    b.trade_at("95.00");
    let sold = b.events.iter().any(|r| match r.event {
        Event::StopTriggered { trigger_price, .. } => trigger_price == p("95.00"),
        _ => false,
    });
    assert!(sold, "the stop-loss fired once the price fell to it");
}
