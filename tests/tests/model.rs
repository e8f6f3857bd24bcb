//! Model-based property test: random command sequences (every order type and time in force,
//! every kind of cancel, amends, STP modes, market states, far prices that leave the ladder
//! window, expiries) drive the engine and the naive reference engine side by side; their
//! event streams must match after every command, the books at the end, and the engine's
//! invariants must hold throughout.

use matchbook::{
    CancelScope, Command, Engine, EngineConfig, EventRecord, InstrumentId, InstrumentKind,
    InstrumentSpec, InstrumentState, NewOrder, OrderRef, OrderType, Price, Qty, Side, StpMode,
    TimeInForce, Timestamp, Uuid,
};
use matchbook_tests::normalize::normalize;
use matchbook_tests::reference::{RefEngine, RefInstrument};
use proptest::prelude::*;
use proptest::strategy::ValueTree;

const MAX_OPEN: u32 = 6;

thread_local! {
    /// Outcomes seen by `run` on this thread, by event kind and detail.
    static OUTCOMES: std::cell::RefCell<std::collections::BTreeMap<String, u64>> = Default::default();
}

fn outcome(event: &matchbook::Event) -> String {
    use matchbook::Event;
    match event {
        Event::Rejected { error, .. } => format!("Rejected {error:?}"),
        Event::OrderCancelled { reason, .. } => format!("Cancelled {reason:?}"),
        Event::OrderAmended { kept_priority, .. } => format!("Amended kept={kept_priority}"),
        other => format!("{other:?}")
            .split(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or("")
            .to_owned(),
    }
}

fn instrument(code: &str, min_size: &str) -> InstrumentSpec {
    InstrumentSpec {
        code: code.into(),
        base: "AAA".into(),
        quote: "BBB".into(),
        amount_precision: 0,
        market_precision: 0,
        min_size: min_size.into(),
        min_price: "1".into(),
        max_price: "100000".into(),
        kind: InstrumentKind::Spot,
        state: InstrumentState::Active,
        futures: None,
    }
}

fn setup() -> (Engine, RefEngine) {
    let mut config = matchbook::demo::config();
    config.currencies.truncate(2);
    config.currencies[0].code = "AAA".into();
    config.currencies[1].code = "BBB".into();
    config.instruments = vec![instrument("A_B", "150"), instrument("C_B", "1")];
    let config = EngineConfig {
        max_open_orders: MAX_OPEN,
        ..config
    };
    let engine = Engine::new(config).expect("config");
    let reference = RefEngine::new(
        (0..2)
            .map(|i| RefInstrument {
                min_price: 1,
                max_price: 100_000,
                min_size: if i == 0 { 150 } else { 1 },
                state: InstrumentState::Active,
                last_price: None,
            })
            .collect(),
        MAX_OPEN,
    );
    (engine, reference)
}

/// A command with its order and account references still symbolic.
#[derive(Debug, Clone)]
enum Op {
    Place {
        account: usize,
        instrument: u16,
        side: Side,
        kind: u8,
        tif: u8,
        price: i64,
        trigger: i64,
        amount: i64,
        expire_in: i64,
        client: u8,
        stp: u8,
    },
    Amend {
        pick: usize,
        owner: bool,
        amount: Option<i64>,
        price: Option<i64>,
    },
    Cancel {
        pick: usize,
        owner: bool,
    },
    CancelClient {
        account: usize,
        client: u8,
    },
    CancelAll {
        account: usize,
        scope: u8,
        picks: Vec<usize>,
    },
    SetStp {
        account: usize,
        mode: u8,
    },
    SetState {
        instrument: u16,
        state: u8,
    },
    Advance,
}

fn price() -> impl Strategy<Value = i64> {
    prop_oneof![
        20 => 95i64..=105,
        2 => prop_oneof![Just(0i64), Just(-5), Just(200_000)],
        2 => prop_oneof![Just(9_000i64), Just(20_000), Just(2)],
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (0usize..6, 0u16..10, any::<bool>(), 0u8..10, 0u8..6, price(), 90i64..=110, prop_oneof![10 => 1i64..6, 1 => -1i64..=0], 0i64..8, 0u8..4, 0u8..8)
            .prop_map(|(account, instrument, buy, kind, tif, price, trigger, amount, expire_in, client, stp)| Op::Place {
                account, instrument: match instrument { 0..=4 => 0, 5..=8 => 1, _ => 8 }, side: if buy { Side::Buy } else { Side::Sell },
                kind, tif, price, trigger, amount, expire_in, client, stp,
            }),
        4 => (any::<usize>(), prop::bool::weighted(0.9), prop::option::weighted(0.7, 0i64..8), prop::option::weighted(0.7, price()))
            .prop_map(|(pick, owner, amount, price)| Op::Amend { pick, owner, amount, price }),
        3 => (any::<usize>(), prop::bool::weighted(0.9)).prop_map(|(pick, owner)| Op::Cancel { pick, owner }),
        1 => (0usize..5, 0u8..4).prop_map(|(account, client)| Op::CancelClient { account, client }),
        1 => (0usize..5, 0u8..5, prop::collection::vec(any::<usize>(), 0..4))
            .prop_map(|(account, scope, picks)| Op::CancelAll { account, scope, picks }),
        1 => (0usize..5, 0u8..4).prop_map(|(account, mode)| Op::SetStp { account, mode }),
        1 => (0u16..3, 0u8..30).prop_map(|(instrument, state)| Op::SetState { instrument, state }),
        1 => Just(Op::Advance),
    ]
}

fn stp_mode(n: u8) -> StpMode {
    [
        StpMode::None,
        StpMode::CancelNewest,
        StpMode::CancelOldest,
        StpMode::CancelBoth,
    ][usize::from(n % 4)]
}

fn client_id(n: u8) -> Option<Uuid> {
    (n > 0).then(|| Uuid(0x1000 + u128::from(n)))
}

/// Turns a symbolic op into a command, given the orders seen so far and the clock.
fn resolve(op: &Op, known: &[(OrderRef, usize)], live: &[(OrderRef, usize)], now: i64) -> Command {
    let account_id = |a: usize| matchbook::AccountId(a as u32);
    let pick = |pick: usize, owner: bool| -> (OrderRef, matchbook::AccountId) {
        if known.is_empty() {
            return (
                OrderRef {
                    id: 999_999,
                    slot: 0,
                },
                account_id(0),
            );
        }
        // Mostly a live order, sometimes any order ever seen (likely ended).
        let (order, acc) = if pick.is_multiple_of(5) || live.is_empty() {
            known[pick / 5 % known.len()]
        } else {
            live[pick / 5 % live.len()]
        };
        (order, account_id(if owner { acc } else { (acc + 1) % 5 }))
    };
    match op {
        Op::Place {
            account,
            instrument,
            side,
            kind,
            tif,
            price,
            trigger,
            amount,
            expire_in,
            client,
            stp,
        } => {
            let order_type = match kind {
                0..=6 => OrderType::Limit,
                7 => OrderType::Market,
                _ => OrderType::Stop,
            };
            let time_in_force = [
                TimeInForce::GoodTillCancelled,
                TimeInForce::GoodTillCancelled,
                TimeInForce::ImmediateOrCancelled,
                TimeInForce::FillOrKill,
                TimeInForce::PostOnly,
                TimeInForce::GoodTillTime,
            ][usize::from(*tif)];
            let gtt = time_in_force == TimeInForce::GoodTillTime;
            Command::PlaceOrder(NewOrder {
                account: account_id(*account),
                instrument: InstrumentId(*instrument),
                side: *side,
                order_type,
                time_in_force,
                price: (*price != -5 && (order_type != OrderType::Market || *price % 2 == 0))
                    .then_some(Price(*price)),
                trigger_price: (order_type == OrderType::Stop || *expire_in == 7)
                    .then_some(Price(*trigger)),
                amount: Qty(*amount),
                expire_at: (gtt != (*expire_in == 6))
                    .then_some(Timestamp(now + expire_in * 1_000_000)),
                client_id: client_id(*client),
                stp: (*stp < 4).then(|| stp_mode(*stp)),
            })
        }
        Op::Amend {
            pick: p,
            owner,
            amount,
            price,
        } => {
            let (order, account) = pick(*p, *owner);
            Command::AmendOrder {
                account,
                order,
                amount: amount.map(Qty),
                price: price.map(Price),
            }
        }
        Op::Cancel { pick: p, owner } => {
            let (order, account) = pick(*p, *owner);
            Command::CancelOrder { account, order }
        }
        Op::CancelClient { account, client } => Command::CancelByClientId {
            account: account_id(*account),
            client_id: client_id(*client).unwrap_or(Uuid(7)),
        },
        Op::CancelAll {
            account,
            scope,
            picks,
        } => Command::CancelAll {
            account: account_id(*account),
            scope: match scope {
                0 => CancelScope::All,
                1 => CancelScope::Instrument(InstrumentId(0)),
                2 => CancelScope::Instrument(InstrumentId(5)),
                3 => CancelScope::Orders(picks.iter().map(|&p| pick(p, true).0).collect()),
                _ => CancelScope::ClientIds(
                    picks
                        .iter()
                        .map(|&p| client_id((p % 4) as u8).unwrap_or(Uuid(9)))
                        .collect(),
                ),
            },
        },
        Op::SetStp { account, mode } => Command::SetStpMode {
            account: account_id(*account),
            mode: stp_mode(*mode),
        },
        Op::SetState { instrument, state } => Command::SetInstrumentState {
            instrument: InstrumentId(*instrument),
            state: match state {
                0 => InstrumentState::PostOnly,
                1 => InstrumentState::Suspended,
                2 => InstrumentState::Closed,
                _ => InstrumentState::Active,
            },
        },
        Op::Advance => Command::AdvanceTime,
    }
}

/// Invariants of the engine's own state: books never crossed, levels consistent with their
/// orders, every resting order with something left, open-order counts as listed.
fn check_invariants(engine: &Engine) -> Result<(), TestCaseError> {
    for i in 0..engine.instruments().len() {
        let inst = InstrumentId(i as u16);
        let l2 = engine.book_levels(inst, usize::MAX).expect("book");
        let l3 = engine.book_orders(inst, usize::MAX).expect("book");
        if let (Some(bid), Some(ask)) = (l2.bids.first(), l2.asks.first()) {
            prop_assert!(bid.price < ask.price, "crossed book {:?} / {:?}", bid, ask);
        }
        for (levels, orders) in [(&l2.bids, &l3.bids), (&l2.asks, &l3.asks)] {
            for level in levels.iter() {
                let at: Vec<_> = orders.iter().filter(|o| o.price == level.price).collect();
                prop_assert_eq!(at.len() as u32, level.number_of_orders);
                prop_assert_eq!(at.iter().map(|o| o.amount.0).sum::<i64>(), level.amount.0);
                prop_assert!(at.iter().all(|o| o.amount.0 > 0));
            }
        }
    }
    Ok(())
}

fn run(ops: &[(Op, i64)]) -> Result<(), TestCaseError> {
    let (mut engine, mut reference) = setup();
    let mut known: Vec<(OrderRef, usize)> = Vec::new();
    let mut sink: Vec<EventRecord> = Vec::new();
    let mut now = 1_000_000_000i64;
    for _ in 0..3 {
        let c = Command::CreateHolder;
        engine.apply(&c, Timestamp(now), &mut sink).expect("holder");
        reference
            .apply(&c, Timestamp(now))
            .1
            .expect("reference setup");
    }
    for holder in [0, 1] {
        let c = Command::CreateSubaccount {
            holder: matchbook::HolderId(holder),
        };
        engine
            .apply(&c, Timestamp(now), &mut sink)
            .expect("subaccount");
        reference
            .apply(&c, Timestamp(now))
            .1
            .expect("reference setup");
    }
    for (op, dt) in ops {
        now += dt * 1_000_000;
        let live: Vec<(OrderRef, usize)> = (0..5u32)
            .flat_map(|a| engine.open_orders(matchbook::AccountId(a)))
            .map(|o| (o.handle(), o.account().0 as usize))
            .collect();
        let command = resolve(op, &known, &live, now);
        sink.clear();
        let before = engine.content_hash();
        let got = engine.apply(&command, Timestamp(now), &mut sink);
        let (want_events, want) = reference.apply(&command, Timestamp(now));
        let got_events: Vec<_> = sink.iter().map(|r| normalize(r.event)).collect();
        prop_assert_eq!(&got_events, &want_events, "command {:?}", command);
        prop_assert_eq!(got.map(|_| ()), want, "result of {:?}", command);
        prop_assert_eq!(engine.sequence(), reference.sequence());
        if got.is_err() && sink.len() == 1 {
            prop_assert_eq!(
                engine.content_hash(),
                before,
                "refused {:?} changed state",
                command
            );
        }
        for record in &sink {
            OUTCOMES.with(|s| *s.borrow_mut().entry(outcome(&record.event)).or_insert(0) += 1);
            if let matchbook::Event::OrderAccepted(a) = record.event {
                known.push((a.order, a.account.0 as usize));
            }
        }
        check_invariants(&engine)?;
        for holder in 0..3u32 {
            prop_assert_eq!(
                engine
                    .open_order_count(matchbook::HolderId(holder))
                    .expect("holder"),
                reference.holders[holder as usize]
            );
        }
    }
    for i in 0..2u16 {
        let inst = InstrumentId(i);
        let l3 = engine.book_orders(inst, usize::MAX).expect("book");
        for (side, got) in [(Side::Buy, &l3.bids), (Side::Sell, &l3.asks)] {
            let got: Vec<_> = got
                .iter()
                .map(|o| (o.order.id, o.account, o.price.0, o.amount.0))
                .collect();
            prop_assert_eq!(got, reference.book_side(inst, side));
        }
    }
    let mut pending: Vec<u64> = (0..5u32)
        .flat_map(|a| engine.open_orders(matchbook::AccountId(a)))
        .filter(|o| o.state() == matchbook::LiveState::PendingTrigger)
        .map(|o| o.handle().id)
        .collect();
    pending.sort_unstable();
    prop_assert_eq!(pending, reference.pending_stops());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, max_shrink_iters: 20_000, ..ProptestConfig::default() })]

    #[test]
    fn engine_matches_reference_model(ops in prop::collection::vec((op(), 0i64..3), 1..200)) {
        run(&ops)?;
    }
}

