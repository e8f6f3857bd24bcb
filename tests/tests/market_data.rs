//! Market data against brute force over the raw event stream of a real (funded,
//! exchange-core) workload: trade-history pages taken while trades keep arriving neither skip
//! nor repeat a trade; order history agrees with the engine's open orders and with every
//! order's own trades; candle volumes and 24-hour tickers equal sums over the raw trades.

#![warn(clippy::too_many_lines)]

use matchbook::market::period::{Granularity, Unit};
use matchbook::market::query::DAY;
use matchbook::market::trades::TradeFilter;
use matchbook::market::{MarketData, MarketDataConfig};
use matchbook::{AccountId, Event, EventRecord, OrderStatus, Timestamp, Trade};
use matchbook_bench::workload::{self, EXCHANGE_CORE, INSTRUMENT};
use proptest::prelude::*;

/// Runs `n` commands `step_ns` apart; returns the engine, market data, every trade with its time, and the
/// cursors of an account's pages taken every `every` commands along the way.
struct Run {
    engine: matchbook::Engine,
    market: MarketData,
    trades: Vec<(Trade, Timestamp)>,
    paged: Vec<u64>,
}

fn run(seed: u64, n: usize, step_ns: i64, account: AccountId, page: usize, every: usize) -> Run {
    let w = workload::generate_funded(EXCHANGE_CORE, seed, n);
    let mut engine = w.prepared_engine();
    let mut market = MarketData::new(engine.instruments().len(), MarketDataConfig::default());
    let mut events: Vec<EventRecord> = Vec::new();
    let mut trades = Vec::new();
    let mut paged = Vec::new();
    let mut cursor: Option<u64> = None;
    let mut started = false;
    for (i, command) in w.commands.iter().enumerate() {
        events.clear();
        // Commands spaced `step_ns` apart so the stream spans many candle periods and more
        // than a day.
        let time = Timestamp(workload::START.0 + (w.setup.len() + i) as i64 * step_ns);
        let _ = engine.apply(command, time, &mut events);
        market.on_events(&events);
        for e in &events {
            if let Event::Trade(t) = e.event {
                trades.push((t, e.time));
            }
        }
        // Page backwards through the account's history while new trades keep arriving.
        if i % every == every - 1 && (!started || cursor.is_some()) {
            let now = engine.now();
            let filter = TradeFilter {
                from: Timestamp(now.0 - 29 * DAY),
                to: now,
                instruments: None,
                max_page_size: page,
                cursor,
            };
            let got = market
                .trades()
                .account_page(account, &filter)
                .expect("page");
            paged.extend(got.trades.iter().map(|t| t.trade.id.0));
            cursor = got.cursor;
            started = true;
            if cursor.is_none() {
                break;
            }
        }
    }
    Run {
        engine,
        market,
        trades,
        paged,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Pages taken while trades keep arriving: their union is exactly the account's trades
    /// up to the first page's newest one, newest first, none skipped or repeated.
    #[test]
    fn paging_under_concurrent_arrivals(seed in 1u64..1_000, account in 0u32..50, page in 1usize..8, every in 50usize..400) {
        let account = AccountId(account);
        let r = run(seed, 30_000, 50_000_000, account, page, every);
        let Some(&first) = r.paged.first() else { return Ok(()) };
        let mut want: Vec<u64> = r
            .trades
            .iter()
            .filter(|(t, _)| (t.maker_account == account || t.taker_account == account) && t.id.0 <= first)
            .map(|(t, _)| t.id.0)
            .collect();
        want.reverse();
        let got = r.paged;
        // Paging stops when the stream ends; compare the part that was paged.
        prop_assert_eq!(&want[..got.len().min(want.len())], &got[..]);
    }
}

#[test]
fn order_history_agrees_with_the_engine_and_with_trades() {
    let r = run(11, 40_000, 1_000_000_000, AccountId(0), 100, usize::MAX);
    check_open_orders(&r);
    assert!(check_orders_sum_their_trades(&r) > 100);
}

/// Each account's open orders, as history lists them (a day back), are the engine's, with
/// the engine's filled amounts and an open status.
fn check_open_orders(r: &Run) {
    let now = r.engine.now();
    for a in 0..40u32 {
        let account = AccountId(a);
        let open: Vec<u64> = r
            .engine
            .open_orders(account)
            .iter()
            .map(|o| o.handle().id)
            .collect();
        let filter = matchbook::market::orders::OrderFilter {
            from: Timestamp(now.0 - DAY),
            to: now,
            instrument: None,
            with_cancelled_and_rejected: false,
            with_just_filled_inactive: false,
            max_page_size: 100,
            cursor: None,
        };
        let mut listed: Vec<u64> = r
            .market
            .orders()
            .page(account, &filter)
            .expect("page")
            .orders
            .iter()
            .map(|o| o.accepted.order.id)
            .collect();
        listed.reverse();
        assert_eq!(listed, open, "open orders of account {a}");
        for id in open {
            let record = r
                .market
                .orders()
                .by_id(account, id, now)
                .expect("open order");
            let live = r.engine.order(record.accepted.order).expect("live");
            assert_eq!(
                (record.filled, record.status),
                (live.filled(), OrderStatus::Open)
            );
        }
    }
}

/// Every order's filled amount, fees, trades and status are those of its trades (up to
/// about 2,000 orders); how many were checked.
fn check_orders_sum_their_trades(r: &Run) -> usize {
    let mut checked = 0;
    for (t, _) in &r.trades {
        for (account, id) in [(t.maker_account, t.maker.id), (t.taker_account, t.taker.id)] {
            let Some(record) = r.market.orders().get(account, id) else {
                continue;
            };
            let mine: Vec<&Trade> = r
                .trades
                .iter()
                .map(|x| &x.0)
                .filter(|x| x.maker.id == id || x.taker.id == id)
                .collect();
            assert_eq!(
                record.filled.0,
                mine.iter().map(|x| x.amount.0).sum::<i64>()
            );
            let fees: i64 = mine
                .iter()
                .map(|x| {
                    if x.maker.id == id {
                        x.maker_fee
                    } else {
                        x.taker_fee
                    }
                })
                .sum();
            assert_eq!(record.total_fee, fees);
            assert_eq!(record.trades.len(), mine.len());
            let filled_fully = mine.last().is_some_and(|x| {
                if x.maker.id == id {
                    x.maker_remaining.0 == 0
                } else {
                    x.taker_remaining.0 == 0
                }
            });
            assert_eq!(record.status == OrderStatus::FilledFully, filled_fully);
            checked += 1;
        }
        if checked > 2_000 {
            break;
        }
    }
    checked
}

#[test]
fn candles_and_ticker_equal_sums_over_the_raw_trades() {
    // 60,000 commands two seconds apart: about 33 hours, so the ticker's window edge is crossed.
    let r = run(5, 60_000, 2_000_000_000, AccountId(0), 100, usize::MAX);
    assert!(
        r.trades
            .first()
            .is_some_and(|(_, t)| t.0 < r.engine.now().0 - DAY)
    );
    let now = r.engine.now();
    let minute = Granularity::new(Unit::Minutes, 1).expect("offered");
    let from = Timestamp(now.0 - 3 * 3_600_000_000_000);
    let candles = r
        .market
        .candles(INSTRUMENT, minute, from, now, None)
        .expect("candles");
    assert_eq!(
        candles.len(),
        181,
        "three hours of minutes, both ends included"
    );
    let traded = candles.iter().filter(|c| c.volume > 0).count();
    assert!(
        traded > 50 && traded < 181,
        "some minutes traded, some did not: {traded}"
    );
    for c in &candles {
        let inside: Vec<&Trade> = r
            .trades
            .iter()
            .filter(|(_, t)| *t >= c.start && *t < c.end)
            .map(|x| &x.0)
            .collect();
        assert_eq!(
            c.total_amount,
            inside.iter().map(|t| t.amount.0).sum::<i64>()
        );
        assert_eq!(
            c.volume,
            inside
                .iter()
                .map(|t| t.price.notional(t.amount).0)
                .sum::<i128>()
        );
        if let (Some(first), Some(last)) = (inside.first(), inside.last()) {
            assert_eq!((c.open, c.close), (first.price.0, last.price.0));
            assert_eq!(c.high, inside.iter().map(|t| t.price.0).max().unwrap_or(0));
            assert_eq!(c.low, inside.iter().map(|t| t.price.0).min().unwrap_or(0));
        }
    }
    let ticker = r.market.ticker(INSTRUMENT, now).expect("ticker");
    let day: Vec<&Trade> = r
        .trades
        .iter()
        .filter(|(_, t)| t.0 > now.0 - DAY)
        .map(|x| &x.0)
        .collect();
    assert_eq!(ticker.stats.trades, day.len());
    assert_eq!(
        ticker.stats.base_volume,
        day.iter().map(|t| t.amount.0).sum::<i64>()
    );
    assert_eq!(ticker.stats.last, day.last().map_or(0, |t| t.price.0));
    assert_eq!(
        ticker.stats.high,
        day.iter().map(|t| t.price.0).max().unwrap_or(0)
    );
    let (bid, ask) = r.engine.best_bid_ask(INSTRUMENT).expect("book");
    assert_eq!((ticker.highest_bid, ticker.lowest_ask), (bid, ask));
}

/// Candles asked for any span a caller can name, the ends of `i64` included (C's
/// `mb_engine_candles` and Python's `candles` pass times through): each granularity
/// answers the candles that exist, at most `MAX_CANDLES`, without overflowing its period
/// arithmetic (it panicked: `start_of(i64::MIN)` multiplied past the end); a span wholly
/// before 1970 has none.
#[test]
fn candles_over_any_span_answer_without_overflow() {
    use matchbook::market::period::GRANULARITIES;
    let r = run(7, 2_000, 2_000_000_000, AccountId(0), 100, usize::MAX);
    let now = r.engine.now();
    let spans = [
        (Timestamp(i64::MIN), Timestamp(i64::MAX)),
        (Timestamp(i64::MIN), now),
        (now, Timestamp(i64::MAX)),
        (Timestamp(i64::MIN), Timestamp(i64::MIN + 1)),
        (Timestamp(i64::MAX - 1), Timestamp(i64::MAX)),
    ];
    for &granularity in GRANULARITIES.iter() {
        let newest = (r.market)
            .candles(INSTRUMENT, granularity, now, now, None)
            .expect("candles");
        assert_eq!(newest.len(), 1, "{granularity:?}: the candle of now");
        for (from, to) in spans {
            let candles = (r.market)
                .candles(INSTRUMENT, granularity, from, to, None)
                .expect("candles");
            assert!(candles.len() <= matchbook::market::MAX_CANDLES);
            assert!(
                candles
                    .iter()
                    .all(|c| c.start >= Timestamp(0) && c.start <= to),
                "{granularity:?} {from:?}..{to:?}"
            );
            if to < Timestamp(0) {
                assert!(candles.is_empty(), "{granularity:?}: none before 1970");
            }
        }
    }
}

/// Funding payments leave with the retention window, as trades do: at each settlement
/// those made more than the window before it are forgotten (they were kept for ever,
/// growing with positions times settlements), and newer ones stay.
#[test]
fn funding_payments_leave_with_the_retention_window() {
    use matchbook::market::futures::PaymentFilter;
    use matchbook::{InstrumentId, Price};
    let config = MarketDataConfig::default();
    let mut market = MarketData::new(2, config);
    let (account, perp) = (AccountId(3), InstrumentId(1));
    let mut seq = 0;
    let mut settle = |market: &mut MarketData, day: i64| {
        let time = Timestamp(day * DAY);
        let mut record = |event| {
            seq += 1;
            EventRecord { seq, time, event }
        };
        let events = [
            record(Event::FundingPaid {
                account,
                instrument: perp,
                position_id: 1,
                rate: 10,
                mark: Price(100),
                payment: -day,
                cash_balance: 0,
            }),
            record(Event::FundingSettled {
                instrument: perp,
                rate: 10,
                mark: Price(100),
            }),
        ];
        market.on_events(&events);
    };
    let days = [1, 2, 20, 33, 40];
    for day in days {
        settle(&mut market, day);
    }
    let (kept, _) = market.futures().payments(
        account,
        Timestamp(0),
        Timestamp(41 * DAY),
        PaymentFilter::default(),
        usize::MAX,
    );
    let retention = config.trade_retention_days;
    let want: Vec<i64> = (days.iter().rev())
        .filter(|&&day| day >= 40 - retention)
        .map(|&day| -day)
        .collect();
    assert_eq!(kept.iter().map(|p| p.payment).collect::<Vec<_>>(), want);
    assert_eq!(want.len(), 3, "days 20, 33 and 40 stay");
}
