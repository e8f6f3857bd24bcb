//! Accounts, balances, reservations, settlement, fee tiers and transfers: one test per rule
//! and per error, on the demo markets. Every refusal is checked to change nothing.

#![warn(clippy::too_many_lines)]

#[path = "../common/mod.rs"]
mod common;

use common::{p, q};
use matchbook::{
    AccountId, AccountKind, AccountState, Applied, CancelReason, Command, CurrencyId, Engine,
    EngineError, Event, EventRecord, HolderId, InstrumentId, NewOrder, OrderType, Price, Qty, Side,
    TimeInForce, Timestamp,
};

const T0: i64 = 1_767_225_600_000_000_000;
const DAY: i64 = 86_400_000_000_000;
/// One whole unit of BTC, EUR or USD in balance units (all three keep 8 decimals here).
const ONE: i64 = 100_000_000;

struct World {
    engine: Engine,
    events: Vec<EventRecord>,
    now: i64,
    btc_eur: InstrumentId,
    btc: CurrencyId,
    eur: CurrencyId,
}

impl World {
    fn new() -> Self {
        let engine = Engine::new(matchbook::demo::config()).expect("demo");
        let btc_eur = engine.instrument_by_code("BTC_EUR").expect("market");
        let (btc, eur) = (
            engine.currency_by_code("BTC").expect("BTC"),
            engine.currency_by_code("EUR").expect("EUR"),
        );
        Self {
            engine,
            events: Vec::new(),
            now: T0,
            btc_eur,
            btc,
            eur,
        }
    }

    fn run(&mut self, command: Command) -> Result<matchbook::Applied, EngineError> {
        common::run(&mut self.engine, &mut self.events, self.now, &command)
    }

    fn ok(&mut self, command: Command) -> Applied {
        let debug = format!("{command:?}");
        self.run(command)
            .unwrap_or_else(|e| panic!("{debug}: {e:?}"))
    }

    fn refuse(&mut self, command: Command, error: EngineError) {
        common::refuse(&mut self.engine, &mut self.events, self.now, command, error);
    }

    fn holder(&mut self) -> (HolderId, AccountId) {
        let a = self.ok(Command::CreateHolder);
        (a.holder.expect("holder"), a.account.expect("main"))
    }

    fn sub(&mut self, holder: HolderId, name: &str, kind: AccountKind) -> AccountId {
        self.ok(Command::CreateSubaccount {
            holder,
            name: name.into(),
            kind,
        })
        .account
        .expect("sub")
    }

    fn deposit(&mut self, account: AccountId, currency: CurrencyId, amount: i64) {
        self.ok(Command::Deposit {
            account,
            currency,
            amount,
        });
    }

    fn balance(&self, account: AccountId, currency: CurrencyId) -> (i64, i64) {
        let b = self
            .engine
            .account(account)
            .expect("account")
            .balances
            .get(currency);
        (b.available, b.locked)
    }

    fn order(&self, account: AccountId, side: Side, price: &str, amount: &str) -> NewOrder {
        NewOrder::limit(account, self.btc_eur, side, p(price), q(amount))
    }

    fn transfer(
        &self,
        holder: HolderId,
        source: AccountId,
        destination: AccountId,
        currency: CurrencyId,
        amount: i64,
    ) -> Command {
        Command::Transfer {
            holder,
            source,
            destination,
            currency,
            amount,
        }
    }
}

mod holders_and_funds;
mod reservations_and_fees;
mod transfers_and_volume;
