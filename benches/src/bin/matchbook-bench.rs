//! `matchbook-bench generate --profile P --seed S --n N --out FILE` writes a workload file;
//! `matchbook-bench run --input FILE [--engine matchbook|...|all] [--runs R] [--json FILE]`
//! replays it through matchbook and the peer order books side by side (`crate::harness`),
//! reading allocations from the counting allocator below.
//!
//! `matchbook-bench latency`: replays a seeded workload through the engine and reports
//! throughput (one timer around the whole run) and per-command latency percentiles (a timer
//! around each command, with the timer's own cost measured and reported beside them).
//!
//! With `--market-data inline`, every command's events also go through `MarketData`
//! (history, candles, tickers) on the engine thread; with `--market-data thread` they are
//! handed, 64 commands at a time, over a bounded channel to a consumer thread (buffers go
//! back on a second channel, so nothing is allocated per batch), which is how the DESIGN
//! places consumers. The bytes market data retains are counted.
//!
//! Usage: `matchbook-bench latency [--profile exchange-core|deep-book] [--balances on|off|futures]
//! [--market-data off|inline|thread] [--n N] [--seed S] [--runs R]`

#![warn(clippy::too_many_lines)]
// The byte-counting global allocator below can only be written with `unsafe`; it forwards
// every call to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

struct CountingBytes;
static LIVE_BYTES: AtomicI64 = AtomicI64::new(0);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to `System`, which upholds the contract.
unsafe impl GlobalAlloc for CountingBytes {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        LIVE_BYTES.fetch_add(layout.size() as i64, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        LIVE_BYTES.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingBytes = CountingBytes;

use std::time::Instant;

use matchbook::EventRecord;
use matchbook::market::{MarketData, MarketDataConfig};
use matchbook_bench::workload::{self, DEEP_BOOK, EXCHANGE_CORE, Profile, Workload};

struct Args {
    profile: Profile,
    n: usize,
    seed: u64,
    runs: usize,
    balances: bool,
    /// The instrument is a USD-margined perpetual (balances on).
    futures: bool,
    market_data: Consumer,
}

/// Where market data runs, if at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Consumer {
    Off,
    Inline,
    Thread,
}

/// The `latency` command's flags, from the command line after the program's name.
fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    match args.next().as_deref() {
        Some("latency") => {}
        Some(other) => {
            return Err(format!(
                "unknown command {other}; try `generate`, `run` or `latency`"
            ));
        }
        None => return Err("a command is needed: `generate`, `run` or `latency`".into()),
    }
    let mut parsed = Args {
        profile: EXCHANGE_CORE,
        n: 2_000_000,
        seed: 1,
        runs: 5,
        balances: false,
        futures: false,
        market_data: Consumer::Off,
    };
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--profile" => {
                parsed.profile = [EXCHANGE_CORE, DEEP_BOOK]
                    .into_iter()
                    .find(|p| p.name == value)
                    .ok_or_else(|| format!("unknown profile {value}"))?;
            }
            "--n" => parsed.n = value.parse().map_err(|e| format!("--n: {e}"))?,
            "--seed" => parsed.seed = value.parse().map_err(|e| format!("--seed: {e}"))?,
            "--runs" => parsed.runs = value.parse().map_err(|e| format!("--runs: {e}"))?,
            "--market-data" => {
                parsed.market_data = match value.as_str() {
                    "off" => Consumer::Off,
                    "inline" => Consumer::Inline,
                    "thread" => Consumer::Thread,
                    _ => {
                        return Err(format!(
                            "--market-data takes off, inline or thread, not {value}"
                        ));
                    }
                }
            }
            "--balances" => {
                (parsed.balances, parsed.futures) = match value.as_str() {
                    "on" => (true, false),
                    "off" => (false, false),
                    "futures" => (true, true),
                    _ => {
                        return Err(format!("--balances takes on, off or futures, not {value}"));
                    }
                }
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    // No command or no run to measure: nothing to take percentiles of.
    if parsed.n == 0 || parsed.runs == 0 {
        return Err("--n and --runs take at least 1".into());
    }
    Ok(parsed)
}

/// Engine state after the first fifth of the stream (warm-up), and where measuring starts.
fn warmed(w: &Workload) -> (matchbook::Engine, usize) {
    let warm_up = w.commands.len() / 5;
    let mut engine = w.prepared_engine();
    let mut events: Vec<EventRecord> = Vec::with_capacity(1024);
    for (i, c) in w.commands[..warm_up].iter().enumerate() {
        events.clear();
        let _ = engine.apply(c, w.time_of_command(i), &mut events);
    }
    (engine, warm_up)
}

/// Commands per batch handed to a consumer thread.
const BATCH: usize = 64;

