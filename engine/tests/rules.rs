//! One test per order-entry rule, on the demo BTC_EUR market (amounts 5 decimals, prices 2,
//! min_size 10 EUR). Every refusal is checked to leave the engine's state exactly as before.

mod common;

use common::{p, q};
use matchbook::{
    AccountId, AccountKind, CancelReason, CancelScope, Command, Engine, EngineError, Event,
    EventRecord, HolderId, InstrumentId, InstrumentState, LiveState, NewOrder, OrderRef, OrderType,
    Price, Qty, Side, StpMode, TimeInForce, Timestamp, Uuid,
};

const T0: i64 = 1_700_000_000_000_000_000;

struct Bench {
    engine: Engine,
    events: Vec<EventRecord>,
    now: i64,
    inst: InstrumentId,
    alice: AccountId,
    bob: AccountId,
}

impl Bench {
    fn new() -> Self {
        let mut engine = Engine::new(matchbook::demo::config()).expect("demo config");
        let mut events = Vec::new();
        let alice = engine
            .apply(&Command::CreateHolder, Timestamp(T0), &mut events)
            .expect("holder");
        let bob = engine
            .apply(&Command::CreateHolder, Timestamp(T0), &mut events)
            .expect("holder");
        let inst = engine.instrument_by_code("BTC_EUR").expect("demo market");
        // Plenty of every currency, so these tests exercise matching rules, not funds.
        for account in [AccountId(0), AccountId(1)] {
            for currency in 0..engine.currencies().len() {
                let command = Command::Deposit {
                    account,
                    currency: matchbook::CurrencyId(currency as u16),
                    amount: 1 << 60,
                };
                engine
                    .apply(&command, Timestamp(T0), &mut events)
                    .expect("deposit");
            }
        }
        Self {
            engine,
            events,
            now: T0,
            inst,
            alice: alice.account.expect("main"),
            bob: bob.account.expect("main"),
        }
    }

    fn run(&mut self, command: Command) -> Result<matchbook::Applied, EngineError> {
        common::run(&mut self.engine, &mut self.events, self.now, &command)
    }

    fn order(&self, account: AccountId, side: Side, price: &str, amount: &str) -> NewOrder {
        NewOrder::limit(account, self.inst, side, p(price), q(amount))
    }

    fn place(&mut self, order: NewOrder) -> OrderRef {
        self.run(Command::PlaceOrder(order))
            .expect("accepted")
            .order
            .expect("order")
    }

    /// Asserts `command` is refused with `error`, emits exactly one `Rejected` event, and
    /// leaves every piece of state as it was.
    fn refuse(&mut self, command: Command, error: EngineError) {
        common::refuse(&mut self.engine, &mut self.events, self.now, command, error);
    }

    /// Asserts the order `command` places is accepted and ended at once with `error`.
    fn reject_at_entry(&mut self, command: Command, error: EngineError) {
        common::reject_at_entry(&mut self.engine, &mut self.events, self.now, command, error);
    }

    fn trades(&self) -> Vec<(Price, Qty, u64, u64)> {
        self.events
            .iter()
            .filter_map(|r| match r.event {
                Event::Trade(t) => Some((t.price, t.amount, t.maker.id, t.taker.id)),
                _ => None,
            })
            .collect()
    }

    fn cancels(&self) -> Vec<(u64, CancelReason)> {
        self.events
            .iter()
            .filter_map(|r| match r.event {
                Event::OrderCancelled { order, reason, .. } => Some((order.id, reason)),
                _ => None,
            })
            .collect()
    }

    fn asks(&self) -> Vec<(Price, Qty, u32)> {
        let view = self.engine.book_levels(self.inst, 100).expect("book");
        view.asks
            .iter()
            .map(|l| (l.price, l.amount, l.number_of_orders))
            .collect()
    }

    fn bids(&self) -> Vec<(Price, Qty, u32)> {
        let view = self.engine.book_levels(self.inst, 100).expect("book");
        view.bids
            .iter()
            .map(|l| (l.price, l.amount, l.number_of_orders))
            .collect()
    }
}

