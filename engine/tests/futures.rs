//! Futures rules: margin reservation and checks, positions (add, partial close, flip),
//! PnL and fees in USD, reduce-only, mark price and its collar, funding (sign, exact
//! zero sum, schedule), de-risk entry and exit, liquidation, expiry, and replay.

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

#[test]
fn orders_reserve_initial_margin_in_usd_and_are_refused_beyond_it() {
    let mut w = World::new();
    let a = w.trader(1_000);
    // 0.1 BTC at 60,000: 6,000 USD notional, 10 % initial margin = 600 USD.
    let o = w.order(a, Side::Buy, px(60_000), milli(100));
    w.place(o).expect("within margin");
    assert_eq!(w.cash(a), (400 * USD, 600 * USD));
    let summary = w.engine.futures_summary(a).expect("account");
    assert_eq!(summary.margin.used(), 600 * i128::from(USD));
    assert_eq!(summary.margin.available(), 400 * i128::from(USD));
    // 0.1 BTC more needs another 600 USD: refused, nothing changes.
    let o = w.order(a, Side::Sell, px(70_000), milli(100));
    let mut events = Vec::new();
    refuse(
        &mut w.engine,
        &mut events,
        T0 + 1,
        Command::PlaceOrder(o),
        EngineError::InsufficientFunds,
    );
    // Cancelling releases the margin.
    w.run(Command::CancelAll {
        account: a,
        scope: matchbook::CancelScope::All,
    })
    .expect("cancel");
    assert_eq!(w.cash(a), (1_000 * USD, 0));
    assert_eq!(
        w.engine.futures_summary(a).expect("a").margin.order_margin,
        0
    );
}

#[test]
fn fills_move_positions_and_realise_pnl_and_fees_in_usd() {
    let mut w = World::new();
    let (long, short) = (w.trader(10_000), w.trader(10_000));
    w.trade(short, long, Side::Buy, px(60_000), milli(100));
    assert_eq!((w.size(long), w.size(short)), (1_000, -1_000));
    let p = w.engine.positions(long)[0];
    assert_eq!(p.entry_price, px(60_000));
    // Fees: taker 0.05 % and maker 0.02 % of 6,000 USD.
    assert_eq!(w.cash(long), (10_000 * USD - 3 * USD, 0));
    assert_eq!(w.cash(short), (10_000 * USD - USD * 12 / 10, 0));
    w.open_interest_balanced(&[long, short]);

    // The long sells half at 61,000: +50 USD realised, less the taker fee.
    w.trade(short, long, Side::Sell, px(61_000), milli(50));
    assert_eq!(w.size(long), 500);
    let fee = 3_050 * USD * 5 / 10_000;
    assert_eq!(w.cash(long).0, 10_000 * USD - 3 * USD + 50 * USD - fee);
    let changed = w
        .events
        .iter()
        .find_map(|e| match e.event {
            Event::PositionChanged {
                account,
                size,
                realised,
                ..
            } if account == long => Some((size, realised)),
            _ => None,
        })
        .expect("position event");
    assert_eq!(changed, (500, 50 * USD - fee));

    // Flip: the long sells 0.15 BTC at 59,000: closes 0.05 (-50 USD) and opens a 0.1 short
    // with a new position number.
    let before = w.engine.positions(long)[0].position_id;
    w.trade(short, long, Side::Sell, px(59_000), milli(150));
    let after = w.engine.positions(long)[0];
    assert_eq!(after.size, -1_000);
    assert_eq!(after.entry_price, px(59_000));
    assert_ne!(after.position_id, before, "a flip opens a new position");
    w.open_interest_balanced(&[long, short]);
}

