//! Iceberg limit orders: the book and its views show only the displayed part; when a taker
//! uses it up, the next part is shown at the back of its price (behind orders that were
//! there), and the taker may go on to fill it there; fill-or-kill counts hidden amounts;
//! an amend re-queues an iceberg; images keep what is shown and hidden.

#![warn(clippy::too_many_lines)]

mod common;

use common::{p, q};
use matchbook::{
    AccountId, Command, Engine, EngineError, Event, EventRecord, InstrumentId, NewOrder, OrderRef,
    Qty, Side, TimeInForce, Timestamp,
};

const T0: i64 = 1_700_000_000_000_000_000;

struct Bench {
    engine: Engine,
    events: Vec<EventRecord>,
    inst: InstrumentId,
    a: AccountId,
    b: AccountId,
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
            a: accounts[0],
            b: accounts[1],
        }
    }

    fn place(&mut self, o: NewOrder) -> Result<OrderRef, EngineError> {
        common::run(
            &mut self.engine,
            &mut self.events,
            T0,
            &Command::PlaceOrder(o),
        )
        .map(|applied| applied.order.expect("order"))
    }

    fn iceberg(&self, side: Side, price: &str, amount: &str, display: &str) -> NewOrder {
        NewOrder {
            display: Some(q(display)),
            ..NewOrder::limit(self.a, self.inst, side, p(price), q(amount))
        }
    }

    fn asks(&self) -> Vec<(u64, Qty)> {
        let view = self.engine.book_orders(self.inst, 10).expect("book");
        view.asks.iter().map(|o| (o.order.id, o.amount)).collect()
    }

    fn fills(&self) -> Vec<(u64, Qty)> {
        (self.events.iter())
            .filter_map(|r| match r.event {
                Event::Trade(t) => Some((t.maker.id, t.amount)),
                _ => None,
            })
            .collect()
    }
}

#[test]
fn the_book_shows_the_display_and_a_used_up_part_queues_behind_the_level() {
    let mut b = Bench::new();
    let ice = b.iceberg(Side::Sell, "100.00", "1", "0.3");
    let ice = b.place(ice).expect("iceberg");
    let plain = b
        .place(NewOrder::limit(
            b.a,
            b.inst,
            Side::Sell,
            p("100.00"),
            q("0.2"),
        ))
        .expect("plain");
    assert_eq!(b.asks(), vec![(ice.id, q("0.3")), (plain.id, q("0.2"))]);
    let l2 = b.engine.book_levels(b.inst, 1).expect("book");
    assert_eq!(l2.asks[0].amount, q("0.5"), "L2 shows the shown part only");
    let taker = NewOrder::limit(b.b, b.inst, Side::Buy, p("100.00"), q("0.6"));
    b.place(taker).expect("taker");
    assert_eq!(
        b.fills(),
        vec![(ice.id, q("0.3")), (plain.id, q("0.2")), (ice.id, q("0.1"))],
        "the replenished part queued behind the plain order, then filled there"
    );
    let rebooked = b.events.iter().any(|r| {
        matches!(r.event,
        Event::OrderBooked { order, remaining, .. } if order == ice && remaining == q("0.3"))
    });
    assert!(rebooked, "the next part is booked as a new booking");
    assert_eq!(
        b.asks(),
        vec![(ice.id, q("0.2"))],
        "0.4 left, 0.2 of it shown"
    );
}

#[test]
fn fill_or_kill_counts_hidden_amounts() {
    let mut b = Bench::new();
    let ice = b.iceberg(Side::Sell, "100.00", "1", "0.1");
    b.place(ice).expect("iceberg");
    let fok = NewOrder::limit(b.b, b.inst, Side::Buy, p("100.00"), q("0.8"))
        .with_tif(TimeInForce::FillOrKill);
    b.place(fok).expect("fills");
    let filled: i64 = b.fills().iter().map(|f| f.1.0).sum();
    assert_eq!(Qty(filled), q("0.8"), "in eight shown parts of 0.1");
}