#[test]
fn price_time_priority_and_maker_price() {
    let mut b = Bench::new();
    let first = b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
    let second = b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
    let better = b.place(b.order(b.alice, Side::Sell, "99.50", "1"));
    let taker = b.place(b.order(b.bob, Side::Buy, "101.00", "2.5"));
    assert_eq!(
        b.trades(),
        vec![
            (p("99.50"), q("1"), better.id, taker.id),
            (p("100.00"), q("1"), first.id, taker.id),
            (p("100.00"), q("0.5"), second.id, taker.id),
        ]
    );
    assert_eq!(b.asks(), vec![(p("100.00"), q("0.5"), 1)]);
    assert_eq!(
        b.engine.last_price(b.inst).expect("book"),
        Some(p("100.00"))
    );
    let rest = b.engine.order(second).expect("still open");
    assert_eq!(rest.filled(), q("0.5"));
    assert!(
        b.engine.order(taker).is_none(),
        "taker filled fully and left"
    );
}

#[test]
fn good_till_cancelled_rests_its_remainder() {
    let mut b = Bench::new();
    b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
    let taker = b.place(b.order(b.bob, Side::Buy, "100.00", "3"));
    assert!(
        b.events.iter().any(
            |r| matches!(r.event, Event::OrderBooked { remaining, .. } if remaining == q("2"))
        )
    );
    // The touch moved: the bid is now 100.00 and the ask side is empty.
    assert!(matches!(
        b.events.last().map(|r| r.event),
        Some(Event::TopOfBook { bid: Some(bid), ask: None, .. }) if bid == p("100.00")
    ));
    let o = b.engine.order(taker).expect("rests");
    assert_eq!(
        (o.state(), o.filled(), o.remaining()),
        (LiveState::Resting, q("1"), q("2"))
    );
    assert_eq!(
        o.filled_notional().0 / i128::from(o.filled().0),
        i128::from(p("100.00").0),
        "average price"
    );
    assert_eq!(b.bids(), vec![(p("100.00"), q("2"), 1)]);
}

#[test]
fn immediate_or_cancel_never_rests() {
    let mut b = Bench::new();
    b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
    let ioc = b.place(
        b.order(b.bob, Side::Buy, "100.00", "3")
            .with_tif(TimeInForce::ImmediateOrCancelled),
    );
    assert_eq!(b.trades().len(), 1);
    assert_eq!(b.cancels(), vec![(ioc.id, CancelReason::Unfilled)]);
    assert!(b.bids().is_empty());
    assert_eq!(b.engine.open_order_count(HolderId(1)), Ok(0));
}

#[test]
fn fill_or_kill_is_all_or_nothing_before_any_fill() {
    let mut b = Bench::new();
    b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
    b.place(b.order(b.alice, Side::Sell, "101.00", "1"));
    let (bob, inst) = (b.bob, b.inst);
    let fok = |amount, price| {
        Command::PlaceOrder(
            NewOrder::limit(bob, inst, Side::Buy, p(price), q(amount))
                .with_tif(TimeInForce::FillOrKill),
        )
    };
    b.reject_at_entry(fok("2.1", "101.00"), EngineError::InsufficientLiquidity);
    b.reject_at_entry(fok("1.5", "100.50"), EngineError::InsufficientLiquidity);
    let c = fok("2", "101.00");
    b.run(c).expect("fills");
    assert_eq!(b.trades().len(), 2);
    assert!(b.asks().is_empty());
}

#[test]
fn post_only_refuses_to_take() {
    let mut b = Bench::new();
    b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
    let crossing = Command::PlaceOrder(
        b.order(b.bob, Side::Buy, "100.00", "1")
            .with_tif(TimeInForce::PostOnly),
    );
    b.reject_at_entry(crossing, EngineError::PostOnlyWouldTake);
    b.place(
        b.order(b.bob, Side::Buy, "99.99", "1")
            .with_tif(TimeInForce::PostOnly),
    );
    assert_eq!(b.bids(), vec![(p("99.99"), q("1"), 1)]);
}

