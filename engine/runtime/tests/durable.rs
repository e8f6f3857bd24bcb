//! The durable runtime on real files: snapshots at the plan's interval and at the stop, and
//! a recovery from the last one that needs no replay and gives the same state.

#![warn(clippy::too_many_lines)]

use std::path::PathBuf;
use std::sync::Arc;

use matchbook_config::demo;
use matchbook_core::{AccountId, CancelScope, Command, CurrencyId, Engine, InstrumentId};
use matchbook_core::{NewOrder, Price, Qty, Side, Timestamp};
use matchbook_market::MarketData;
use matchbook_runtime::{ManualClock, Runtime, SnapshotPlan};
use matchbook_store::journal::SyncPolicy;
use matchbook_store::snapshot::encode_market;
use matchbook_store::{
    DirLock, Recovery, SnapshotOutcome, SnapshotWriter, StoreOptions, WriterStatus, list_snapshots,
    recover,
};

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mb-runtime-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn fresh() -> (Engine, MarketData) {
    let engine = Engine::new(demo::config()).expect("demo config");
    let market = MarketData::new(engine.instruments().len(), Default::default());
    (engine, market)
}

/// Two funded traders quoting BTC_EUR, with cancels: `n` commands in all.
fn commands(n: usize) -> Vec<Command> {
    let mut out = vec![Command::CreateHolder, Command::CreateHolder];
    for account in [AccountId(0), AccountId(1)] {
        for (currency, amount) in [(0, 100_000_000_000), (2, 10_000_000_000)] {
            let currency = CurrencyId(currency);
            out.push(Command::Deposit {
                account,
                currency,
                amount,
            });
        }
    }
    for i in 0.. {
        if out.len() >= n {
            break;
        }
        let account = AccountId(i as u32 % 2);
        let side = if i % 2 == 0 { Side::Buy } else { Side::Sell };
        let price = Price(5_000_000 + (i * 37 % 11 - 5) * 100);
        let order = NewOrder::limit(account, InstrumentId(0), side, price, Qty(10_000));
        out.push(Command::PlaceOrder(order));
        if i % 5 == 4 {
            let scope = CancelScope::All;
            out.push(Command::CancelAll { account, scope });
        }
    }
    out.truncate(n);
    out
}

/// A durable runtime on `recovery`'s state and journal, its snapshots handed to `writer`;
/// with the directory's lock, to hold while it runs.
fn durable(
    recovery: Recovery,
    writer: &SnapshotWriter,
    every: u64,
    on_stop: bool,
    resumes_after: u64,
) -> (Runtime, DirLock) {
    let clock = Arc::new(ManualClock::at(Timestamp(1_767_225_600_000_000_000)));
    let plan = SnapshotPlan {
        every,
        on_stop,
        sink: writer.sink(),
        resumes_after,
    };
    let Recovery {
        engine,
        market,
        journal,
        lock,
        ..
    } = recovery;
    let log = Box::new(journal);
    let runtime = Runtime::start_durable(engine, market, clock, 1024, log, Some(plan));
    (runtime.expect("runtime"), lock)
}

/// What `scratch` holds, recovered, and a snapshot writer for it.
fn open(scratch: &Scratch) -> (Recovery, SnapshotWriter) {
    let recovery = recover(&scratch.0, options(), fresh).expect("open");
    let check = recovery.check.clone();
    let writer = SnapshotWriter::start(scratch.0.clone(), 3, check).expect("writer");
    (recovery, writer)
}

fn options() -> StoreOptions {
    StoreOptions {
        sync: SyncPolicy::EveryBatch,
        snapshot_every: 250,
        keep_snapshots: 3,
    }
}

#[test]
fn the_runtime_snapshots_at_its_interval_and_at_the_stop() {
    let scratch = Scratch::new("snapshots");
    let (recovery, writer) = open(&scratch);
    let (runtime, lock) = durable(recovery, &writer, 250, true, 0);
    let handle = runtime.handle();
    for command in commands(700) {
        handle.apply_blocking(command).expect("applied");
    }
    // Once a read has seen the last command, both interval copies were made, by the market
    // stage from its replica: the matching thread never copies.
    let seen = handle.read_blocking(|view| view.seq).expect("read");
    assert_eq!(seen, 700);
    assert_eq!(handle.stats().snapshots, 2);
    let (engine, market) = runtime.shutdown().expect("stopped");
    let status = writer.finish();
    assert_eq!(status.last_error, None);
    // Interval snapshots at the end of the batches holding commands 250 and 500 (one
    // command per batch here), and one at the stop. The copy at 500 is dropped for the one
    // at 700 if it was still waiting for a slow write of 250's (a loaded machine).
    let seqs: Vec<u64> = list_snapshots(&scratch.0)
        .expect("snapshots")
        .iter()
        .map(|s| s.seq)
        .collect();
    let expected = match status.superseded {
        0 => vec![250, 500, 700],
        _ => vec![250, 700],
    };
    assert_eq!(seqs, expected);
    assert_eq!(status.written + status.superseded, 3);
    drop(lock);
    let recovered = recover(&scratch.0, options(), fresh).expect("recover");
    assert_eq!(recovered.report.snapshot_seq, Some(700));
    assert_eq!(recovered.report.replayed, 0);
    assert_eq!(recovered.engine.state_hash(), engine.state_hash());
    let encoded = |m: &MarketData| encode_market(m).expect("encode");
    assert!(encoded(&recovered.market) == encoded(&market));
}

