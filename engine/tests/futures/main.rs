//! Futures rules: margin reservation and checks, positions (add, partial close, flip),
//! PnL and fees in USD, reduce-only, mark price and its collar, funding (sign, exact
//! zero sum, schedule), de-risk entry and exit, liquidation, expiry, and replay.

#![warn(clippy::too_many_lines)]

#[path = "../common/mod.rs"]
mod common;

use common::refuse;
use matchbook::{
    AccountId, Command, Engine, EngineError, Event, EventRecord, InstrumentId, InstrumentState,
    NewOrder, Price, Qty, Side, TimeInForce, Timestamp,
};

const PERP: InstrumentId = InstrumentId(5);
const DATED: InstrumentId = InstrumentId(6);
/// 2026-01-01T00:00:00Z.
const T0: i64 = 1_767_225_600_000_000_000;
const MINUTE: i64 = 60_000_000_000;
/// USD balance units (8 decimals).
const USD: i64 = 100_000_000;

/// A perp price (1 decimal).
fn px(whole: i64) -> Price {
    Price(whole * 10)
}

/// A perp amount in BTC thousandths (4 decimals: 0.001 BTC = 10 lots).
fn milli(n: i64) -> Qty {
    Qty(n * 10)
}

struct World {
    engine: Engine,
    events: Vec<EventRecord>,
    now: i64,
}

impl World {
    fn new() -> Self {
        let mut w = Self {
            engine: Engine::new(matchbook::demo::config()).expect("demo"),
            events: Vec::new(),
            now: T0,
        };
        w.run(Command::AdvanceTime).expect("start the clock");
        w
    }

    /// Quotes around 61,000 (`bidder` bids 60,990, `asker` asks 61,010) against an index
    /// of 60,000: the mark stands above the index, so the funding premium is positive.
    fn quote_above_index(&mut self, bidder: AccountId, asker: AccountId) {
        self.quote(bidder, px(60_990), asker, px(61_010), px(60_000));
    }

    /// A bid and an ask of 0.01 each, then the index price.
    fn quote(&mut self, bidder: AccountId, bid: Price, asker: AccountId, ask: Price, index: Price) {
        let bid = self.order(bidder, Side::Buy, bid, milli(10));
        self.place(bid).expect("bid");
        let ask = self.order(asker, Side::Sell, ask, milli(10));
        self.place(ask).expect("ask");
        self.run(Command::SetIndexPrice {
            instrument: PERP,
            price: index,
        })
        .expect("index");
    }

    fn run(&mut self, command: Command) -> Result<matchbook::Applied, EngineError> {
        self.events.clear();
        self.engine
            .apply(&command, Timestamp(self.now), &mut self.events)
    }

    fn trader(&mut self, usd: i64) -> AccountId {
        let account = self
            .run(Command::CreateHolder)
            .expect("holder")
            .account
            .expect("main");
        let usd_id = self.engine.currency_by_code("USD").expect("USD");
        self.run(Command::Deposit {
            account,
            currency: usd_id,
            amount: usd * USD,
        })
        .expect("deposit");
        account
    }

    fn order(&mut self, account: AccountId, side: Side, price: Price, amount: Qty) -> NewOrder {
        let _ = self;
        NewOrder::limit(account, PERP, side, price, amount)
    }

    fn place(&mut self, o: NewOrder) -> Result<matchbook::Applied, EngineError> {
        self.run(Command::PlaceOrder(o))
    }

    fn cash(&self, account: AccountId) -> (i64, i64) {
        let usd = self.engine.currency_by_code("USD").expect("USD");
        let b = self
            .engine
            .account(account)
            .expect("account")
            .balances
            .get(usd);
        (b.available, b.locked)
    }

    fn size(&self, account: AccountId) -> i64 {
        self.engine
            .positions(account)
            .iter()
            .find(|p| p.instrument == PERP)
            .map_or(0, |p| p.size)
    }

    /// A maker and a taker trade `amount` at `price`: the maker rests, the taker crosses.
    fn trade(&mut self, maker: AccountId, taker: AccountId, side: Side, price: Price, amount: Qty) {
        let rest = self.order(maker, side.opposite(), price, amount);
        self.place(rest).expect("maker");
        let take = self.order(taker, side, price, amount);
        self.place(take).expect("taker");
        assert!(
            self.events
                .iter()
                .any(|e| matches!(e.event, Event::Trade(_))),
            "traded"
        );
    }

    /// Four traders with 10,000 USD each, the first long 0.1 BTC bought from the second
    /// at 60,000.
    fn traders_first_long(&mut self) -> [AccountId; 4] {
        let traders = [(); 4].map(|()| self.trader(10_000));
        self.trade(traders[1], traders[0], Side::Buy, px(60_000), milli(100));
        traders
    }

    fn open_interest_balanced(&self, accounts: &[AccountId]) {
        let sizes: i64 = accounts.iter().map(|&a| self.size(a)).sum();
        assert_eq!(sizes, 0, "long open interest equals short");
        let longs: i64 = accounts.iter().map(|&a| self.size(a).max(0)).sum();
        assert_eq!(
            self.engine.funding_view(PERP).expect("perp").open_interest,
            longs
        );
    }
}

mod margin_and_positions;
mod mark_and_funding;
mod risk_and_expiry;
