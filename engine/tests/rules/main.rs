//! One test per order-entry rule, on the demo BTC_EUR market (amounts 5 decimals, prices 2,
//! min_size 10 EUR). Every refusal is checked to leave the engine's state exactly as before.

#![warn(clippy::too_many_lines)]

#[path = "../common/mod.rs"]
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

mod amend_and_cancel;
mod time_in_force;
mod triggers_and_prevention;
mod validation_and_views;