#[test]
fn reduce_only_never_opens_or_adds() {
    let mut w = World::new();
    let (a, b) = (w.trader(10_000), w.trader(10_000));
    let reduce = |o: NewOrder| NewOrder {
        reduce_only: true,
        ..o.with_tif(TimeInForce::ImmediateOrCancelled)
    };
    let flat = reduce(w.order(a, Side::Sell, px(60_000), milli(10)));
    assert_eq!(w.place(flat), Err(EngineError::ReduceOnlyWouldIncrease));
    w.trade(b, a, Side::Buy, px(60_000), milli(100));
    let adds = reduce(w.order(a, Side::Buy, px(60_000), milli(10)));
    assert_eq!(w.place(adds), Err(EngineError::ReduceOnlyWouldIncrease));
    let too_big = reduce(w.order(a, Side::Sell, px(60_000), milli(101)));
    assert_eq!(w.place(too_big), Err(EngineError::ReduceOnlyWouldIncrease));
    let spot = NewOrder {
        reduce_only: true,
        instrument: InstrumentId(0),
        ..reduce(w.order(a, Side::Sell, Price(6_000_000), Qty(1_000)))
    };
    assert_eq!(w.place(spot), Err(EngineError::ReduceOnlyWouldIncrease));
    // A reduce-only order within the position reserves nothing and reduces it.
    let bid = w.order(b, Side::Buy, px(60_000), milli(40));
    w.place(bid).expect("bid");
    let ok = reduce(w.order(a, Side::Sell, px(60_000), milli(40)));
    w.place(ok).expect("reduces");
    assert_eq!(w.size(a), 600);
}

#[test]
fn a_resting_reduce_only_order_fills_only_what_is_left_of_the_position() {
    let mut w = World::new();
    let (a, b, c) = (w.trader(10_000), w.trader(10_000), w.trader(10_000));
    w.trade(b, a, Side::Buy, px(60_000), milli(100));
    // A take-profit for the whole long rests above the market.
    let take_profit = NewOrder {
        reduce_only: true,
        ..w.order(a, Side::Sell, px(62_000), milli(100))
    };
    w.place(take_profit).expect("rests");
    assert_eq!(w.cash(a).1, 0, "reduce-only reserves no margin");
    // Meanwhile the long is mostly closed by another sale.
    w.trade(c, a, Side::Sell, px(61_000), milli(70));
    assert_eq!(w.size(a), 300);
    // A buyer lifts the take-profit for 0.1 BTC: only the 0.03 left may fill.
    let lift = w.order(c, Side::Buy, px(62_000), milli(100));
    w.place(lift).expect("taker");
    assert_eq!(w.size(a), 0, "closed, never short");
    assert!(w.events.iter().any(|e| matches!(
        e.event,
        Event::Trade(t) if t.maker_account == a && t.amount == milli(30)
    )));
    assert!(
        w.engine.open_orders(a).is_empty(),
        "the rest of the take-profit is gone"
    );
    assert_eq!(
        w.size(c),
        milli(100).0,
        "the buyer got 0.07 + 0.03; its rest waits"
    );
    // A reduce-only taker stops at flat too.
    w.run(Command::CancelAll {
        account: c,
        scope: matchbook::CancelScope::All,
    })
    .expect("clear the buyer's rest");
    w.trade(b, a, Side::Buy, px(60_000), milli(20));
    let bid = w.order(b, Side::Buy, px(59_000), milli(100));
    w.place(bid).expect("bid");
    let close = NewOrder {
        reduce_only: true,
        ..w.order(a, Side::Sell, px(59_000), milli(20))
    };
    w.place(close).expect("reduces");
    assert_eq!(w.size(a), 0);
    assert!(w.engine.open_orders(a).is_empty());
}

/// A resting reduce-only order offers only what is left of its position: a fill-or-kill
/// taker that needs more than that from it is refused whole, never filled in part.
#[test]
fn fill_or_kill_counts_a_reduce_only_maker_for_its_position_only() {
    let mut w = World::new();
    let [a, _, c, d] = w.traders_first_long();
    let take_profit = NewOrder {
        reduce_only: true,
        ..w.order(a, Side::Sell, px(62_000), milli(100))
    };
    w.place(take_profit).expect("rests");
    w.trade(c, a, Side::Sell, px(61_000), milli(70));
    // 0.05 from d, then 0.03 from a's take-profit: 0.08 of the 0.1 wanted.
    let ask = w.order(d, Side::Sell, px(61_500), milli(50));
    w.place(ask).expect("ask");
    let fok = w
        .order(c, Side::Buy, px(62_000), milli(100))
        .with_tif(TimeInForce::FillOrKill);
    let applied = w.place(fok).expect("accepted, then refused whole");
    assert_eq!(applied.rejected, Some(EngineError::InsufficientLiquidity));
    assert!(
        !w.events.iter().any(|e| matches!(e.event, Event::Trade(_))),
        "{:?}",
        w.events
    );
    // Wanting what is there, it fills.
    let fok = w
        .order(c, Side::Buy, px(62_000), milli(80))
        .with_tif(TimeInForce::FillOrKill);
    w.place(fok).expect("fills");
    assert_eq!(w.size(a), 0);
    assert_eq!(w.size(d), -milli(50).0);
}