/// An iceberg's hidden part queues behind the orders after it at its price: a fill-or-kill
/// taker whose self-trade prevention stops at its own order there reaches only the shown
/// part, so it is refused whole rather than filled in part.
#[test]
fn fill_or_kill_does_not_count_hidden_amounts_behind_its_own_order() {
    let mut b = Bench::new();
    let ice = b.iceberg(Side::Sell, "100.00", "1", "0.2");
    b.place(ice).expect("iceberg");
    let own = NewOrder::limit(b.b, b.inst, Side::Sell, p("100.00"), q("0.5"));
    b.place(own).expect("own ask");
    let fok = NewOrder {
        stp: Some(matchbook::StpMode::CancelNewest),
        ..NewOrder::limit(b.b, b.inst, Side::Buy, p("100.00"), q("0.8"))
            .with_tif(TimeInForce::FillOrKill)
    };
    b.place(fok).expect("accepted, then refused whole");
    assert_eq!(b.fills(), vec![], "{:?}", b.events);
    // No own order in the way: the hidden part counts.
    let fok = NewOrder {
        stp: Some(matchbook::StpMode::None),
        ..NewOrder::limit(b.b, b.inst, Side::Buy, p("100.00"), q("1.3"))
            .with_tif(TimeInForce::FillOrKill)
    };
    b.place(fok).expect("fills");
    let filled: i64 = b.fills().iter().map(|f| f.1.0).sum();
    assert_eq!(Qty(filled), q("1.3"));
}

#[test]
fn a_display_the_order_cannot_have_is_refused() {
    let mut b = Bench::new();
    let cases = [
        b.iceberg(Side::Sell, "100.00", "1", "1"),
        b.iceberg(Side::Sell, "100.00", "1", "0"),
        b.iceberg(Side::Sell, "100.00", "1", "0.1")
            .with_tif(TimeInForce::ImmediateOrCancelled),
        NewOrder {
            order_type: matchbook::OrderType::Market,
            price: None,
            ..b.iceberg(Side::Sell, "100.00", "1", "0.1")
        },
    ];
    for order in cases {
        common::refuse(
            &mut b.engine,
            &mut b.events,
            T0,
            Command::PlaceOrder(order),
            EngineError::InvalidDisplay,
        );
    }
}

#[test]
fn an_amend_requeues_an_iceberg_and_an_image_keeps_it() {
    let mut b = Bench::new();
    let ice = b
        .place(b.iceberg(Side::Sell, "100.00", "1", "0.3"))
        .expect("iceberg");
    let plain = b
        .place(NewOrder::limit(
            b.a,
            b.inst,
            Side::Sell,
            p("100.00"),
            q("0.2"),
        ))
        .expect("plain");
    let amend = Command::AmendOrder {
        account: b.a,
        order: ice,
        amount: Some(q("0.9")),
        price: None,
    };
    common::run(&mut b.engine, &mut b.events, T0, &amend).expect("amend");
    assert_eq!(
        b.asks(),
        vec![(plain.id, q("0.2")), (ice.id, q("0.3"))],
        "behind, as a size-up would be"
    );
    let reference = Engine::new(matchbook::demo::config()).expect("demo config");
    let mut restored =
        Engine::restore(&reference, b.engine.image().expect("image")).expect("restore");
    assert_eq!(restored.state_hash(), b.engine.state_hash());
    let taker = Command::PlaceOrder(NewOrder::limit(
        b.b,
        b.inst,
        Side::Buy,
        p("100.00"),
        q("0.7"),
    ));
    let mut theirs = Vec::new();
    restored
        .apply(&taker, Timestamp(T0), &mut theirs)
        .expect("taker");
    common::run(&mut b.engine, &mut b.events, T0, &taker).expect("taker");
    assert_eq!(theirs, b.events);
    assert_eq!(restored.state_hash(), b.engine.state_hash());
}
