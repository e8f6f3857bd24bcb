//! The pipeline's promises: back-pressure only at ingress, acknowledgements never wait for
//! the market stage, every read includes the reader's own acknowledged commands,
//! subscribers see every batch in order and one that falls behind is dropped with its
//! reason without slowing anyone, and a flood of book and history reads does not change the
//! matching thread's time per command.

#![warn(clippy::too_many_lines)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use matchbook_config::demo;
use matchbook_core::{AccountId, Command, CurrencyId, Engine, InstrumentId, NewOrder, OrderRef};
use matchbook_core::{Price, Qty, Side, Timestamp};
use matchbook_market::MarketData;
use matchbook_runtime::{
    DropReason, Histogram, ManualClock, Outcome, Runtime, RuntimeError, RuntimeHandle,
    StatsSnapshot,
};

const T0: Timestamp = Timestamp(1_767_225_600_000_000_000);

fn start(capacity: usize) -> Runtime {
    let mut config = demo::config();
    // Deep books of one holder's orders.
    config.max_open_orders = 10_000;
    let engine = Engine::new(config).expect("demo config");
    let market = MarketData::new(engine.instruments().len(), Default::default());
    let clock = Arc::new(ManualClock::at(T0));
    Runtime::start(engine, market, clock, capacity).expect("threads")
}

fn ok(handle: &RuntimeHandle, command: Command) -> Outcome {
    let outcome = handle.apply_blocking(command).expect("running");
    assert!(outcome.result.is_ok(), "{outcome:?}");
    outcome
}

/// A holder with BTC and EUR to trade BTC_EUR.
fn funded_account(handle: &RuntimeHandle) -> AccountId {
    let created = ok(handle, Command::CreateHolder).result;
    let account = created.ok().and_then(|a| a.account).expect("main account");
    for (currency, amount) in [(0, 1_000_000_000_000_000), (2, 1_000_000_000_000_000)] {
        let currency = CurrencyId(currency);
        let deposit = Command::Deposit {
            account,
            currency,
            amount,
        };
        ok(handle, deposit);
    }
    account
}

fn limit(account: AccountId, side: Side, price: i64) -> Command {
    let order = NewOrder::limit(account, InstrumentId(0), side, Price(price), Qty(10_000));
    Command::PlaceOrder(order)
}

/// Holds the market stage inside a read (as a slow history query would) until the
/// returned sender is used or dropped.
fn hold_market_stage(handle: &RuntimeHandle) -> crossbeam_channel::Sender<()> {
    let (release, held) = crossbeam_channel::bounded::<()>(0);
    let (started, running) = crossbeam_channel::bounded::<()>(1);
    handle
        .read_market(move |_| {
            let _ = started.send(());
            let _ = held.recv();
        })
        .expect("queued");
    running.recv().expect("the market stage is held");
    release
}

#[test]
fn a_full_pipeline_is_refused_not_blocked() {
    let runtime = start(2);
    let handle = runtime.handle();
    let release = hold_market_stage(&handle);
    let (acked_tx, acked_rx) = crossbeam_channel::unbounded();
    // Each is answered although the market stage has not seen it, up to twice the
    // capacity behind it...
    for expected in 1..=4 {
        let acked_tx = acked_tx.clone();
        let reply = move |o: Outcome| {
            let _ = acked_tx.send(o.seq);
        };
        handle
            .submit(Command::CreateHolder, reply)
            .expect("admitted");
        assert_eq!(acked_rx.recv().expect("answered"), expected);
    }
    // ...and they stay in flight until it has: the next is refused, not queued.
    assert_eq!(handle.stats().in_flight, 4);
    assert_eq!(
        handle.submit(Command::CreateHolder, |_| {}).err(),
        Some(RuntimeError::Busy)
    );
    assert_eq!(handle.stats().refused, 1);
    release.send(()).expect("release");
    let count = handle.engine_blocking(|e| e.holder_count()).expect("read");
    assert_eq!(count, 4);
    let (engine, _) = runtime.shutdown().expect("clean stop");
    assert_eq!(engine.holder_count(), 4);
}

#[test]
fn acknowledgements_do_not_wait_for_the_market_stage() {
    let runtime = start(10_000);
    let handle = runtime.handle();
    let account = funded_account(&handle);
    // Hold the market stage inside a read, as a slow history query would.
    let release = hold_market_stage(&handle);
    let before = handle.stats().market;
    for i in 0..500 {
        ok(&handle, limit(account, Side::Buy, 2_000_000 + i));
    }
    let stats = handle.stats();
    assert_eq!(stats.market, before, "the market stage was held throughout");
    assert_eq!(stats.acked, stats.matched, "yet all 500 were answered");
    release.send(()).expect("release");
    let open = handle
        .read_blocking(move |view| view.engine.open_orders(account).len())
        .expect("read");
    assert_eq!(
        open, 500,
        "a read after the release sees every answered command"
    );
}

