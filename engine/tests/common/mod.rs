//! Helpers shared by the engine's integration tests: BTC_EUR units and the check every
//! refusal must pass.

#![allow(
    dead_code,
    reason = "each test binary uses a different part of the helpers"
)]

use matchbook::{Applied, Command, Engine, EngineError, Event, EventRecord, Price, Qty, Timestamp};

/// A BTC_EUR price (2 decimals).
pub fn p(text: &str) -> Price {
    matchbook::fixed::parse_scaled(text, 2)
        .map(Price)
        .expect("price")
}

/// A BTC_EUR amount (5 decimals).
pub fn q(text: &str) -> Qty {
    matchbook::fixed::parse_scaled(text, 5)
        .map(Qty)
        .expect("amount")
}

/// Applies `command` at `now` into a cleared `events`.
pub fn run(
    engine: &mut Engine,
    events: &mut Vec<EventRecord>,
    now: i64,
    command: &Command,
) -> Result<Applied, EngineError> {
    events.clear();
    engine.apply(command, Timestamp(now), events)
}

/// Asserts `command` is refused with `error`, emits exactly one `Rejected` event, and
/// leaves every piece of state as it was.
pub fn refuse(
    engine: &mut Engine,
    events: &mut Vec<EventRecord>,
    now: i64,
    command: Command,
    error: EngineError,
) {
    let before = engine.content_hash();
    let seq = engine.sequence();
    assert_eq!(
        run(engine, events, now, &command).err(),
        Some(error),
        "{command:?}"
    );
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(matches!(events[0].event, Event::Rejected { error: e, .. } if e == error));
    assert_eq!(engine.sequence(), seq + 1);
    assert_eq!(
        engine.content_hash(),
        before,
        "state changed by refused {command:?}"
    );
}

/// Asserts the order `command` places is accepted and ended at once, refused by its time in
/// force with `error`: it gets a number, its `OrderAccepted` is followed by its
/// `OrderCancelled` with the matching reason, nothing trades, the books and every account's
/// available balances are as they were, and the next order still gets the next number.
pub fn reject_at_entry(
    engine: &mut Engine,
    events: &mut Vec<EventRecord>,
    now: i64,
    command: Command,
    error: EngineError,
) {
    let balances = |e: &Engine| -> Vec<i64> {
        (0u32..)
            .map_while(|a| e.account(matchbook::AccountId(a)).ok())
            .flat_map(|view| view.dense_balances().into_iter().map(|b| b.available))
            .collect()
    };
    let books = |e: &Engine| -> Vec<String> {
        (0..e.instruments().len())
            .map(|i| {
                format!(
                    "{:?}",
                    e.book_levels(matchbook::InstrumentId(i as u16), 1000)
                )
            })
            .collect()
    };
    let (balances_before, books_before) = (balances(engine), books(engine));
    let applied = run(engine, events, now, &command).expect("accepted, then ended");
    assert_eq!(applied.rejected, Some(error), "{command:?}");
    let order = applied.order.expect("the rejected order has a number");
    let accepted = events
        .iter()
        .position(|r| matches!(r.event, Event::OrderAccepted(a) if a.order == order));
    let ended = events.iter().position(|r| {
        matches!(r.event, Event::OrderCancelled { order: o, reason, .. }
            if o == order && reason.refusal() == Some(error))
    });
    assert!(
        matches!((accepted, ended), (Some(a), Some(c)) if a < c),
        "{events:?}"
    );
    assert!(!events.iter().any(|r| matches!(r.event, Event::Trade(_))));
    assert_eq!(balances(engine), balances_before, "reservation released");
    assert_eq!(books(engine), books_before, "book untouched");
}