/// The generator must reach every outcome the comparison is meant to cover; otherwise the
/// model test above could pass while exercising little.
#[test]
fn generator_reaches_every_outcome() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = prop::collection::vec((op(), 0i64..3), 1..200);
    for _ in 0..1500 {
        let ops = strategy.new_tree(&mut runner).expect("tree").current();
        run(&ops).expect("model agrees");
    }
    let seen = OUTCOMES.with(|s| s.borrow().clone());
    let expected = [
        "Trade",
        "OrderBooked",
        "StopTriggered",
        "Amended kept=true",
        "Amended kept=false",
        "Cancelled Requested",
        "Cancelled Unfilled",
        "Cancelled SelfTrade",
        "Cancelled Expired",
        "Cancelled FillOrKillUnfilled",
        "Cancelled PostOnlyWouldTake",
        "Rejected InvalidAmount",
        "Rejected InvalidPrice",
        "Rejected MissingPrice",
        "Rejected InvalidTriggerPrice",
        "Rejected PriceOutOfRange",
        "Rejected MinSizeNotSatisfied",
        "Rejected InvalidExpiry",
        "Rejected InvalidTimeInForce",
        "Rejected UnknownInstrument",
        "Rejected EmptyAmend",
        "Rejected InsufficientLiquidity",
        "Rejected PostOnlyWouldTake",
        "Rejected InstrumentNotTrading",
        "Rejected OnlyPostOnlyAllowed",
        "Rejected OrderNotFound",
        "Rejected MaxOpenOrdersExceeded",
        "Rejected AmendBelowFilled",
        "Rejected UnknownAccount",
    ];
    let missing: Vec<_> = expected
        .iter()
        .filter(|e| !seen.contains_key(**e))
        .collect();
    assert!(
        missing.is_empty(),
        "never reached: {missing:?}; seen: {seen:?}"
    );
}