/// A reduce-only stop is checked against its position when it fires, and may then find
/// less left than its amount: as a fill-or-kill order it is refused whole, not filled up
/// to flat.
#[test]
fn a_reduce_only_fill_or_kill_stop_wanting_more_than_its_position_is_refused_whole() {
    let mut w = World::new();
    let [a, _, c, d] = w.traders_first_long();
    let stop = NewOrder {
        order_type: matchbook::OrderType::Stop,
        trigger_price: Some(px(59_000)),
        reduce_only: true,
        ..w.order(a, Side::Sell, px(58_000), milli(100))
    }
    .with_tif(TimeInForce::FillOrKill);
    w.place(stop).expect("held");
    w.trade(c, a, Side::Sell, px(61_000), milli(70));
    let bid = w.order(c, Side::Buy, px(58_500), milli(200));
    w.place(bid).expect("bid");
    // A trade at 58,900 fires the stop: 0.03 of the long is left for its 0.1.
    w.trade(c, d, Side::Sell, px(58_900), milli(10));
    assert!(w.events.iter().any(|e| matches!(
        e.event,
        Event::OrderCancelled {
            reason: matchbook::CancelReason::FillOrKillUnfilled,
            ..
        }
    )));
    assert!(
        !w.events
            .iter()
            .any(|e| matches!(e.event, Event::Trade(t) if t.taker_account == a)),
        "{:?}",
        w.events
    );
    assert_eq!(w.size(a), milli(30).0);
}

#[test]
fn mark_price_is_the_mid_clamped_to_the_collar_around_the_index() {
    let mut w = World::new();
    let (a, b) = (w.trader(100_000), w.trader(100_000));
    let bid = w.order(a, Side::Buy, px(59_000), milli(10));
    w.place(bid).expect("bid");
    let ask = w.order(b, Side::Sell, px(61_000), milli(10));
    w.place(ask).expect("ask");
    assert_eq!(
        w.engine.funding_view(PERP).expect("perp").mark_price,
        Some(px(60_000))
    );
    w.run(Command::SetIndexPrice {
        instrument: PERP,
        price: px(50_000),
    })
    .expect("index");
    // 5 % collar around 50,000: at most 52,500.
    assert_eq!(
        w.engine.funding_view(PERP).expect("perp").mark_price,
        Some(px(52_500))
    );
    assert_eq!(
        w.run(Command::SetIndexPrice {
            instrument: InstrumentId(0),
            price: px(1),
        }),
        Err(EngineError::NotFutures)
    );
}

/// A book left far from a fallen index: fills must stay within what the taker's margin
/// covers (a fuzz finding: a market buy margined at the collared mark of 0.10 USD filled
/// at 53,040 and its fee took its cash below zero).
#[test]
fn takers_on_a_book_far_from_the_index_never_overdraw_their_cash() {
    let mut w = World::new();
    let (maker, taker) = (w.trader(100_000), w.trader(2));
    // The index at the bottom of its range.
    w.quote(maker, px(53_000), maker, px(53_040), Price(1));

    // A market buy matches only up to the collar above the mark: nothing here.
    let buy = NewOrder {
        order_type: matchbook::OrderType::Market,
        price: None,
        time_in_force: TimeInForce::ImmediateOrCancelled,
        ..w.order(taker, Side::Buy, px(1), milli(1))
    };
    w.place(buy)
        .expect("a market buy within its margin is accepted");
    assert!(
        !w.events.iter().any(|e| matches!(e.event, Event::Trade(_))),
        "no fill beyond the collar: {:?}",
        w.events
    );
    assert_eq!(
        w.cash(taker),
        (2 * USD, 0),
        "nothing charged, nothing left locked"
    );

    // A sell priced at the bottom would fill at the best bid: it is margined there.
    let sell = w.order(taker, Side::Sell, Price(1), milli(100_000));
    let now = w.now;
    refuse(
        &mut w.engine,
        &mut w.events,
        now,
        Command::PlaceOrder(sell),
        EngineError::InsufficientFunds,
    );
    assert_eq!(w.cash(taker), (2 * USD, 0));
    assert_eq!(w.size(taker), 0);
}