#[test]
fn market_orders_sweep_up_to_protection_and_never_rest() {
    let mut b = Bench::new();
    for price in ["100.00", "101.00", "102.00"] {
        b.place(b.order(b.alice, Side::Sell, price, "1"));
    }
    let (bob, inst) = (b.bob, b.inst);
    let market = |amount: &str, protection: Option<&str>| {
        let mut o = NewOrder::limit(bob, inst, Side::Buy, p("1"), q(amount));
        o.order_type = OrderType::Market;
        o.time_in_force = TimeInForce::ImmediateOrCancelled;
        o.price = protection.map(p);
        o
    };
    let m = b.place(market("5", Some("101.00")));
    assert_eq!(b.trades().len(), 2);
    assert_eq!(b.cancels(), vec![(m.id, CancelReason::Unfilled)]);
    let m = b.place(market("5", None));
    assert_eq!(b.trades(), vec![(p("102.00"), q("1"), 3, m.id)]);
    let m = b.place(market("1", None));
    assert_eq!(
        b.cancels(),
        vec![(m.id, CancelReason::Unfilled)],
        "empty book: nothing to take"
    );
    let mut post_only = market("1", None);
    post_only.time_in_force = TimeInForce::PostOnly;
    b.refuse(
        Command::PlaceOrder(post_only),
        EngineError::InvalidTimeInForce,
    );
    assert!(b.bids().is_empty());
}

#[test]
fn stop_orders_wait_for_their_trigger_then_enter_in_trigger_order() {
    let mut b = Bench::new();
    let stop = |b: &Bench, trigger: &str, price: &str| {
        let mut o = b.order(b.bob, Side::Buy, price, "1");
        o.order_type = OrderType::Stop;
        o.trigger_price = Some(p(trigger));
        o
    };
    let high = b.place(stop(&b, "105.00", "110.00"));
    let low = b.place(stop(&b, "103.00", "110.00"));
    let cancelled = b.place(stop(&b, "102.00", "110.00"));
    assert!(b.bids().is_empty(), "stops stay off the book");
    b.run(Command::CancelOrder {
        account: b.bob,
        order: cancelled,
    })
    .expect("cancel before trigger");
    for price in ["104.00", "106.00", "107.00"] {
        b.place(b.order(b.alice, Side::Sell, price, "1"));
    }
    // A trade at 104 triggers the 103 stop, which buys at 106 and so triggers the 105 stop.
    b.place(b.order(b.bob, Side::Buy, "104.00", "1"));
    let triggered: Vec<u64> = b
        .events
        .iter()
        .filter_map(|r| match r.event {
            Event::StopTriggered { order, .. } => Some(order.id),
            _ => None,
        })
        .collect();
    assert_eq!(triggered, vec![low.id, high.id]);
    assert_eq!(
        b.trades().iter().map(|t| t.0).collect::<Vec<_>>(),
        vec![p("104.00"), p("106.00"), p("107.00")]
    );
    // Placed when the last price is already past its trigger: enters at once.
    b.place(b.order(b.alice, Side::Sell, "108.00", "1"));
    let now = b.place(stop(&b, "100.00", "108.00"));
    assert!(matches!(b.events[0].event, Event::OrderAccepted(_)));
    assert!(
        matches!(b.events[1].event, Event::BalanceChanged { .. }),
        "reservation"
    );
    assert!(matches!(b.events[2].event, Event::StopTriggered { order, .. } if order == now));
    let mut no_trigger = stop(&b, "1", "1");
    no_trigger.trigger_price = None;
    b.refuse(
        Command::PlaceOrder(no_trigger),
        EngineError::InvalidTriggerPrice,
    );
    let mut trigger_on_limit = b.order(b.bob, Side::Buy, "100.00", "1");
    trigger_on_limit.trigger_price = Some(p("100.00"));
    b.refuse(
        Command::PlaceOrder(trigger_on_limit),
        EngineError::InvalidTriggerPrice,
    );
}

