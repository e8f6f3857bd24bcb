//! Criterion benches of the engine, book only: resting add, cancel, amend (price move), a
//! far-better bid placed and cancelled beside 2,000 levels, a sweep of N levels,
//! fill-or-kill against a 100,000-order book, and the seeded mixed
//! workloads of DESIGN section 6, book only and with balances and fees. Throughput is per
//! command.

#![warn(clippy::too_many_lines)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use matchbook::{
    AccountId, Command, Engine, EventRecord, NewOrder, OrderRef, Price, Qty, Side, TimeInForce,
    Timestamp,
};
use matchbook_bench::workload::{
    self, DEEP_BOOK, EXCHANGE_CORE, INSTRUMENT, START, START_PRICE, Workload,
};

const ACCOUNTS: u32 = 1_000;
const CHUNK: usize = 10_000;

fn engine_with_accounts() -> Engine {
    let mut engine = Engine::new(workload::bench_config(false)).expect("bench config");
    let mut events = Vec::new();
    for _ in 0..ACCOUNTS {
        engine
            .apply(&Command::CreateHolder, START, &mut events)
            .expect("holder");
    }
    engine
}

fn bid(i: usize) -> Command {
    let account = AccountId((i % ACCOUNTS as usize) as u32);
    let price = Price(START_PRICE - 1 - (i % 1_000) as i64);
    Command::PlaceOrder(NewOrder::limit(
        account,
        INSTRUMENT,
        Side::Buy,
        price,
        Qty(1 + (i % 7) as i64),
    ))
}

fn place_all(
    engine: &mut Engine,
    events: &mut Vec<EventRecord>,
    n: usize,
) -> Vec<(AccountId, OrderRef)> {
    (0..n)
        .map(|i| {
            events.clear();
            let order = engine
                .apply(&bid(i), START, events)
                .expect("add")
                .order
                .expect("order");
            (AccountId((i % ACCOUNTS as usize) as u32), order)
        })
        .collect()
}

fn cancel_all(
    engine: &mut Engine,
    events: &mut Vec<EventRecord>,
    orders: &[(AccountId, OrderRef)],
) {
    for &(account, order) in orders {
        events.clear();
        let _ = engine.apply(&Command::CancelOrder { account, order }, START, events);
    }
}

/// `iters` resting bids added, timed in chunks (the book emptied between them untimed).
fn resting_add(iters: u64) -> Duration {
    let mut engine = engine_with_accounts();
    let mut events = Vec::with_capacity(64);
    let mut total = Duration::ZERO;
    let mut left = iters as usize;
    while left > 0 {
        let n = left.min(CHUNK);
        let start = Instant::now();
        for i in 0..n {
            events.clear();
            let _ = black_box(engine.apply(&bid(i), START, &mut events));
        }
        total += start.elapsed();
        let live: Vec<_> = engine
            .book_orders(INSTRUMENT, usize::MAX)
            .expect("book")
            .bids
            .iter()
            .map(|o| (o.account, o.order))
            .collect();
        cancel_all(&mut engine, &mut events, &live);
        left -= n;
    }
    total
}

/// `iters` resting orders cancelled, timed in chunks (placed between them untimed).
fn cancel(iters: u64) -> Duration {
    let mut engine = engine_with_accounts();
    let mut events = Vec::with_capacity(64);
    let mut total = Duration::ZERO;
    let mut left = iters as usize;
    while left > 0 {
        let n = left.min(CHUNK);
        let orders = place_all(&mut engine, &mut events, n);
        let start = Instant::now();
        cancel_all(&mut engine, &mut events, &orders);
        total += start.elapsed();
        left -= n;
    }
    total
}

/// Resting orders moved a tick up and back in turn among 1,000.
fn amend_move(b: &mut criterion::Bencher<'_>) {
    let mut engine = engine_with_accounts();
    let mut events = Vec::with_capacity(64);
    let orders = place_all(&mut engine, &mut events, 1_000);
    let mut i = 0usize;
    b.iter(|| {
        let (account, order) = orders[i % orders.len()];
        let up = (i / orders.len()).is_multiple_of(2);
        let price = engine
            .order(order)
            .and_then(|o| o.price())
            .unwrap_or(Price(1));
        let price = Price(if up { price.0 + 1 } else { price.0 - 1 });
        events.clear();
        let _ = black_box(engine.apply(
            &Command::AmendOrder {
                account,
                order,
                amount: None,
                price: Some(price),
            },
            START,
            &mut events,
        ));
        i += 1;
    })
}

/// Issue 26 / SECURITY "still open": a bid far better than the book's best, placed
/// and cancelled at once, beside 2,000 resting bid levels. One iteration is both
/// commands.
fn far_bid_place_cancel(b: &mut criterion::Bencher<'_>) {
    let mut engine = engine_with_accounts();
    let mut events = Vec::with_capacity(64);
    for i in 0..2_000 {
        let order = NewOrder::limit(
            AccountId(i % ACCOUNTS),
            INSTRUMENT,
            Side::Buy,
            Price(START_PRICE - 1 - i64::from(i)),
            Qty(1),
        );
        events.clear();
        engine
            .apply(&Command::PlaceOrder(order), START, &mut events)
            .expect("rests");
    }
    let far = NewOrder::limit(
        AccountId(0),
        INSTRUMENT,
        Side::Buy,
        Price(START_PRICE + 5_000),
        Qty(1),
    );
    b.iter(|| {
        events.clear();
        let placed = engine.apply(&Command::PlaceOrder(far), START, &mut events);
        let order = placed.ok().and_then(|a| a.order).expect("rests");
        let cancel = Command::CancelOrder {
            account: AccountId(0),
            order,
        };
        black_box(engine.apply(&cancel, START, &mut events)).expect("cancelled");
    })
}

