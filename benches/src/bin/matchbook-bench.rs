//! `matchbook-bench latency`: replays a seeded workload through the engine and reports
//! throughput (one timer around the whole run) and per-command latency percentiles (a timer
//! around each command, with the timer's own cost measured and reported beside them).
//!
//! Usage: `matchbook-bench latency [--profile exchange-core|deep-book] [--balances on|off] [--n N] [--seed S] [--runs R]`

use std::time::Instant;

use matchbook::EventRecord;
use matchbook_bench::workload::{self, DEEP_BOOK, EXCHANGE_CORE, Profile, Workload};

struct Args {
    profile: Profile,
    n: usize,
    seed: u64,
    runs: usize,
    balances: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("latency") => {}
        other => return Err(format!("unknown command {other:?}; try `latency`")),
    }
    let mut parsed = Args {
        profile: EXCHANGE_CORE,
        n: 2_000_000,
        seed: 1,
        runs: 5,
        balances: false,
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
            "--balances" => {
                parsed.balances = match value.as_str() {
                    "on" => true,
                    "off" => false,
                    _ => return Err(format!("--balances takes on or off, not {value}")),
                }
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
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
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("matchbook-bench: {e}");
            std::process::exit(2);
        }
    };
    let w = if args.balances {
        workload::generate_funded(args.profile, args.seed, args.n)
    } else {
        workload::generate(args.profile, args.seed, args.n)
    };
    let (base, start) = warmed(&w);
    let measured = w.commands.len() - start;
    let mut events: Vec<EventRecord> = Vec::with_capacity(1024);
    let mut rates = Vec::new();
    let mut latencies: Vec<u64> = Vec::with_capacity(measured);
    for run in 0..args.runs {
        // Throughput run: one timer around the whole stream.
        let mut engine = base.clone();
        let t = Instant::now();
        for i in start..w.commands.len() {
            events.clear();
            let _ = std::hint::black_box(engine.apply(
                &w.commands[i],
                w.time_of_command(i),
                &mut events,
            ));
        }
        rates.push(measured as f64 / t.elapsed().as_secs_f64());
        // Latency run: a timer around each command (kept from the last run only).
        if run + 1 == args.runs {
            let mut engine = base.clone();
            for i in start..w.commands.len() {
                events.clear();
                let t = Instant::now();
                let _ = std::hint::black_box(engine.apply(
                    &w.commands[i],
                    w.time_of_command(i),
                    &mut events,
                ));
                latencies.push(t.elapsed().as_nanos() as u64);
            }
        }
    }
    rates.sort_by(f64::total_cmp);
    latencies.sort_unstable();
    let overhead = timer_overhead();
    println!(
        "profile {} balances {} seed {} commands {} (after {} warm-up) runs {}",
        args.profile.name,
        if args.balances { "on" } else { "off" },
        args.seed,
        measured,
        start,
        args.runs
    );
    println!(
        "throughput median {:.2} M commands/s (min {:.2}, max {:.2}) = {:.1} ns/command",
        rates[rates.len() / 2] / 1e6,
        rates[0] / 1e6,
        rates[rates.len() - 1] / 1e6,
        1e9 / rates[rates.len() / 2]
    );
    print!("latency ns (timer included, timer alone {overhead} ns):");
    for (name, p) in [
        ("p50", 0.5),
        ("p90", 0.9),
        ("p99", 0.99),
        ("p99.9", 0.999),
        ("p99.99", 0.9999),
    ] {
        print!(" {name} {}", percentile(&latencies, p));
    }
    println!(" max {}", latencies[latencies.len() - 1]);
    fok_latency(&base);
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