#[test]
fn good_till_time_expires_on_time_advance() {
    let mut b = Bench::new();
    let mut gtt = b
        .order(b.alice, Side::Sell, "100.00", "1")
        .with_tif(TimeInForce::GoodTillTime);
    gtt.expire_at = Some(Timestamp(T0 + 5_000_000));
    let order = b.place(gtt);
    b.now += 4_999_999;
    b.run(Command::AdvanceTime).expect("advance");
    assert!(b.events.is_empty());
    b.now += 1;
    b.run(Command::AdvanceTime).expect("advance");
    assert_eq!(b.cancels(), vec![(order.id, CancelReason::Expired)]);
    assert!(b.asks().is_empty());
    let mut past = gtt;
    past.expire_at = Some(Timestamp(b.now));
    b.refuse(Command::PlaceOrder(past), EngineError::InvalidExpiry);
    past.expire_at = None;
    b.refuse(Command::PlaceOrder(past), EngineError::InvalidExpiry);
    let mut gtc_with_expiry = b.order(b.alice, Side::Sell, "100.00", "1");
    gtc_with_expiry.expire_at = Some(Timestamp(b.now + 10));
    b.refuse(
        Command::PlaceOrder(gtc_with_expiry),
        EngineError::InvalidExpiry,
    );
}

#[test]
fn self_trade_prevention_modes() {
    let cases = [
        (StpMode::None, 1, vec![]),
        (StpMode::CancelNewest, 0, vec![(2, CancelReason::SelfTrade)]),
        (StpMode::CancelOldest, 1, vec![(1, CancelReason::SelfTrade)]),
        (
            StpMode::CancelBoth,
            0,
            vec![(1, CancelReason::SelfTrade), (3, CancelReason::SelfTrade)],
        ),
    ];
    for (mode, trades, cancels) in cases {
        let mut b = Bench::new();
        b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
        b.place(b.order(b.bob, Side::Sell, "100.00", "1"));
        b.run(Command::SetStpMode {
            account: b.alice,
            mode,
        })
        .expect("set mode");
        let taker = b
            .order(b.alice, Side::Buy, "100.00", "1")
            .with_tif(TimeInForce::ImmediateOrCancelled);
        let taker_ref = b.place(taker);
        let mut want = cancels.clone();
        for c in &mut want {
            if c.0 != 1 {
                c.0 = taker_ref.id;
            }
        }
        assert_eq!(b.trades().len(), trades, "{mode:?}");
        assert_eq!(b.cancels(), want, "{mode:?}");
    }
    // The order's own mode overrides the account default.
    let mut b = Bench::new();
    b.place(b.order(b.alice, Side::Sell, "100.00", "1"));
    let mut taker = b.order(b.alice, Side::Buy, "100.00", "1");
    taker.stp = Some(StpMode::CancelNewest);
    b.place(taker);
    assert!(b.trades().is_empty());
}

