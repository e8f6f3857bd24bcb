//! History limits against unlimited history on the same real (funded, exchange-core)
//! event stream: the limited market data keeps exactly the newest trades and the newest
//! run of order numbers, every order still open wherever its number lies, and nothing it
//! keeps differs from the unlimited copy; it never holds more than its limit beside the
//! orders open at the time, while the unlimited one grows with the stream; its 24-hour
//! ticker covers the day's newest trades up to the limit. A restored history takes the
//! limits of the host restoring it (they are not in the snapshot).

#![warn(clippy::too_many_lines)]

use matchbook::market::{HistoryLimits, MarketData, MarketDataConfig};
use matchbook::{AccountId, Event, EventRecord, Timestamp, TradeId};
use matchbook_bench::workload::{self, EXCHANGE_CORE, INSTRUMENT};

const LIMITS: HistoryLimits = HistoryLimits {
    orders: 500,
    trades: 200,
};

struct Run {
    engine: matchbook::Engine,
    limited: MarketData,
    unlimited: MarketData,
    /// Every accepted order: (number, account).
    accepted: Vec<(u64, AccountId)>,
    newest_trade: u64,
    /// Most orders the limited copy held at any time beyond those open then.
    peak: usize,
}

fn run(seed: u64, n: usize) -> Run {
    let w = workload::generate_funded(EXCHANGE_CORE, seed, n);
    let mut engine = w.prepared_engine();
    let instruments = engine.instruments().len();
    let mut unlimited = MarketData::new(instruments, MarketDataConfig::default());
    let mut limited = MarketData::new(instruments, MarketDataConfig::default());
    limited.set_history_limits(LIMITS);
    let (mut events, mut accepted) = (Vec::<EventRecord>::new(), Vec::new());
    let (mut newest_trade, mut peak) = (0, 0);
    for (i, command) in w.commands.iter().enumerate() {
        events.clear();
        let time = Timestamp(workload::START.0 + (w.setup.len() + i) as i64 * 1_000_000);
        let _ = engine.apply(command, time, &mut events);
        unlimited.on_events(&events);
        limited.on_events(&events);
        for e in &events {
            match e.event {
                Event::OrderAccepted(a) => accepted.push((a.order.id, a.account)),
                Event::Trade(t) => newest_trade = t.id.0,
                _ => {}
            }
        }
        if i % 512 == 0 {
            // (Live orders include the set-up book, placed before history started.)
            peak = peak.max(
                limited
                    .orders()
                    .len()
                    .saturating_sub(engine.live_order_count()),
            );
        }
    }
    Run {
        engine,
        limited,
        unlimited,
        accepted,
        newest_trade,
        peak,
    }
}

/// Checks `limited` against the run's unlimited history.
fn check_against_unlimited(r: &Run, limited: &MarketData) {
    let trades = (limited.trades(), r.unlimited.trades());
    for id in 1..=r.newest_trade {
        let kept = trades.0.get(TradeId(id));
        if id + (LIMITS.trades as u64) > r.newest_trade {
            assert_eq!(
                kept,
                trades.1.get(TradeId(id)),
                "newest trade {id} kept as is"
            );
            assert!(kept.is_some(), "newest trade {id} kept");
        } else {
            assert!(kept.is_none(), "old trade {id} forgotten");
        }
    }
    let newest_order = r.accepted.last().map_or(0, |&(id, _)| id);
    for &(id, account) in &r.accepted {
        let kept = limited.orders().get(account, id);
        let full = r.unlimited.orders().get(account, id);
        let full = full.expect("the unlimited history keeps every order of the run");
        let in_window = id + (LIMITS.orders as u64) > newest_order;
        let open = (r.engine.open_orders(account).iter()).any(|o| o.handle().id == id);
        if in_window || open {
            assert_eq!(kept, Some(full), "order {id} (newest or open) kept as is");
        } else {
            // Ended, whether before its number was cut or since.
            assert!(kept.is_none(), "old ended order {id} forgotten");
        }
    }
}

#[test]
fn limited_history_keeps_the_newest_and_the_open_and_stays_near_its_limit() {
    let r = run(5, 40_000);
    assert!(
        r.newest_trade > 4 * LIMITS.trades as u64,
        "{} trades",
        r.newest_trade
    );
    assert!(
        r.accepted.len() > 8 * LIMITS.orders,
        "{} orders",
        r.accepted.len()
    );
    check_against_unlimited(&r, &r.limited);
    let now = r.engine.now();
    let ticker = |m: &MarketData| m.ticker(INSTRUMENT, now).expect("ticker").stats;
    let (limited, full) = (ticker(&r.limited), ticker(&r.unlimited));
    assert!(
        full.trades > LIMITS.trades,
        "{} trades in the day",
        full.trades
    );
    assert_eq!(
        limited.trades, LIMITS.trades,
        "the day's newest trades only"
    );
    assert_eq!(limited.last, full.last);
    assert!(limited.base_volume < full.base_volume);
    assert!(
        r.peak <= LIMITS.orders,
        "{} orders held beyond the open",
        r.peak
    );
    assert!(r.unlimited.orders().len() > 4 * r.peak);
}

#[test]
fn a_restored_history_takes_the_limits_of_its_host() {
    let r = run(6, 20_000);
    let bytes = postcard::to_stdvec(&r.unlimited).expect("encodes");
    let mut restored: MarketData = postcard::from_bytes(&bytes).expect("decodes");
    assert_eq!(
        restored.history_limits(),
        HistoryLimits::default(),
        "not in the snapshot"
    );
    restored.set_history_limits(LIMITS);
    let trades = restored.trades();
    assert!(trades.get(TradeId(r.newest_trade)).is_some());
    let oldest_kept = r.newest_trade + 1 - LIMITS.trades as u64;
    assert!(trades.get(TradeId(oldest_kept - 1)).is_none());
    assert!(trades.get(TradeId(oldest_kept)).is_some());
    let (newest, account) = *r.accepted.last().expect("orders");
    assert!(restored.orders().get(account, newest).is_some());
    let beyond_open = (restored.orders().len()).saturating_sub(r.engine.live_order_count());
    assert!(beyond_open <= LIMITS.orders, "{beyond_open}");
    assert!(restored.orders().len() < r.unlimited.orders().len() / 2);
}