fn funding_payments(events: &[EventRecord]) -> Vec<(AccountId, i64)> {
    events
        .iter()
        .filter_map(|e| match e.event {
            Event::FundingPaid {
                account, payment, ..
            } => Some((account, payment)),
            _ => None,
        })
        .collect()
}

/// A long that cannot pay its funding pays what it has, never more (a fuzz finding: one
/// `AdvanceTime` over five weeks settled 219 periods at the cap and drove its cash below
/// zero); the short receives exactly what was paid.
#[test]
fn funding_never_takes_cash_below_zero_and_still_sums_to_zero() {
    let mut w = World::new();
    let (s, l) = (w.trader(100_000), w.trader(700));
    w.trade(s, l, Side::Buy, px(60_000), milli(100));
    w.quote_above_index(s, s);
    let total = |w: &World| w.cash(s).0 + w.cash(s).1 + w.cash(l).0 + w.cash(l).1;
    let before = total(&w);
    // 0.75 % of about 6,100 USD is about 46 USD per period: 700 USD lasts about 15.
    w.now = T0 + 40 * 240 * MINUTE;
    w.run(Command::AdvanceTime).expect("time");
    let paid = funding_payments(&w.events);
    assert!(paid.len() >= 60, "40 periods settled: {}", paid.len());
    assert_eq!(paid.iter().map(|p| p.1).sum::<i64>(), 0, "zero sum");
    let (available, locked) = w.cash(l);
    assert!(
        available >= 0 && locked >= 0,
        "long's cash {available} {locked}"
    );
    assert_eq!(available, 0, "the long paid all it had");
    assert_eq!(total(&w), before, "cash conserved between the two");
}

#[test]
fn funding_settles_on_schedule_longs_pay_when_positive_and_sums_to_zero() {
    let mut w = World::new();
    let (s, l1, l2) = (w.trader(100_000), w.trader(100_000), w.trader(100_000));
    w.trade(s, l1, Side::Buy, px(60_000), milli(70));
    w.trade(s, l2, Side::Buy, px(60_000), milli(30));
    w.quote_above_index(l1, s);
    let view = w.engine.funding_view(PERP).expect("perp");
    let next = view.next_settlement.expect("perp has funding");
    assert_eq!(
        next,
        Timestamp(T0 + 240 * MINUTE),
        "FIXED_INTERVAL 240 from midnight"
    );
    assert!(view.funding_rate > 0);
    let cash_before: Vec<i64> = [s, l1, l2].iter().map(|&a| w.cash(a).0).collect();
    w.now = T0 + 240 * MINUTE;
    w.run(Command::AdvanceTime).expect("time");
    let paid = funding_payments(&w.events);
    assert_eq!(paid.len(), 3);
    assert_eq!(paid.iter().map(|p| p.1).sum::<i64>(), 0, "zero sum");
    let of = |a| paid.iter().find(|p| p.0 == a).map_or(0, |p| p.1);
    assert!(
        of(l1) < 0 && of(l2) < 0 && of(s) > 0,
        "longs pay shorts: {paid:?}"
    );
    assert!(of(l1) < of(l2), "the bigger long pays more");
    // The capped rate (0.75 %) of 6,100 x 0.07 BTC... in any case the cash moved by it.
    for (i, &a) in [s, l1, l2].iter().enumerate() {
        assert_eq!(w.cash(a).0, cash_before[i] + of(a));
    }
    let settled = w
        .events
        .iter()
        .find_map(|e| match e.event {
            Event::FundingSettled { rate, .. } => Some(rate),
            _ => None,
        })
        .expect("settled");
    assert!(
        settled > 0 && settled <= 750_000,
        "capped at 0.75 %: {settled}"
    );
    // Nothing more until the next period.
    w.now += 239 * MINUTE;
    w.run(Command::AdvanceTime).expect("time");
    assert!(funding_payments(&w.events).is_empty());
    w.now += MINUTE;
    w.run(Command::AdvanceTime).expect("time");
    assert_eq!(funding_payments(&w.events).len(), 3);
}