#[test]
fn a_snapshot_asked_for_is_taken_even_when_nothing_changed_since_the_last() {
    let scratch = Scratch::new("asked");
    let (recovery, writer) = open(&scratch);
    let (runtime, _lock) = durable(recovery, &writer, 0, false, 0);
    let handle = runtime.handle();
    for command in commands(10) {
        handle.apply_blocking(command).expect("applied");
    }
    let sequenced = handle.stats().sequenced;
    // The second request finds nothing new since the first: an operator asking for a
    // backup point (or a host whose last write failed) still gets a file written.
    let first = handle.request_snapshot().expect("asked");
    assert_eq!(first, 1, "requests are numbered from 1");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while writer.status().written_requests < first {
        assert!(
            std::time::Instant::now() < deadline,
            "the first was never written"
        );
        std::thread::yield_now();
    }
    assert_eq!(writer.status().written, 1, "the first request's answer");
    let second = handle.request_snapshot().expect("asked again");
    assert_eq!(second, 2);
    let _ = runtime.shutdown().expect("stopped");
    let status = writer.finish();
    assert_eq!(status.written, 2, "both requests were answered");
    assert_eq!(status.written_requests, second);
    assert_eq!(status.last_seq, Some(sequenced));
    assert_eq!((status.failures, status.last_error), (0, None));
    let seqs: Vec<u64> = (list_snapshots(&scratch.0).expect("snapshots").iter())
        .map(|s| s.seq)
        .collect();
    assert_eq!(seqs, vec![sequenced]);
}

#[test]
fn a_resumed_runtime_stands_at_its_last_command_until_the_next() {
    let scratch = Scratch::new("resumed");
    let (recovery, writer) = open(&scratch);
    let (runtime, lock) = durable(recovery, &writer, 0, true, 0);
    for command in commands(12) {
        runtime.handle().apply_blocking(command).expect("applied");
    }
    let _ = runtime.shutdown().expect("stopped");
    drop((writer, lock));

    let (recovery, writer) = open(&scratch);
    let last = recovery.report.snapshot_seq.expect("the stop's snapshot");
    assert_eq!(last, 12);
    let (runtime, _lock) = durable(recovery, &writer, 0, false, last);
    let handle = runtime.handle();
    let stats = handle.stats();
    // Before: every position read 0 until a command came, a read saw command 0, and a
    // snapshot asked for then was labelled 0 while holding the state after command 12.
    assert_eq!(
        (stats.sequenced, stats.matched, stats.acked, stats.market),
        (last, last, last, last)
    );
    assert_eq!(handle.read_blocking(|view| view.seq).expect("read"), last);
    handle.request_snapshot().expect("asked");
    let _ = runtime.shutdown().expect("stopped");
    assert_eq!(writer.finish().last_seq, Some(last));
}

/// Snapshots falling due faster than the writer writes them: the market stage copies its
/// state at most once per write. Before, it copied at every command here (a copy each
/// time one fell due, each replacing the one still waiting): 40 copies for 2 writes, the
/// stage busy copying instead of serving market data.
#[test]
fn copies_due_while_the_writer_is_busy_are_taken_once_it_has_room() {
    let scratch = Scratch::new("owed");
    let recovery = recover(&scratch.0, options(), fresh).expect("open");
    // The writer stays busy after its first write until the test lets it go.
    let (go, hold) = std::sync::mpsc::channel::<()>();
    let mut held = false;
    let observer = Box::new(move |_: &SnapshotOutcome<'_>, _: &WriterStatus| {
        if !std::mem::replace(&mut held, true) {
            // Bounded, so a failing test ends rather than waits on a writer held for good.
            let _ = hold.recv_timeout(std::time::Duration::from_secs(20));
        }
    });
    let check = recovery.check.clone();
    let writer = SnapshotWriter::observed(scratch.0.clone(), 3, check, observer).expect("writer");
    let (runtime, _lock) = durable(recovery, &writer, 1, false, 0);
    let handle = runtime.handle();
    let all = commands(40);
    for command in all.iter().cloned() {
        handle.apply_blocking(command).expect("applied");
    }
    assert_eq!(handle.read_blocking(|view| view.seq).expect("read"), 40);
    let copies = handle.stats().snapshots;
    assert!(copies <= 2, "{copies} copies while the writer was busy");
    go.send(()).expect("let the writer go");
    // The owed copy is taken once the waiting one is (not forced by the stop).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while handle.stats().snapshots < copies + 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the owed copy never taken"
        );
        std::thread::yield_now();
    }
    let _ = runtime.shutdown().expect("stopped");
    let status = writer.finish();
    assert_eq!(
        status.last_seq,
        Some(40),
        "the owed copy was taken and written"
    );
    assert_eq!(
        status.superseded, 0,
        "no copy was taken only to be replaced"
    );
    assert_eq!((status.failures, status.last_error), (0, None));
}
