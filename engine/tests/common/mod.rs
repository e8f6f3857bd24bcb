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