#[test]
fn negative_premium_makes_shorts_pay() {
    let mut w = World::new();
    let (s, l) = (w.trader(100_000), w.trader(100_000));
    w.trade(s, l, Side::Buy, px(60_000), milli(100));
    w.run(Command::SetIndexPrice {
        instrument: PERP,
        price: px(62_000),
    })
    .expect("index");
    w.now = T0 + 240 * MINUTE;
    w.run(Command::AdvanceTime).expect("time");
    let paid = funding_payments(&w.events);
    let of = |a| paid.iter().find(|p| p.0 == a).map_or(0, |p| p.1);
    assert!(of(s) < 0 && of(l) > 0, "{paid:?}");
    assert_eq!(of(s) + of(l), 0);
}

#[test]
fn equity_below_maintenance_enters_derisk_and_liquidation_closes_the_position() {
    let mut w = World::new();
    let (long, maker) = (w.trader(700), w.trader(100_000));
    w.trade(maker, long, Side::Buy, px(60_000), milli(100));
    assert!(!w.engine.futures_summary(long).expect("a").derisk);
    // Index to 55,000: the mark (last trade, clamped to 52,250..57,750) falls to 57,750
    // and the long loses 225 USD of its ~697: still above 5 % maintenance (289 USD).
    w.run(Command::SetIndexPrice {
        instrument: PERP,
        price: px(55_000),
    })
    .expect("index");
    assert!(!w.engine.futures_summary(long).expect("a").derisk);
    // Index to 50,000: mark 52,500, loss 750 USD: equity below maintenance.
    w.run(Command::SetIndexPrice {
        instrument: PERP,
        price: px(50_000),
    })
    .expect("index");
    assert!(
        w.events.iter().any(
            |e| matches!(e.event, Event::DeriskChanged { account, on: true } if account == long)
        )
    );
    let summary = w.engine.futures_summary(long).expect("a");
    assert!(summary.derisk);
    assert!(summary.margin.equity() < summary.margin.maintenance);
    // In de-risk: no risk-increasing orders, no transfers out.
    let more = w.order(long, Side::Buy, px(52_000), milli(1));
    assert_eq!(w.place(more), Err(EngineError::AccountInDerisk));
    // Liquidation sells into the book.
    let bid = w.order(maker, Side::Buy, px(52_500), milli(100));
    w.place(bid).expect("bid");
    w.run(Command::Liquidate { account: long })
        .expect("liquidate");
    assert_eq!(w.size(long), 0);
    assert!(
        w.events.iter().any(
            |e| matches!(e.event, Event::DeriskChanged { account, on: false } if account == long)
        ),
        "flat again: de-risk lifted"
    );
    w.open_interest_balanced(&[long, maker]);
}

