//! `matchbook-journal-bench`: what the write-ahead journal costs. The funded exchange-core
//! stream is applied in batches the way the durable runtime does it (append every command,
//! apply it, commit the batch) with the journal off, on without fsync, and on with an
//! fsync per batch; then the journal is recovered (read, checked, replayed) and timed.
//! The batch size is what a runtime offered `--rate` commands/s would gather in
//! `--batch-micros` (default 1 M/s and 1 ms: 1,000 commands a batch).
//!
//! Usage: `matchbook-journal-bench [--n N] [--rate R] [--batch-micros U] [--dir DIR]`

use std::time::Instant;

use matchbook::journal::{self, CommandLog, SyncPolicy};
use matchbook_bench::workload::{self, EXCHANGE_CORE};

fn arg(name: &str, default: f64) -> f64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let n = arg("--n", 1_000_000.0) as usize;
    let rate = arg("--rate", 1_000_000.0);
    let batch = ((rate * arg("--batch-micros", 1_000.0) / 1e6) as usize).max(1);
    let dir = std::env::args()
        .collect::<Vec<_>>()
        .windows(2)
        .find(|w| w[0] == "--dir")
        .map(|w| std::path::PathBuf::from(&w[1]))
        .unwrap_or_else(|| {
            std::env::temp_dir().join(format!("mb-journal-bench-{}", std::process::id()))
        });
    let w = workload::generate_funded(EXCHANGE_CORE, 1, n);
    println!(
        "{} commands (exchange-core, balances on), batches of {batch} (= {rate:.0} commands/s offered, {:.0} us batches), journal in {}",
        w.commands.len(),
        batch as f64 / rate * 1e6,
        dir.display()
    );
    let mut results = Vec::new();
    for mode in ["off", "write", "fsync"] {
        let _ = std::fs::remove_dir_all(&dir);
        let mut engine = w.prepared_engine();
        let policy = if mode == "fsync" {
            SyncPolicy::EveryBatch
        } else {
            SyncPolicy::Never
        };
        let mut log = (mode != "off").then(|| {
            journal::SegmentedJournal::open(&dir, policy, 0)
                .expect("journal")
                .0
        });
        let mut events = Vec::with_capacity(1024);
        let started = Instant::now();
        for (b, chunk) in w.commands.chunks(batch).enumerate() {
            for (i, command) in chunk.iter().enumerate() {
                let time = w.time_of_command(b * batch + i);
                if let Some(log) = log.as_mut() {
                    log.append(time, command).expect("append");
                }
                events.clear();
                let _ = engine.apply(command, time, &mut events);
            }
            if let Some(log) = log.as_mut() {
                log.commit().expect("commit");
            }
        }
        let seconds = started.elapsed().as_secs_f64();
        let rate = w.commands.len() as f64 / seconds;
        println!(
            "journal {mode:<5} {:>6.2} M commands/s ({seconds:.3} s)",
            rate / 1e6
        );
        results.push(rate);
        if mode == "fsync" {
            let bytes: u64 = journal::list_segments(&dir)
                .expect("segments")
                .iter()
                .map(|s| std::fs::metadata(&s.path).map_or(0, |m| m.len()))
                .sum();
            let started = Instant::now();
            let (_, recovered) =
                journal::SegmentedJournal::open(&dir, SyncPolicy::Never, 0).expect("recover");
            let read = started.elapsed().as_secs_f64();
            // The journal holds the measured stream; replay it onto the prepared set-up.
            let mut fresh = w.prepared_engine();
            let replay_started = Instant::now();
            journal::replay(&mut fresh, None, &recovered.entries);
            let replay = replay_started.elapsed().as_secs_f64();
            let per_million = (read + replay) / recovered.entries.len() as f64 * 1e6;
            println!(
                "recovery: {} records, {:.1} MB, read and check {read:.3} s, replay {replay:.3} s: {per_million:.2} s per million commands",
                recovered.entries.len(),
                bytes as f64 / 1e6
            );
            assert_eq!(
                fresh.state_hash(),
                engine.state_hash(),
                "replay reproduces the run"
            );
        }
    }
    println!(
        "slowdown: write {:.2}x, fsync per batch {:.2}x",
        results[0] / results[1],
        results[0] / results[2]
    );
    // Through the runtime: one producer thread submits as fast as the queue takes them;
    // with the journal, batches are written and synced on the journal thread while the
    // engine applies the next, and answers wait for their batch.
    let mut through_runtime = Vec::new();
    for durable in [false, true] {
        let _ = std::fs::remove_dir_all(&dir);
        let engine = w.prepared_engine();
        let market = matchbook::market::MarketData::new(1, Default::default());
        let clock = std::sync::Arc::new(matchbook::runtime::ManualClock::at(w.time_of_command(0)));
        let placement = matchbook::runtime::MarketDataPlacement::OwnThread;
        let runtime = if durable {
            let (log, _) =
                journal::SegmentedJournal::open(&dir, SyncPolicy::EveryBatch, 0).expect("journal");
            matchbook::runtime::Runtime::start_durable(
                engine,
                market,
                clock,
                65_536,
                placement,
                Box::new(log),
                None,
            )
        } else {
            matchbook::runtime::Runtime::start_with(engine, market, clock, 65_536, placement)
        }
        .expect("runtime");
        let handle = runtime.handle();
        let answered = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let started = Instant::now();
        for command in &w.commands {
            loop {
                let answered = answered.clone();
                let reply = move |_| {
                    answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                };
                match handle.submit(command.clone(), reply) {
                    Ok(()) => break,
                    Err(matchbook::runtime::RuntimeError::Busy) => std::thread::yield_now(),
                    Err(e) => panic!("runtime: {e}"),
                }
            }
        }
        runtime.shutdown().expect("stop");
        let seconds = started.elapsed().as_secs_f64();
        let rate = answered.load(std::sync::atomic::Ordering::Relaxed) as f64 / seconds;
        println!(
            "runtime, journal {:<5} {:>6.2} M commands/s answered ({seconds:.3} s)",
            if durable { "fsync" } else { "off" },
            rate / 1e6
        );
        through_runtime.push(rate);
    }
    println!(
        "runtime slowdown with the journal (fsync per batch, pipelined): {:.2}x",
        through_runtime[0] / through_runtime[1]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