#[test]
fn amend_keeps_priority_only_for_a_size_down() {
    let mut b = Bench::new();
    let first = b.place(b.order(b.alice, Side::Sell, "100.00", "2"));
    let second = b.place(b.order(b.alice, Side::Sell, "100.00", "2"));
    let alice = b.alice;
    let amend = |order, amount: Option<&str>, price: Option<&str>| Command::AmendOrder {
        account: alice,
        order,
        amount: amount.map(q),
        price: price.map(p),
    };
    b.run(amend(first, Some("1"), None)).expect("size down");
    assert_eq!(b.asks(), vec![(p("100.00"), q("3"), 2)]);
    let l3 = b.engine.book_orders(b.inst, 1).expect("book");
    assert_eq!(
        l3.asks.iter().map(|o| o.order).collect::<Vec<_>>(),
        vec![first, second]
    );
    b.run(amend(first, Some("3"), None)).expect("size up");
    let l3 = b.engine.book_orders(b.inst, 1).expect("book");
    assert_eq!(
        l3.asks.iter().map(|o| o.order).collect::<Vec<_>>(),
        vec![second, first],
        "size-up goes to the back"
    );
    b.place(b.order(b.bob, Side::Buy, "99.00", "1"));
    b.run(amend(second, None, Some("99.00")))
        .expect("move onto the bid");
    assert_eq!(b.trades().len(), 1, "a moved order may trade");
    assert_eq!(
        b.asks(),
        vec![(p("99.00"), q("1"), 1), (p("100.00"), q("3"), 1)]
    );
    // Refused amends leave the order untouched.
    b.refuse(
        amend(second, Some("1"), None),
        EngineError::AmendBelowFilled,
    );
    b.refuse(
        amend(second, None, Some("2000000.00")),
        EngineError::PriceOutOfRange,
    );
    b.refuse(
        amend(second, Some("0.00001"), None),
        EngineError::AmendBelowFilled,
    );
    b.refuse(
        amend(first, Some("0.05"), None),
        EngineError::MinSizeNotSatisfied,
    );
    b.refuse(amend(first, None, None), EngineError::EmptyAmend);
    b.refuse(
        Command::AmendOrder {
            account: b.bob,
            order: first,
            amount: Some(q("1")),
            price: None,
        },
        EngineError::OrderNotFound,
    );
    let post = b.place(
        b.order(b.bob, Side::Buy, "90.00", "1")
            .with_tif(TimeInForce::PostOnly),
    );
    b.refuse(
        Command::AmendOrder {
            account: b.bob,
            order: post,
            amount: None,
            price: Some(p("99.00")),
        },
        EngineError::PostOnlyWouldTake,
    );
}

#[test]
fn cancels_by_id_client_id_and_scope() {
    let mut b = Bench::new();
    let c1 = Uuid(0xabc);
    let mut with_client = b.order(b.alice, Side::Buy, "90.00", "1");
    with_client.client_id = Some(c1);
    let older = b.place(with_client);
    let newer = b.place(with_client);
    b.run(Command::CancelByClientId {
        account: b.alice,
        client_id: c1,
    })
    .expect("cancel newest");
    assert_eq!(b.cancels(), vec![(newer.id, CancelReason::Requested)]);
    b.run(Command::CancelByClientId {
        account: b.alice,
        client_id: c1,
    })
    .expect("then the older one");
    assert_eq!(b.cancels(), vec![(older.id, CancelReason::Requested)]);
    b.refuse(
        Command::CancelByClientId {
            account: b.alice,
            client_id: c1,
        },
        EngineError::OrderNotFound,
    );

    let a = b.place(b.order(b.alice, Side::Buy, "90.00", "1"));
    b.refuse(
        Command::CancelOrder {
            account: b.bob,
            order: a,
        },
        EngineError::OrderNotFound,
    );
    b.run(Command::CancelOrder {
        account: b.alice,
        order: a,
    })
    .expect("cancel");
    b.refuse(
        Command::CancelOrder {
            account: b.alice,
            order: a,
        },
        EngineError::OrderNotFound,
    );

    let other = b.engine.instrument_by_code("ETH_EUR").expect("demo");
    let x = b.place(b.order(b.alice, Side::Buy, "90.00", "1"));
    let y = b.place(NewOrder::limit(
        b.alice,
        other,
        Side::Buy,
        p("90.00"),
        Qty(10_000),
    ));
    let z = b.place(b.order(b.alice, Side::Buy, "91.00", "1"));
    let bobs = b.place(b.order(b.bob, Side::Buy, "91.00", "1"));
    b.run(Command::CancelAll {
        account: b.alice,
        scope: CancelScope::Orders(vec![z, bobs, z]),
    })
    .expect("list");
    assert_eq!(
        b.cancels(),
        vec![(z.id, CancelReason::Requested)],
        "foreign and repeated ids skipped"
    );
    b.run(Command::CancelAll {
        account: b.alice,
        scope: CancelScope::Instrument(other),
    })
    .expect("per market");
    assert_eq!(b.cancels(), vec![(y.id, CancelReason::Requested)]);
    b.run(Command::CancelAll {
        account: b.alice,
        scope: CancelScope::All,
    })
    .expect("all");
    assert_eq!(b.cancels(), vec![(x.id, CancelReason::Requested)]);
    assert!(b.engine.order(bobs).is_some());
    b.refuse(
        Command::CancelAll {
            account: b.alice,
            scope: CancelScope::Instrument(InstrumentId(999)),
        },
        EngineError::UnknownInstrument,
    );
    b.refuse(
        Command::CancelAll {
            account: AccountId(99),
            scope: CancelScope::All,
        },
        EngineError::UnknownAccount,
    );
}