fn order_ops(c: &mut Criterion) {
    let mut group = c.benchmark_group("book");
    group.throughput(Throughput::Elements(1));
    group.bench_function("resting_add", |b| b.iter_custom(resting_add));
    group.bench_function("cancel", |b| b.iter_custom(cancel));
    group.bench_function("amend_move", amend_move);
    group.bench_function("far_bid_place_cancel_2000_levels", far_bid_place_cancel);
    group.finish();
}

fn sweeps(c: &mut Criterion) {
    let mut group = c.benchmark_group("sweep");
    for levels in [1usize, 10, 100] {
        let taker = Command::PlaceOrder(
            NewOrder::limit(
                AccountId(ACCOUNTS - 1),
                INSTRUMENT,
                Side::Buy,
                Price(START_PRICE + levels as i64),
                Qty(levels as i64),
            )
            .with_tif(TimeInForce::ImmediateOrCancelled),
        );
        // Each iteration lays `levels` one-lot asks (not timed) and times the IOC that takes
        // them all; the engine is reused so its memory is warm, as in a running exchange.
        group.bench_function(format!("{levels}_levels"), |b| {
            b.iter_custom(|iters| {
                let mut engine = engine_with_accounts();
                let mut events = Vec::with_capacity(4 * levels + 8);
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    for i in 0..levels {
                        let ask = NewOrder::limit(
                            AccountId(i as u32 % ACCOUNTS),
                            INSTRUMENT,
                            Side::Sell,
                            Price(START_PRICE + i as i64),
                            Qty(1),
                        );
                        events.clear();
                        let _ = engine.apply(&Command::PlaceOrder(ask), START, &mut events);
                    }
                    events.clear();
                    let start = Instant::now();
                    let _ = black_box(engine.apply(&taker, START, &mut events));
                    total += start.elapsed();
                }
                total
            })
        });
    }
    group.finish();
}

fn fill_or_kill(c: &mut Criterion) {
    let deep = workload::generate(DEEP_BOOK, 3, 0);
    let mut engine = deep.prepared_engine();
    let asks = engine
        .book_levels(INSTRUMENT, usize::MAX)
        .expect("book")
        .asks;
    let top_100: i64 = asks.iter().take(100).map(|l| l.amount.0).sum();
    let limit = asks[99].price;
    // Needs one lot more than the best 100 levels hold within its limit: walks 100 levels and
    // is refused, which leaves the book unchanged so every iteration sees the same book.
    let fok = Command::PlaceOrder(
        NewOrder::limit(AccountId(0), INSTRUMENT, Side::Buy, limit, Qty(top_100 + 1))
            .with_tif(TimeInForce::FillOrKill),
    );
    let mut group = c.benchmark_group("fok");
    group.throughput(Throughput::Elements(1));
    let mut events = Vec::with_capacity(8);
    group.bench_function("deep_book_100_levels_refused", |b| {
        b.iter(|| {
            events.clear();
            black_box(engine.apply(&fok, START, &mut events))
        })
    });
    group.finish();
}

fn replay(c: &mut Criterion, w: &Workload, name: &str) {
    let warm_up = w.commands.len() / 5;
    let mut warmed = w.prepared_engine();
    let mut events: Vec<EventRecord> = Vec::with_capacity(1024);
    for (i, command) in w.commands[..warm_up].iter().enumerate() {
        events.clear();
        let _ = warmed.apply(command, w.time_of_command(i), &mut events);
    }
    let measured = &w.commands[warm_up..];
    let times: Vec<Timestamp> = (warm_up..w.commands.len())
        .map(|i| w.time_of_command(i))
        .collect();
    let mut group = c.benchmark_group("mixed");
    group.throughput(Throughput::Elements(1));
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut left = iters as usize;
            while left > 0 {
                let mut engine = warmed.clone();
                let n = left.min(measured.len());
                let start = Instant::now();
                for i in 0..n {
                    events.clear();
                    let _ = black_box(engine.apply(&measured[i], times[i], &mut events));
                }
                total += start.elapsed();
                left -= n;
            }
            total
        })
    });
    group.finish();
}

fn mixed(c: &mut Criterion) {
    replay(
        c,
        &workload::generate(EXCHANGE_CORE, 1, 1_000_000),
        "exchange_core",
    );
    replay(c, &workload::generate(DEEP_BOOK, 1, 1_000_000), "deep_book");
    replay(
        c,
        &workload::generate_funded(EXCHANGE_CORE, 1, 1_000_000),
        "exchange_core_balances",
    );
    replay(
        c,
        &workload::generate_funded(DEEP_BOOK, 1, 1_000_000),
        "deep_book_balances",
    );
}

criterion_group!(benches, order_ops, sweeps, fill_or_kill, mixed);
criterion_main!(benches);
