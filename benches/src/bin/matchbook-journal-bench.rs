//! `matchbook-journal-bench`: what the write-ahead journal costs. The funded exchange-core
//! stream is applied in batches the way the durable runtime does it (append every command,
//! apply it, commit the batch) with the journal off, on without fsync, and on with an
//! fsync per batch; then the journal is recovered (read, checked, replayed) and timed.
//! The batch size is what a runtime offered `--rate` commands/s would gather in
//! `--batch-micros` (default 1 M/s and 1 ms: 1,000 commands a batch).
//!
//! Usage: `matchbook-journal-bench [--n N] [--rate R] [--batch-micros U] [--dir DIR]`

#![warn(clippy::too_many_lines)]

use std::time::Instant;

use matchbook::Engine;
use matchbook::journal::{self, CommandLog, JournalEntry, SyncPolicy};
use matchbook::market::MarketData;
use matchbook::runtime::SnapshotPlan;
use matchbook::snapshot::Snapshot;
use matchbook::store::SnapshotWriter;
use matchbook_bench::cli;
use matchbook_bench::workload::{self, EXCHANGE_CORE};

const USAGE: &str =
    "usage: matchbook-journal-bench [--n N] [--rate R] [--batch-micros U] [--dir DIR]";

/// What the command line asks: commands, offered rate, batch interval, journal directory.
struct Args {
    n: usize,
    rate: f64,
    batch_micros: f64,
    dir: std::path::PathBuf,
}