#[test]
fn open_orders_are_limited_per_holder_across_markets_and_subaccounts() {
    let mut b = Bench::new();
    let sub = b
        .run(Command::CreateSubaccount {
            holder: HolderId(0),
            name: "sub".into(),
            kind: AccountKind::Regular,
        })
        .expect("sub")
        .account
        .expect("account");
    for currency in 0..b.engine.currencies().len() {
        let deposit = Command::Deposit {
            account: sub,
            currency: matchbook::CurrencyId(currency as u16),
            amount: 1 << 60,
        };
        b.run(deposit).expect("deposit");
    }
    let other = b.engine.instrument_by_code("ETH_EUR").expect("demo");
    for i in 0..200 {
        let account = if i % 2 == 0 { b.alice } else { sub };
        let order = if i % 3 == 0 {
            NewOrder::limit(account, other, Side::Buy, p("90.00"), Qty(10_000))
        } else {
            b.order(account, Side::Buy, "90.00", "1")
        };
        b.place(order);
    }
    assert_eq!(b.engine.open_order_count(HolderId(0)), Ok(200));
    b.refuse(
        Command::PlaceOrder(b.order(sub, Side::Buy, "90.00", "1")),
        EngineError::MaxOpenOrdersExceeded,
    );
    // Orders that cannot rest do not count and are still accepted.
    b.place(
        b.order(sub, Side::Buy, "90.00", "1")
            .with_tif(TimeInForce::ImmediateOrCancelled),
    );
    b.place(b.order(b.bob, Side::Buy, "90.00", "1"));
}

#[test]
fn instrument_state_governs_order_entry_but_not_cancels() {
    let mut b = Bench::new();
    let resting = b.place(b.order(b.alice, Side::Buy, "90.00", "1"));
    let set = |state| Command::SetInstrumentState {
        instrument: InstrumentId(0),
        state,
    };
    b.run(set(InstrumentState::PostOnly)).expect("post only");
    b.refuse(
        Command::PlaceOrder(b.order(b.bob, Side::Sell, "95.00", "1")),
        EngineError::OnlyPostOnlyAllowed,
    );
    b.place(
        b.order(b.bob, Side::Sell, "95.00", "1")
            .with_tif(TimeInForce::PostOnly),
    );
    b.refuse(
        Command::AmendOrder {
            account: b.alice,
            order: resting,
            amount: None,
            price: Some(p("96.00")),
        },
        EngineError::PostOnlyWouldTake,
    );
    for state in [InstrumentState::Suspended, InstrumentState::Closed] {
        b.run(set(state)).expect("state");
        let post_only = b
            .order(b.bob, Side::Sell, "95.00", "1")
            .with_tif(TimeInForce::PostOnly);
        b.refuse(
            Command::PlaceOrder(post_only),
            EngineError::InstrumentNotTrading,
        );
        b.refuse(
            Command::AmendOrder {
                account: b.alice,
                order: resting,
                amount: Some(q("2")),
                price: None,
            },
            EngineError::InstrumentNotTrading,
        );
    }
    b.run(Command::CancelOrder {
        account: b.alice,
        order: resting,
    })
    .expect("cancels still work");
    b.refuse(
        set(InstrumentState::Active).clone_with(InstrumentId(42)),
        EngineError::UnknownInstrument,
    );
}