#[test]
fn dated_futures_expire_cancel_orders_and_settle_positions() {
    let mut w = World::new();
    let (a, b) = (w.trader(100_000), w.trader(100_000));
    let ask = NewOrder::limit(a, DATED, Side::Sell, px(60_000), milli(100));
    w.place(ask).expect("ask");
    let bid = NewOrder::limit(b, DATED, Side::Buy, px(60_000), milli(100));
    w.place(bid).expect("bid");
    let resting = NewOrder::limit(a, DATED, Side::Sell, px(65_000), milli(10));
    w.place(resting).expect("rests");
    w.run(Command::SetIndexPrice {
        instrument: DATED,
        price: px(61_000),
    })
    .expect("index");
    // 2027-03-26T00:00:00Z.
    w.now = T0 + (365 + 31 + 28 + 25) * 86_400_000_000_000;
    w.run(Command::AdvanceTime).expect("time");
    assert!(w.events.iter().any(|e| matches!(
        e.event,
        Event::OrderCancelled {
            reason: matchbook::CancelReason::InstrumentClosed,
            ..
        }
    )));
    assert_eq!(
        w.engine.instrument(DATED).expect("dated").state,
        InstrumentState::Closed
    );
    assert!(w.engine.positions(a).is_empty() && w.engine.positions(b).is_empty());
    // Settled at the mark: the book's last trade 60,000 clamped around 61,000 -> 60,000.
    let realised: Vec<i64> = w
        .events
        .iter()
        .filter_map(|e| match e.event {
            Event::PositionChanged { realised, .. } => Some(realised),
            _ => None,
        })
        .collect();
    assert_eq!(realised.len(), 2);
    assert_eq!(
        realised.iter().sum::<i64>(),
        0,
        "settled at one price, no fee"
    );
    assert_eq!(
        w.place(NewOrder::limit(a, DATED, Side::Sell, px(60_000), milli(1))),
        Err(EngineError::InstrumentNotTrading)
    );
}

#[test]
fn amends_need_margin_available_not_just_free_cash() {
    let mut w = World::new();
    let (a, b) = (w.trader(1_000), w.trader(100_000));
    w.trade(b, a, Side::Buy, px(60_000), milli(100));
    // The position holds 600 USD of margin that is not locked: cash is ~997 available.
    let o = w.order(a, Side::Buy, px(50_000), milli(10));
    w.place(o).expect("50 USD of margin fits");
    let resting = w.engine.open_orders(a)[0].handle();
    let mut events = Vec::new();
    // To 0.1 BTC: 450 USD more, within the cash but beyond the ~347 USD of free margin.
    refuse(
        &mut w.engine,
        &mut events,
        T0 + 2,
        Command::AmendOrder {
            account: a,
            order: resting,
            amount: Some(milli(100)),
            price: None,
        },
        EngineError::InsufficientFunds,
    );
    w.run(Command::AmendOrder {
        account: a,
        order: resting,
        amount: Some(milli(50)),
        price: None,
    })
    .expect("200 USD more fits");
}

#[test]
fn transfers_out_keep_the_margin_positions_need() {
    let mut w = World::new();
    let (a, b) = (w.trader(1_000), w.trader(100_000));
    let holder = w.engine.holder_of(a).expect("holder");
    let sub = w
        .run(Command::CreateSubaccount {
            holder,
            name: "s".into(),
            kind: matchbook::AccountKind::Regular,
        })
        .expect("sub")
        .account
        .expect("sub");
    w.trade(b, a, Side::Buy, px(60_000), milli(100));
    // 600 USD initial margin held by the position; about 397 free.
    let usd = w.engine.currency_by_code("USD").expect("USD");
    let transfer = |amount| Command::Transfer {
        holder,
        source: a,
        destination: sub,
        currency: usd,
        amount,
    };
    assert!(matches!(
        w.run(transfer(500 * USD)),
        Err(EngineError::InsufficientBalance { .. })
    ));
    w.run(transfer(300 * USD)).expect("free margin moves");
}

#[test]
fn futures_replay_gives_the_same_state() {
    let run = || {
        let mut w = World::new();
        let (a, b, c) = (w.trader(50_000), w.trader(50_000), w.trader(50_000));
        w.trade(a, b, Side::Buy, px(60_000), milli(30));
        w.trade(c, a, Side::Buy, px(60_500), milli(50));
        w.run(Command::SetIndexPrice {
            instrument: PERP,
            price: px(60_100),
        })
        .expect("index");
        for step in 1..=5 {
            w.now = T0 + step * 97 * MINUTE;
            w.run(Command::AdvanceTime).expect("time");
        }
        w.engine.state_hash()
    };
    assert_eq!(run(), run());
}