#[test]
fn every_read_sees_the_readers_own_acknowledged_commands() {
    let runtime = start(10_000);
    let handle = runtime.handle();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let handle = handle.clone();
            std::thread::spawn(move || {
                let account = funded_account(&handle);
                for i in 0..150 {
                    let placed = ok(&handle, limit(account, Side::Buy, 1_000_000 + i));
                    let order = placed.result.ok().and_then(|a| a.order).expect("order");
                    let seq = placed.seq;
                    let (tag, in_engine, in_history) = handle
                        .read_blocking(move |view| {
                            let history = view.market.orders().get(account, order.id);
                            (
                                view.seq,
                                view.engine.order(order).is_some(),
                                history.is_some(),
                            )
                        })
                        .expect("read");
                    assert!(tag >= seq, "read tagged {tag}, acknowledged {seq}");
                    assert!(in_engine && in_history, "order {order:?} not visible");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("caller");
    }
    assert_eq!(handle.stats().divergences, 0);
}

#[test]
fn subscribers_get_every_batch_in_order_and_a_slow_one_is_dropped() {
    let runtime = start(10_000);
    let handle = runtime.handle();
    let account = funded_account(&handle);
    let fast = handle.subscribe(100_000).expect("subscribed");
    let slow = handle.subscribe(1).expect("subscribed");
    let start_seq = fast.start_seq;
    assert_eq!(start_seq, handle.stats().matched);
    let reader = std::thread::spawn(move || {
        let mut seqs = Vec::new();
        while let Ok(batch) = fast.recv() {
            for (i, command) in batch.commands.iter().enumerate() {
                assert_eq!(batch.events_of(i).len(), command.events.len());
                seqs.push(command.seq);
            }
        }
        (seqs, fast.reason())
    });
    for i in 0..300 {
        ok(&handle, limit(account, Side::Sell, 9_000_000 + i));
    }
    let stats: StatsSnapshot = handle.stats();
    assert_eq!(stats.dropped_subscribers, 1, "the one that never read");
    assert!(
        slow.recv().is_ok(),
        "what was queued before the drop is kept"
    );
    assert_eq!(slow.recv().err(), Some(DropReason::Lagged { capacity: 1 }));
    drop(runtime);
    let (seqs, reason) = reader.join().expect("reader");
    let expected: Vec<u64> = (start_seq + 1..=stats.matched).collect();
    assert_eq!(seqs, expected, "every command once, in order");
    assert_eq!(reason, DropReason::Stopped);
}

/// Place-and-cancel pairs (the book stays as it was) from one caller; returns the
/// matching thread's per-command time histogram counts over the run.
fn order_flow(handle: &RuntimeHandle, account: AccountId, pairs: i64) -> Vec<u64> {
    let before = handle.live_stats().matching_time().counts();
    for i in 0..pairs {
        // Among the resting bids: a price far better than the best bid would move the
        // ladder's window, a cost of its own (SECURITY.md).
        let placed = ok(handle, limit(account, Side::Buy, 2_999_000 + i % 50));
        let order: OrderRef = placed.result.ok().and_then(|a| a.order).expect("order");
        ok(handle, Command::CancelOrder { account, order });
    }
    let after = handle.live_stats().matching_time().counts();
    after.iter().zip(&before).map(|(a, b)| a - b).collect()
}

/// Readers asking, without pause, for the full L3 book and a page of trade history.
fn flood(handle: &RuntimeHandle, stop: Arc<std::sync::atomic::AtomicBool>) -> usize {
    let mut reads = 0;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let depth = handle
            .read_blocking(|view| {
                let book = view.engine.book_orders(InstrumentId(0), usize::MAX);
                let trades = view.market.trades().len();
                book.map(|b| b.bids.len() + b.asks.len() + trades)
            })
            .expect("read");
        assert!(depth.is_ok());
        reads += 1;
    }
    reads
}

#[test]
fn a_flood_of_reads_leaves_matching_time_per_command_unchanged() {
    let runtime = start(100_000);
    let handle = runtime.handle();
    let maker = funded_account(&handle);
    let trader = funded_account(&handle);
    // A deep book for the readers to walk: 2,000 resting orders on each side.
    for i in 0..2_000 {
        ok(&handle, limit(maker, Side::Buy, 3_000_000 - i));
        ok(&handle, limit(maker, Side::Sell, 6_000_000 + i));
    }
    let median = |counts: &[u64]| Histogram::quantile_of(counts, 0.5).expect("samples");
    let (mut quiet, mut flooded, mut total_reads) = (Vec::new(), Vec::new(), 0);
    // Alternate rounds so drift of the shared machine falls on both sides alike.
    for _ in 0..3 {
        quiet.push(median(&order_flow(&handle, trader, 3_000)));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (handle, stop) = (handle.clone(), stop.clone());
                std::thread::spawn(move || flood(&handle, stop))
            })
            .collect();
        let started = Instant::now();
        flooded.push(median(&order_flow(&handle, trader, 3_000)));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for r in readers {
            total_reads += r.join().expect("reader");
        }
        assert!(started.elapsed() < Duration::from_secs(120));
    }
    quiet.sort_unstable();
    flooded.sort_unstable();
    let (quiet, flooded) = (quiet[1] as f64, flooded[1] as f64);
    let ratio = flooded / quiet;
    eprintln!(
        "matching ns/command: quiet {quiet}, flooded {flooded}, ratio {ratio:.3}; {total_reads} reads"
    );
    assert!(total_reads > 100, "the readers did read ({total_reads})");
    assert!(ratio <= 1.10, "matching slowed by reads: ratio {ratio:.3}");
    assert_eq!(handle.stats().divergences, 0);
}