trait WithInstrument {
    fn clone_with(&self, instrument: InstrumentId) -> Command;
}
impl WithInstrument for Command {
    fn clone_with(&self, instrument: InstrumentId) -> Command {
        match self {
            Command::SetInstrumentState { state, .. } => Command::SetInstrumentState {
                instrument,
                state: *state,
            },
            other => other.clone(),
        }
    }
}

#[test]
fn input_validation_refuses_bad_orders() {
    let mut b = Bench::new();
    let base = b.order(b.alice, Side::Buy, "100.00", "1");
    let cases = [
        (
            NewOrder {
                amount: Qty(0),
                ..base
            },
            EngineError::InvalidAmount,
        ),
        (
            NewOrder {
                amount: Qty(-5),
                ..base
            },
            EngineError::InvalidAmount,
        ),
        (
            NewOrder {
                price: None,
                ..base
            },
            EngineError::MissingPrice,
        ),
        (
            NewOrder {
                price: Some(Price(0)),
                ..base
            },
            EngineError::InvalidPrice,
        ),
        (
            NewOrder {
                price: Some(Price(-1)),
                ..base
            },
            EngineError::InvalidPrice,
        ),
        (
            NewOrder {
                price: Some(p("1000000.01")),
                ..base
            },
            EngineError::PriceOutOfRange,
        ),
        (
            NewOrder {
                amount: q("0.09999"),
                ..base
            },
            EngineError::MinSizeNotSatisfied,
        ),
        (
            NewOrder {
                instrument: InstrumentId(77),
                ..base
            },
            EngineError::UnknownInstrument,
        ),
        (
            NewOrder {
                account: AccountId(77),
                ..base
            },
            EngineError::UnknownAccount,
        ),
    ];
    for (order, error) in cases {
        b.refuse(Command::PlaceOrder(order), error);
    }
    b.place(NewOrder {
        amount: q("0.1"),
        ..base
    });
    b.refuse(
        Command::CreateSubaccount {
            holder: HolderId(9),
            name: "sub".into(),
            kind: AccountKind::Regular,
        },
        EngineError::UnknownHolder,
    );
    b.refuse(
        Command::SetStpMode {
            account: AccountId(9),
            mode: StpMode::CancelBoth,
        },
        EngineError::UnknownAccount,
    );
}

#[test]
fn book_views_respect_depth_and_order() {
    let mut b = Bench::new();
    for (side, price) in [
        (Side::Buy, "99.00"),
        (Side::Buy, "98.00"),
        (Side::Buy, "99.00"),
        (Side::Sell, "101.00"),
        (Side::Sell, "102.00"),
    ] {
        b.place(b.order(b.alice, side, price, "1"));
    }
    let l1 = b.engine.book_levels(b.inst, 1).expect("book");
    assert_eq!((l1.bids.len(), l1.asks.len()), (1, 1));
    assert_eq!(
        (
            l1.bids[0].price,
            l1.bids[0].number_of_orders,
            l1.asks[0].price
        ),
        (p("99.00"), 2, p("101.00"))
    );
    let l2 = b.engine.book_levels(b.inst, 10).expect("book");
    assert_eq!(
        l2.bids.iter().map(|l| l.price).collect::<Vec<_>>(),
        vec![p("99.00"), p("98.00")]
    );
    // The book sequence counts the five commands that changed this book.
    assert_eq!(l2.sequence, 5);
    let l3 = b.engine.book_orders(b.inst, 1).expect("book");
    assert_eq!(
        l3.bids.iter().map(|o| o.order.id).collect::<Vec<_>>(),
        vec![1, 3]
    );
    assert!(b.engine.book_levels(InstrumentId(50), 1).is_err());
}

#[test]
fn order_uuids_resolve_to_live_orders_only() {
    let mut b = Bench::new();
    let order = b.place(b.order(b.alice, Side::Buy, "90.00", "1"));
    let uuid: Uuid = Uuid::of_order(order)
        .to_string()
        .parse()
        .expect("own uuid parses");
    let resolved = uuid.order_ref().expect("ours");
    assert_eq!(
        b.engine.order(resolved).map(|o| o.sequence()),
        Some(b.events[0].seq)
    );
    b.run(Command::CancelOrder {
        account: b.alice,
        order,
    })
    .expect("cancel");
    let reuse = b.place(b.order(b.alice, Side::Buy, "90.00", "1"));
    assert_eq!(reuse.slot, order.slot, "slot reused");
    assert!(
        b.engine.order(resolved).is_none(),
        "old uuid no longer resolves"
    );
}