/// Replays the measured part of `w` from `base`; returns commands per second and the market
/// data built (if any). With `latencies`, also times every command into it.
fn replay(
    base: &matchbook::Engine,
    w: &Workload,
    start: usize,
    consumer: Consumer,
    instruments: usize,
    mut latencies: Option<&mut Vec<u64>>,
) -> (f64, Option<MarketData>) {
    let mut engine = base.clone();
    let config = MarketDataConfig::default();
    let mut timed =
        |engine: &mut matchbook::Engine, i: usize, sink: &mut Vec<EventRecord>| match latencies
            .as_deref_mut()
        {
            Some(l) => {
                let t = Instant::now();
                let _ =
                    std::hint::black_box(engine.apply(&w.commands[i], w.time_of_command(i), sink));
                l.push(t.elapsed().as_nanos() as u64);
            }
            None => {
                let _ =
                    std::hint::black_box(engine.apply(&w.commands[i], w.time_of_command(i), sink));
            }
        };
    let measured = (w.commands.len() - start) as f64;
    match consumer {
        Consumer::Off | Consumer::Inline => {
            let mut market =
                (consumer == Consumer::Inline).then(|| MarketData::new(instruments, config));
            let mut events: Vec<EventRecord> = Vec::with_capacity(1024);
            let t = Instant::now();
            for i in start..w.commands.len() {
                events.clear();
                timed(&mut engine, i, &mut events);
                if let Some(m) = market.as_mut() {
                    m.on_events(&events);
                }
            }
            (measured / t.elapsed().as_secs_f64(), market)
        }
        Consumer::Thread => {
            let (to_consumer, from_engine) = crossbeam_channel::bounded::<Vec<EventRecord>>(32);
            let (to_engine, spare) = crossbeam_channel::bounded::<Vec<EventRecord>>(40);
            for _ in 0..34 {
                let _ = to_engine.send(Vec::with_capacity(BATCH * 16));
            }
            let worker = std::thread::spawn(move || {
                let mut market = MarketData::new(instruments, config);
                for mut batch in from_engine {
                    market.on_events(&batch);
                    batch.clear();
                    let _ = to_engine.send(batch);
                }
                market
            });
            let t = Instant::now();
            let mut batch = spare.recv().unwrap_or_default();
            for (n, i) in (start..w.commands.len()).enumerate() {
                timed(&mut engine, i, &mut batch);
                if n % BATCH == BATCH - 1 {
                    let full = std::mem::replace(&mut batch, spare.recv().unwrap_or_default());
                    let _ = to_consumer.send(full);
                }
            }
            let _ = to_consumer.send(batch);
            drop(to_consumer);
            let market = worker.join().ok();
            (measured / t.elapsed().as_secs_f64(), market)
        }
    }
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn timer_overhead() -> u64 {
    let mut samples: Vec<u64> = (0..100_000)
        .map(|_| {
            let a = Instant::now();
            let b = Instant::now();
            (b - a).as_nanos() as u64
        })
        .collect();
    samples.sort_unstable();
    percentile(&samples, 0.5)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(result) = subcommand(&args) {
        if let Err(e) = result {
            eprintln!("matchbook-bench: {e}");
            std::process::exit(2);
        }
        return;
    }
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("matchbook-bench: {e}");
            std::process::exit(2);
        }
    };
    let mut w = if args.futures {
        workload::generate_futures(args.profile, args.seed, args.n)
    } else if args.balances {
        workload::generate_funded(args.profile, args.seed, args.n)
    } else {
        workload::generate(args.profile, args.seed, args.n)
    };
    // Top-of-book events exist for market data; without a consumer they are not published.
    w.config.publish_top_of_book = args.market_data != Consumer::Off;
    let (base, start) = warmed(&w);
    let measured = measure(&args, &base, &w, start);
    print_header(&args, w.commands.len() - start, start);
    print_measured(&measured);
    fok_latency(&base);
}

/// `generate` and `run` (the harness's commands), if the first argument names one.
fn subcommand(args: &[String]) -> Option<Result<(), String>> {
    match args.first().map(String::as_str) {
        Some("generate") => Some(matchbook_bench::cli::generate(&args[1..])),
        Some("run") => Some(matchbook_bench::cli::run(&args[1..], &|| {
            ALLOCATIONS.load(Ordering::Relaxed)
        })),
        _ => None,
    }
}

/// What the runs measured: each run's throughput (sorted), the last run's latency of each
/// command (sorted), and what market data retained (bytes, trades, orders).
struct Measured {
    rates: Vec<f64>,
    latencies: Vec<u64>,
    retained: Option<(i64, usize, usize)>,
}