/// The flags (a typo or a value that is not a number is refused, not replaced by the
/// default), each at least 1.
fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut parsed = Args {
        n: 1_000_000,
        rate: 1e6,
        batch_micros: 1e3,
        dir: std::env::temp_dir().join(format!("mb-journal-bench-{}", std::process::id())),
    };
    for (flag, value) in cli::flags(args)? {
        match flag {
            "--n" => parsed.n = cli::number(flag, value)?,
            "--rate" => parsed.rate = cli::number(flag, value)?,
            "--batch-micros" => parsed.batch_micros = cli::number(flag, value)?,
            "--dir" => parsed.dir = value.into(),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    let at_least_one = |v: f64| v >= 1.0;
    if parsed.n == 0 || !at_least_one(parsed.rate) || !at_least_one(parsed.batch_micros) {
        return Err("--n, --rate and --batch-micros take at least 1".into());
    }
    Ok(parsed)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Args {
        n,
        rate,
        batch_micros,
        dir,
    } = parse_args(&args).unwrap_or_else(|e| {
        eprintln!("matchbook-journal-bench: {e}\n{USAGE}");
        std::process::exit(2);
    });
    let batch = ((rate * batch_micros / 1e6) as usize).max(1);
    let w = workload::generate_funded(EXCHANGE_CORE, 1, n);
    println!(
        "{} commands (exchange-core, balances on), batches of {batch} (= {rate:.0} commands/s offered, {:.0} us batches), journal in {}",
        w.commands.len(),
        batch as f64 / rate * 1e6,
        dir.display()
    );
    let results = engine_alone(&w, &dir, batch);
    println!(
        "slowdown: write {:.2}x, fsync per batch {:.2}x",
        results[0] / results[1],
        results[0] / results[2]
    );
    let through_runtime = through_runtime(&w, &dir, 1e9 / results[0]);
    println!(
        "runtime slowdown with the journal (fsync per batch, pipelined): {:.2}x; with snapshots every 100k as well: {:.2}x",
        through_runtime[0] / through_runtime[1],
        through_runtime[0] / through_runtime[2]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The engine alone on the measured stream in batches of `batch`: no journal, a journal
/// written without fsync, and with an fsync per batch (then recovery from it timed);
/// commands a second of each.
fn engine_alone(w: &workload::Workload, dir: &std::path::Path, batch: usize) -> Vec<f64> {
    let mut results = Vec::new();
    for mode in ["off", "write", "fsync"] {
        let (rate, engine) = journalled_run(w, dir, batch, mode);
        results.push(rate);
        if mode == "fsync" {
            recovery(w, dir, &engine);
        }
    }
    results
}

/// One run of the engine alone with the journal `mode`: its rate and the engine after it.
fn journalled_run(
    w: &workload::Workload,
    dir: &std::path::Path,
    batch: usize,
    mode: &str,
) -> (f64, matchbook::Engine) {
    let _ = std::fs::remove_dir_all(dir);
    let mut engine = w.prepared_engine();
    let policy = if mode == "fsync" {
        SyncPolicy::EveryBatch
    } else {
        SyncPolicy::Never
    };
    let mut log = (mode != "off").then(|| {
        journal::SegmentedJournal::open(dir, policy, 0)
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
    (rate, engine)
}

/// Recovery from the journal the fsync run wrote: read and check, replay, and the same
/// state as `engine`; then what snapshots cost.
fn recovery(w: &workload::Workload, dir: &std::path::Path, engine: &matchbook::Engine) {
    let bytes: u64 = journal::list_segments(dir)
        .expect("segments")
        .iter()
        .map(|s| std::fs::metadata(&s.path).map_or(0, |m| m.len()))
        .sum();
    let started = Instant::now();
    let (_, recovered) =
        journal::SegmentedJournal::open(dir, SyncPolicy::Never, 0).expect("recover");
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
    snapshots(w, dir, &recovered.entries);
}

/// Through the runtime: one producer thread submits as fast as the queue takes them;
/// with the journal, batches are written and synced on the journal thread while the
/// engine applies the next, and answers wait for their batch. Commands answered a second
/// without a journal, with one, with snapshots every 100,000 as well, and with snapshots
/// every 5,000 (due faster than the writer writes them). `alone_nanos`: the engine
/// alone's time a command, which the matching thread's busy time is compared with.
fn through_runtime(w: &workload::Workload, dir: &std::path::Path, alone_nanos: f64) -> Vec<f64> {
    let modes = [
        ("off", false, 0),
        ("fsync", true, 0),
        ("fsync+snapshots", true, 100_000),
        ("fsync+snap/5k", true, 5_000),
    ];
    (modes.into_iter())
        .map(|(mode, durable, snapshot_every)| {
            runtime_run(w, dir, (mode, durable, snapshot_every), alone_nanos)
        })
        .collect()
}

/// One run through the runtime in `(mode, durable, snapshot_every)`: commands answered
/// a second.
fn runtime_run(
    w: &workload::Workload,
    dir: &std::path::Path,
    (mode, durable, snapshot_every): (&str, bool, u64),
    alone_nanos: f64,
) -> f64 {
    let _ = std::fs::remove_dir_all(dir);
    let (runtime, writer) = start_runtime(w, dir, durable, snapshot_every);
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
    // Every command answered, while the stages still run: their threads' CPU accounts.
    while answered.load(std::sync::atomic::Ordering::Relaxed) < w.commands.len() {
        std::thread::yield_now();
    }
    let stats = handle.stats();
    let busy = handle.live_stats().matching_time().counts();
    let threads = stage_threads();
    runtime.shutdown().expect("stop");
    let seconds = started.elapsed().as_secs_f64();
    let rate = answered.load(std::sync::atomic::Ordering::Relaxed) as f64 / seconds;
    println!(
        "runtime, journal {mode:<15} {:>6.2} M commands/s answered ({seconds:.3} s)",
        rate / 1e6
    );
    if let Some(writer) = writer
        && snapshot_every > 0
    {
        let status = writer.finish();
        println!(
            "  snapshots written {}, last {:.1} MB in {:.1} ms (encode + write + fsync, on the writer thread), {} segments pruned, {} copies superseded",
            status.written,
            status.last_bytes as f64 / 1e6,
            status.last_duration.as_secs_f64() * 1e3,
            status.segments_pruned,
            status.superseded
        );
    }
    println!(
        "  matching thread: longest batch {:.2} ms; snapshot copies {} (on the market stage), longest {:.2} ms",
        stats.longest_batch_nanos as f64 / 1e6,
        stats.snapshots,
        stats.longest_snapshot_copy_nanos as f64 / 1e6
    );
    let (median, mean) = busy_per_command(&busy);
    println!(
        "  matching thread busy a command: median {median} ns, mean {mean:.0} ns; the engine alone {alone_nanos:.0} ns: {:.2}x (mean)",
        mean / alone_nanos
    );
    let per_command = |nanos: u64| nanos as f64 / w.commands.len() as f64;
    let per_thousand = |count: u64| count as f64 * 1e3 / w.commands.len() as f64;
    for t in threads {
        println!(
            "  thread {:<16} on a CPU {:>5.0} ns a command, runnable but waiting for one {:>5.0} ns, {:.3} page faults a command, switches a thousand commands: {:.1} waiting, {:.1} preempted",
            t.name,
            per_command(t.on_cpu),
            per_command(t.waiting),
            t.faults as f64 / w.commands.len() as f64,
            per_thousand(t.switches.0),
            per_thousand(t.switches.1)
        );
    }
    rate
}

/// What the scheduler says of one runtime thread.
struct StageThread {
    name: String,
    /// Nanoseconds on a CPU.
    on_cpu: u64,
    /// Nanoseconds runnable but waiting for a CPU.
    waiting: u64,
    /// Minor page faults.
    faults: u64,
    /// Times it gave the CPU up (to wait) and had it taken away (preempted).
    switches: (u64, u64),
}

/// Each of this process's runtime threads (`matchbook-*`), from
/// `/proc/self/task/*/{comm,schedstat,stat,status}` (Linux; nothing elsewhere).
fn stage_threads() -> Vec<StageThread> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut threads: Vec<StageThread> = (tasks.flatten())
        .filter_map(|task| {
            let read = |file: &str| std::fs::read_to_string(task.path().join(file)).ok();
            let name = read("comm")?.trim().to_owned();
            if !name.starts_with("matchbook-") || name == "matchbook-journ" {
                return None;
            }
            let sched = read("schedstat")?;
            let mut fields = sched.split_whitespace().map(|f| f.parse::<u64>().ok());
            let (on_cpu, waiting) = (fields.next()??, fields.next()??);
            let stat = read("stat")?;
            // After the name in parentheses: state, then minflt is the eighth field.
            let faults = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(7)?
                .parse()
                .ok()?;
            let status = read("status")?;
            let count = |key: &str| -> Option<u64> {
                let line = status.lines().find(|l| l.starts_with(key))?;
                line.split_whitespace().nth(1)?.parse().ok()
            };
            let switches = (count("voluntary_ctxt")?, count("nonvoluntary_ctxt")?);
            Some(StageThread {
                name,
                on_cpu,
                waiting,
                faults,
                switches,
            })
        })
        .collect();
    threads.sort_by(|a, b| a.name.cmp(&b.name));
    threads
}

/// The median and the mean of the matching thread's busy time a command (each batch's
/// time shared by its commands), from its histogram's counts: each bucket taken at its
/// middle, 2.2 % wide.
fn busy_per_command(counts: &[u64]) -> (u64, f64) {
    use matchbook::runtime::Histogram;
    let median = Histogram::quantile_of(counts, 0.5).unwrap_or(0);
    let (mut total, mut samples) = (0.0, 0.0);
    for (bucket, &n) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
        let (low, high) = Histogram::bucket_bounds(bucket);
        total += n as f64 * (low as f64 + high.saturating_sub(low) as f64 / 2.0);
        samples += n as f64;
    }
    (median, total / samples.max(1.0))
}

/// The runtime on the prepared engine, durable on a journal in `dir` (with its snapshot
/// writer when snapshots are taken) or not.
fn start_runtime(
    w: &workload::Workload,
    dir: &std::path::Path,
    durable: bool,
    snapshot_every: u64,
) -> (matchbook::runtime::Runtime, Option<SnapshotWriter>) {
    let engine = w.prepared_engine();
    let market = matchbook::market::MarketData::new(1, Default::default());
    let clock = std::sync::Arc::new(matchbook::runtime::ManualClock::at(w.time_of_command(0)));
    let mut writer_status = None;
    let runtime = if durable {
        let (log, _) =
            journal::SegmentedJournal::open(dir, SyncPolicy::EveryBatch, 0).expect("journal");
        let check = matchbook::store::SnapshotCheck::new(engine.clone());
        let writer = SnapshotWriter::start(dir.to_owned(), 2, check).expect("writer");
        let plan = (snapshot_every > 0).then(|| SnapshotPlan {
            every: snapshot_every,
            on_stop: false,
            sink: writer.sink(),
            resumes_after: 0,
        });
        writer_status = Some(writer);
        matchbook::runtime::Runtime::start_durable(
            engine,
            market,
            clock,
            65_536,
            Box::new(log),
            plan,
        )
    } else {
        matchbook::runtime::Runtime::start(engine, market, clock, 65_536)
    }
    .expect("runtime");
    (runtime, writer_status)
}

/// The median time of five calls of `f`, in seconds.
fn median_of_five(mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// What a snapshot of the state after `entries` costs: the copies the engine and
/// market-data threads make (the only stall they see), encoding and writing the file, and
/// recovery from it (read, check, decode, replay a tail) against replay from empty.
fn snapshots(w: &workload::Workload, dir: &std::path::Path, entries: &[JournalEntry]) {
    let tail = entries.len() / 10;
    let head = &entries[..entries.len() - tail];
    let mut engine = w.prepared_engine();
    let mut market = MarketData::new(engine.instruments().len(), Default::default());
    let started = Instant::now();
    journal::replay(&mut engine, Some(&mut market), entries);
    let from_empty = started.elapsed().as_secs_f64();
    let mut engine = w.prepared_engine();
    let mut market = MarketData::new(engine.instruments().len(), Default::default());
    journal::replay(&mut engine, Some(&mut market), head);
    let clone_engine = median_of_five(|| drop(std::hint::black_box(engine.clone())));
    let clone_market = median_of_five(|| drop(std::hint::black_box(market.share())));
    let t = Instant::now();
    let snapshot = Snapshot::capture(head.len() as u64, &engine, Some(&market)).expect("encode");
    let encode = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let path = matchbook::store::write_snapshot(dir, &snapshot).expect("write");
    let write = t.elapsed().as_secs_f64();
    let reference = Engine::new(w.config.clone()).expect("bench config is valid");
    let t = Instant::now();
    let bytes = std::fs::read(&path).expect("read");
    let read = Snapshot::from_bytes(&bytes).expect("intact");
    let mut restored = read.engine(&reference).expect("engine");
    let mut restored_market = read
        .market(restored.instruments().len())
        .expect("market")
        .expect("kept");
    let decode = t.elapsed().as_secs_f64();
    let t = Instant::now();
    journal::replay(
        &mut restored,
        Some(&mut restored_market),
        &entries[head.len()..],
    );
    let replay_tail = t.elapsed().as_secs_f64();
    journal::replay(&mut engine, Some(&mut market), &entries[head.len()..]);
    assert_eq!(
        restored.state_hash(),
        engine.state_hash(),
        "snapshot + tail = run"
    );
    println!(
        "snapshot after {} commands: engine {} orders open; copy engine {:.2} ms, copy market data {:.2} ms; encode {:.1} ms, write+fsync {:.1} ms, {:.1} MB (engine {:.1} MB, market data {:.1} MB)",
        head.len(),
        engine.live_order_count(),
        clone_engine * 1e3,
        clone_market * 1e3,
        encode * 1e3,
        write * 1e3,
        bytes.len() as f64 / 1e6,
        snapshot.engine.len() as f64 / 1e6,
        snapshot.market.len() as f64 / 1e6,
    );
    println!(
        "recovery with market data: from empty {:.3} s ({:.2} s per million); from the snapshot: read+check+decode {:.3} s, replay {} tail commands {:.3} s, total {:.3} s",
        from_empty,
        from_empty / entries.len() as f64 * 1e6,
        decode,
        tail,
        replay_tail,
        decode + replay_tail
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(line: &str) -> Result<Args, String> {
        parse_args(&matchbook_bench::cli::words(line))
    }

    /// A value that is not a number (`--n 1e6x`), an unknown flag (`--fsync on`) or no
    /// command to journal ran the default million with nothing said.
    #[test]
    fn a_typo_or_nothing_to_journal_is_refused() {
        assert!(parsed("--n 1e6x").is_err_and(|e| e.contains("--n takes a number")));
        assert!(parsed("--fsync on").is_err_and(|e| e.contains("unknown flag --fsync")));
        assert!(parsed("--n 0").is_err_and(|e| e.contains("at least 1")));
        let args = parsed("--n 5000 --rate 2e5 --dir /tmp/j").expect("valid");
        assert_eq!((args.n, args.rate), (5_000, 2e5));
        assert_eq!(args.dir, std::path::PathBuf::from("/tmp/j"));
    }
}