#[test]
fn statuses_read_as_the_spec_spells_them() {
    use matchbook::OrderStatus;
    assert_eq!(CancelReason::Requested.status().as_str(), "CANCELLED");
    assert_eq!(CancelReason::Expired.status().as_str(), "CANCELLED");
    assert_eq!(
        CancelReason::FillOrKillUnfilled.status().as_str(),
        "FILLED_REJECTED"
    );
    assert_eq!(
        CancelReason::FillOrKillUnfilled.status().reason(),
        Some("INSUFFICIENT_LIQUIDITY")
    );
    // A refusal code is a reason beside the status, never the status itself.
    let post_only = CancelReason::PostOnlyWouldTake.status();
    assert_eq!(
        (post_only.as_str(), post_only.reason()),
        ("FILLED_REJECTED", Some("POST_ONLY_WOULD_TAKE"))
    );
    assert_eq!(OrderStatus::Cancelled.reason(), None);
    assert_eq!(OrderStatus::Open.as_str(), "OPEN");
    assert_eq!(OrderStatus::FilledFully.as_str(), "FILLED_FULLY");
    assert_eq!(
        EngineError::AccountInDerisk.as_str(),
        "USER_MGMT_USER_IN_DERISK"
    );
    assert_eq!(
        EngineError::InsufficientFunds.as_str(),
        "INSUFFICIENT_FUNDS"
    );
}

#[test]
fn every_error_has_a_distinct_code_in_its_subsystem_range() {
    use std::collections::BTreeSet;
    let all = [
        EngineError::InvalidAmount,
        EngineError::InvalidPrice,
        EngineError::MissingPrice,
        EngineError::InvalidTriggerPrice,
        EngineError::PriceOutOfRange,
        EngineError::MinSizeNotSatisfied,
        EngineError::InvalidExpiry,
        EngineError::InvalidTimeInForce,
        EngineError::UnknownInstrument,
        EngineError::EmptyAmend,
        EngineError::InsufficientLiquidity,
        EngineError::PostOnlyWouldTake,
        EngineError::InstrumentNotTrading,
        EngineError::OnlyPostOnlyAllowed,
        EngineError::OrderNotFound,
        EngineError::MaxOpenOrdersExceeded,
        EngineError::AmendBelowFilled,
        EngineError::UnknownAccount,
        EngineError::UnknownHolder,
        EngineError::UnknownCurrency,
        EngineError::InvalidAccountName,
        EngineError::InsufficientFunds,
        EngineError::InsufficientBalance {
            account: AccountId(1),
            currency: matchbook::CurrencyId(2),
            available: 3,
            requested: 4,
        },
        EngineError::BelowBlpThreshold,
        EngineError::AccountInDerisk,
        EngineError::SameAccount,
        EngineError::PermissionDenied,
        EngineError::InstantTradeAccount,
        EngineError::AccountClosed,
        EngineError::CannotCloseMain,
        EngineError::AccountNameTaken,
        EngineError::NotBlpAccount,
        EngineError::ReduceOnlyWouldIncrease,
        EngineError::NotFutures,
        EngineError::TimeOutOfRange,
        EngineError::AmountTooLarge,
        EngineError::BalanceLimitExceeded,
    ];
    let codes: BTreeSet<u16> = all.iter().map(|e| e.code()).collect();
    assert_eq!(codes.len(), all.len());
    for e in all {
        assert!((1000..5000).contains(&e.code()), "{e:?}");
        assert!(
            e.as_str()
                .chars()
                .all(|c| c.is_ascii_uppercase() || c == '_'),
            "{e:?}"
        );
        assert!(!e.to_string().is_empty());
    }
}