#[test]
fn session_based_funding_splits_the_utc_day() {
    let mut config = matchbook::demo::config();
    let perp = config
        .instruments
        .iter_mut()
        .find(|i| i.code == "BTC_USD_PERP")
        .expect("perp");
    if let Some(terms) = &mut perp.futures {
        terms.funding_schedule = matchbook::FundingSchedule::SessionBased {
            calendar: "UTC".into(),
            max_periods_per_day: 2,
            split: "SESSION_MIDPOINT".into(),
        };
    }
    let mut engine = Engine::new(config).expect("valid");
    let mut events = Vec::new();
    engine
        .apply(
            &Command::AdvanceTime,
            Timestamp(T0 + 3_600_000_000_000),
            &mut events,
        )
        .expect("clock");
    let next = engine.funding_view(PERP).expect("perp").next_settlement;
    assert_eq!(
        next,
        Some(Timestamp(T0 + 12 * 60 * MINUTE)),
        "the session midpoint"
    );
    assert_eq!(engine.funding_view(PERP).expect("perp").period_minutes, 720);
    let mut bad = matchbook::demo::config();
    for i in &mut bad.instruments {
        if let Some(terms) = &mut i.futures {
            terms.funding_schedule =
                matchbook::FundingSchedule::FixedInterval { period_minutes: 7 };
        }
    }
    assert!(Engine::new(bad).is_err(), "a period must divide the day");
}

#[test]
fn de_risk_lifts_when_the_price_recovers() {
    let mut w = World::new();
    let (long, maker) = (w.trader(700), w.trader(100_000));
    w.trade(maker, long, Side::Buy, px(60_000), milli(100));
    w.run(Command::SetIndexPrice {
        instrument: PERP,
        price: px(50_000),
    })
    .expect("index");
    assert!(w.engine.futures_summary(long).expect("a").derisk);
    w.run(Command::SetIndexPrice {
        instrument: PERP,
        price: px(60_000),
    })
    .expect("index");
    assert!(w.events.iter().any(
        |e| matches!(e.event, Event::DeriskChanged { account, on: false } if account == long)
    ));
    assert!(!w.engine.futures_summary(long).expect("a").derisk);
    // An operator's de-risk is not lifted by the price.
    w.run(Command::SetDerisk {
        account: long,
        on: true,
    })
    .expect("manual");
    w.run(Command::SetIndexPrice {
        instrument: PERP,
        price: px(61_000),
    })
    .expect("index");
    assert!(w.engine.futures_summary(long).expect("a").derisk);
}

/// A long closed far past its bankruptcy price (the operator's liquidation into a book
/// that collapsed; a fuzz finding: the cash went below zero) costs the account all its cash
/// and no more; the exchange's USD fee pot absorbs the rest, so money is still conserved.
#[test]
fn a_loss_beyond_the_cash_empties_it_and_the_fee_pot_absorbs_the_rest() {
    let mut w = World::new();
    let (s, l, b) = (w.trader(100_000), w.trader(700), w.trader(100_000));
    w.trade(s, l, Side::Buy, px(60_000), milli(100));
    let bid = w.order(b, Side::Buy, px(30_000), milli(100));
    w.place(bid).expect("a bid far below");
    let usd = usize::from(w.engine.currency_by_code("USD").expect("USD").0);
    let pot = |w: &World| w.engine.fees_collected()[usd];
    let (cash_before, pot_before) = (w.cash(l).0 + w.cash(l).1, pot(&w));
    w.run(Command::Liquidate { account: l }).expect("liquidate");
    let trade = w
        .events
        .iter()
        .find_map(|e| match e.event {
            Event::Trade(t) => Some(t),
            _ => None,
        })
        .expect("the long was sold");
    assert_eq!((trade.price, trade.amount), (px(30_000), milli(100)));
    assert_eq!(w.size(l), 0);
    assert_eq!(w.cash(l), (0, 0), "all its cash, no more");
    // 0.1 BTC from 60,000 to 30,000: a 3,000 USD loss (plus the taker fee) against 700.
    let loss = 3_000 * USD;
    assert!(loss > cash_before);
    assert_eq!(
        pot(&w),
        pot_before + trade.maker_fee - (loss - cash_before),
        "the pot keeps the maker's fee and pays what the cash could not"
    );
}