/// Replays the measured commands `args.runs` times onto copies of `base`.
fn measure(
    args: &Args,
    base: &matchbook::Engine,
    w: &workload::Workload,
    start: usize,
) -> Measured {
    let measured = w.commands.len() - start;
    let mut rates = Vec::new();
    let mut latencies: Vec<u64> = Vec::with_capacity(measured);
    let mut retained: Option<(i64, usize, usize)> = None;
    let instruments = base.instruments().len();
    for run in 0..args.runs {
        let last = run + 1 == args.runs;
        // Throughput: one timer around the whole stream; the last run also times each command.
        let bytes_before = LIVE_BYTES.load(Ordering::Relaxed);
        let (rate, market) = replay(base, w, start, args.market_data, instruments, None);
        rates.push(rate);
        if let Some(m) = &market {
            let bytes = LIVE_BYTES.load(Ordering::Relaxed) - bytes_before;
            retained = Some((bytes, m.trades().len(), m.orders().len()));
        }
        drop(market);
        if last {
            let timed = Some(&mut latencies);
            replay(base, w, start, args.market_data, instruments, timed);
        }
    }
    rates.sort_by(f64::total_cmp);
    latencies.sort_unstable();
    Measured {
        rates,
        latencies,
        retained,
    }
}

fn print_header(args: &Args, measured: usize, start: usize) {
    println!(
        "profile {} balances {} market-data {} seed {} commands {} (after {} warm-up) runs {}",
        args.profile.name,
        match (args.balances, args.futures) {
            (_, true) => "futures",
            (true, false) => "on",
            (false, false) => "off",
        },
        match args.market_data {
            Consumer::Off => "off",
            Consumer::Inline => "inline",
            Consumer::Thread => "thread",
        },
        args.seed,
        measured,
        start,
        args.runs
    );
}

fn print_measured(m: &Measured) {
    let overhead = timer_overhead();
    println!(
        "throughput median {:.2} M commands/s (min {:.2}, max {:.2}) = {:.1} ns/command",
        m.rates[m.rates.len() / 2] / 1e6,
        m.rates[0] / 1e6,
        m.rates[m.rates.len() - 1] / 1e6,
        1e9 / m.rates[m.rates.len() / 2]
    );
    print!("latency ns (timer included, timer alone {overhead} ns):");
    for (name, p) in [
        ("p50", 0.5),
        ("p90", 0.9),
        ("p99", 0.99),
        ("p99.9", 0.999),
        ("p99.99", 0.9999),
    ] {
        print!(" {name} {}", percentile(&m.latencies, p));
    }
    println!(" max {}", m.latencies[m.latencies.len() - 1]);
    if let Some((bytes, trades, orders)) = m.retained {
        println!(
            "market data retained {:.1} MB for {trades} trades and {orders} orders: {:.0} bytes per trade with its share of orders ({:.0} MB per million trades)",
            bytes as f64 / 1e6,
            bytes as f64 / trades.max(1) as f64,
            bytes as f64 / trades.max(1) as f64
        );
    }
}

/// Fill-or-kill against the book as it stands: a buy needing one lot more than the best 100
/// ask levels hold walks all 100 and is refused (leaving the book as it was), timed one by one.
fn fok_latency(engine: &matchbook::Engine) {
    use matchbook::{AccountId, Command, NewOrder, Qty, Side, TimeInForce};
    let mut engine = engine.clone();
    let asks = engine
        .book_levels(workload::INSTRUMENT, 100)
        .expect("book")
        .asks;
    let Some(limit) = asks.last().map(|l| l.price) else {
        return;
    };
    let need = asks.iter().map(|l| l.amount.0).sum::<i64>() + 1;
    let fok = Command::PlaceOrder(
        NewOrder::limit(
            AccountId(0),
            workload::INSTRUMENT,
            Side::Buy,
            limit,
            Qty(need),
        )
        .with_tif(TimeInForce::FillOrKill),
    );
    let resting: u32 = asks.iter().map(|l| l.number_of_orders).sum();
    let mut events: Vec<EventRecord> = Vec::with_capacity(8);
    let mut samples: Vec<u64> = (0..200_000)
        .map(|_| {
            events.clear();
            let t = Instant::now();
            let _ = std::hint::black_box(engine.apply(&fok, workload::START, &mut events));
            t.elapsed().as_nanos() as u64
        })
        .collect();
    samples.sort_unstable();
    println!(
        "fill-or-kill refused after walking {} levels ({} orders, {} resting in all): p50 {} ns p99 {} ns p99.9 {} ns max {} ns",
        asks.len(),
        resting,
        engine.live_order_count(),
        percentile(&samples, 0.5),
        percentile(&samples, 0.99),
        percentile(&samples, 0.999),
        samples[samples.len() - 1]
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(line: &str) -> Result<Args, String> {
        parse_args(matchbook_bench::cli::words(line).into_iter())
    }

    /// `latency --n 0` and `latency --runs 0` panicked (an index into no latencies).
    #[test]
    fn nothing_to_measure_is_refused_with_the_flags_to_change() {
        for line in ["latency --n 0", "latency --runs 0"] {
            let refused = parsed(line).err().unwrap_or_default();
            assert!(refused.contains("--n and --runs"), "{line}: {refused}");
        }
        assert!(parsed("").is_err_and(|e| e.contains("a command is needed")));
        assert!(parsed("latency --n 10 --runs 1").is_ok());
    }
}
