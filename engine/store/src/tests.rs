//! Data-directory tests on real files: a durable engine recovers the same state with and
//! without snapshots, pruning keeps what recovery needs, a damaged newest snapshot falls
//! back to an older one, and damage a snapshot cannot cover (a torn record inside an old
//! segment, a missing segment) refuses recovery naming the file; unfinished snapshot
//! files are deleted.

use std::path::{Path, PathBuf};

use super::*;
use crate::snapshot::encode_market;
use matchbook_core::Command;
use matchbook_core::EventRecord;
use matchbook_core::fixed::{Price, Qty};
use matchbook_core::{AccountId, CurrencyId, InstrumentId, Timestamp};
use matchbook_core::{NewOrder, Side};

/// 2026-01-01 00:00 UTC.
const T0: i64 = 1_767_225_600_000_000_000;

pub(crate) struct Scratch(pub(crate) PathBuf);

impl Scratch {
    pub(crate) fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mb-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(crate) fn fresh() -> (Engine, MarketData) {
    let engine = Engine::new(matchbook_config::demo::config()).expect("demo config");
    let market = MarketData::new(engine.instruments().len(), Default::default());
    (engine, market)
}

/// Two funded traders crossing on BTC_EUR, with cancels: `n` commands in all.
pub(crate) fn commands(n: usize) -> Vec<Command> {
    let mut out = vec![Command::CreateHolder, Command::CreateHolder];
    for account in [AccountId(0), AccountId(1)] {
        for (currency, amount) in [
            (CurrencyId(0), 100_000_000_000),
            (CurrencyId(2), 10_000_000_000),
        ] {
            out.push(Command::Deposit {
                account,
                currency,
                amount,
            });
        }
    }
    let mut i = 0i64;
    while out.len() < n {
        let side = if i % 2 == 0 { Side::Buy } else { Side::Sell };
        let account = AccountId((i % 2) as u32);
        let price = Price(5_000_000 + (i * 37 % 11 - 5) * 100);
        out.push(Command::PlaceOrder(NewOrder::limit(
            account,
            InstrumentId(0),
            side,
            price,
            Qty(10_000 + i % 7 * 1_000),
        )));
        if i % 5 == 4 {
            out.push(Command::CancelAll {
                account,
                scope: matchbook_core::CancelScope::All,
            });
        }
        i += 1;
    }
    out.truncate(n);
    out
}

pub(crate) fn time(i: usize) -> Timestamp {
    Timestamp(T0 + i as i64 * 1_000_000)
}

pub(crate) fn options(every: u64, keep: usize) -> StoreOptions {
    StoreOptions {
        sync: crate::journal::SyncPolicy::EveryBatch,
        snapshot_every: every,
        keep_snapshots: keep,
    }
}

/// Runs `commands` through a durable engine in `dir`; returns the live state.
pub(crate) fn run(dir: &Path, options: StoreOptions, commands: &[Command]) -> (Engine, MarketData) {
    let (mut durable, mut engine, mut market, _) =
        DurableEngine::open(dir, options, fresh).expect("open");
    let mut events: Vec<EventRecord> = Vec::new();
    for (i, command) in commands.iter().enumerate() {
        events.clear();
        let applied = durable.apply(
            &mut engine,
            Some(&mut market),
            command,
            time(i),
            &mut events,
        );
        assert!(applied.is_ok(), "journal write");
    }
    (engine, market)
}

fn first_seqs(dir: &Path) -> Vec<u64> {
    crate::journal::list_segments(dir)
        .expect("segments")
        .iter()
        .map(|s| s.first_seq)
        .collect()
}

fn snapshot_seqs(dir: &Path) -> Vec<u64> {
    list_snapshots(dir)
        .expect("snapshots")
        .iter()
        .map(|s| s.seq)
        .collect()
}

pub(crate) fn assert_same(recovered: &Recovery, engine: &Engine, market: &MarketData) {
    assert_eq!(recovered.engine.state_hash(), engine.state_hash());
    assert!(
        encode_market(&recovered.market).expect("encode") == encode_market(market).expect("encode"),
        "market data differs"
    );
}

#[test]
fn recovery_with_snapshots_equals_the_live_state_and_pruning_keeps_what_it_needs() {
    let scratch = Scratch::new("prune");
    let commands = commands(650);
    let (engine, market) = run(&scratch.0, options(200, 2), &commands);
    // Snapshots at 200, 400 and 600; the oldest pruned, and the segments before 400 too.
    assert_eq!(snapshot_seqs(&scratch.0), vec![400, 600]);
    assert_eq!(first_seqs(&scratch.0), vec![401, 601]);
    let recovered = recover(&scratch.0, options(200, 2), fresh).expect("recover");
    assert_eq!(recovered.report.snapshot_seq, Some(600));
    assert_eq!(recovered.report.replayed, 50);
    assert_same(&recovered, &engine, &market);

    // Without snapshots, the whole journal replays to the same state.
    let plain = Scratch::new("plain");
    let (engine_plain, _) = run(&plain.0, options(0, 2), &commands);
    assert_eq!(engine_plain.state_hash(), engine.state_hash());
    assert_eq!(first_seqs(&plain.0), vec![1]);
    let recovered = recover(&plain.0, options(0, 2), fresh).expect("recover");
    assert_eq!(recovered.report.snapshot_seq, None);
    assert_eq!(recovered.report.replayed, 650);
    assert_same(&recovered, &engine, &market);
}

#[test]
fn a_reopened_durable_engine_continues_where_it_stopped() {
    let scratch = Scratch::new("continue");
    let commands = commands(500);
    let (engine, market) = run(&scratch.0, options(150, 2), &commands);
    let (all, _) = run(&Scratch::new("continue-ref").0, options(0, 1), &commands);
    assert_eq!(all.state_hash(), engine.state_hash());
    let _ = market;
    // Stop after 300 commands, reopen, go on: same state as one uninterrupted run.
    let split = Scratch::new("split");
    run(&split.0, options(150, 2), &commands[..300]);
    let (mut durable, mut engine2, mut market2, report) =
        DurableEngine::open(&split.0, options(150, 2), fresh).expect("reopen");
    assert_eq!(report.snapshot_seq, Some(300));
    assert_eq!(durable.last_seq(), 300);
    go_on(&mut durable, &mut engine2, &mut market2, &commands, 300);
    assert_eq!(engine2.state_hash(), engine.state_hash());
}

#[test]
fn a_damaged_newest_snapshot_falls_back_to_the_one_before() {
    let scratch = Scratch::new("fallback");
    let commands = commands(450);
    let (engine, market) = run(&scratch.0, options(200, 2), &commands);
    let newest = snapshot_path(&scratch.0, 400);
    damage(&newest);
    let recovered = recover(&scratch.0, options(200, 2), fresh).expect("recover");
    assert_eq!(recovered.report.snapshot_seq, Some(200));
    assert_eq!(recovered.report.skipped_snapshots.len(), 1);
    assert_eq!(recovered.report.skipped_snapshots[0].0, newest);
    assert_eq!(recovered.report.replayed, 250);
    assert_same(&recovered, &engine, &market);
}

/// Applies `commands` from index `from` on, each durable before the next.
pub(crate) fn go_on(
    durable: &mut DurableEngine,
    engine: &mut Engine,
    market: &mut MarketData,
    commands: &[Command],
    from: usize,
) {
    let mut events = Vec::new();
    for (i, command) in commands.iter().enumerate().skip(from) {
        let applied = durable.apply(engine, Some(&mut *market), command, time(i), &mut events);
        assert!(applied.is_ok(), "journal write");
    }
}

/// Flips a byte in the middle of a file.
fn damage(path: &Path) {
    let mut bytes = std::fs::read(path).expect("read");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    std::fs::write(path, bytes).expect("write");
}

#[test]
fn pruning_counts_only_snapshots_that_load_so_a_restart_always_has_one() {
    let scratch = Scratch::new("prune-checked");
    let commands = commands(650);
    run(&scratch.0, options(200, 2), &commands[..450]);
    assert_eq!(snapshot_seqs(&scratch.0), vec![200, 400]);
    // The newest snapshot goes bad; the engine reopens from the older one and goes on to
    // write another. Pruning to two must keep the older good one and its journal, not the
    // bad one (which pruning by count alone kept, deleting the good one).
    damage(&snapshot_path(&scratch.0, 400));
    let (mut durable, mut engine, mut market, report) =
        DurableEngine::open(&scratch.0, options(200, 2), fresh).expect("reopen");
    assert_eq!(report.snapshot_seq, Some(200));
    go_on(&mut durable, &mut engine, &mut market, &commands, 450);
    drop(durable);
    assert_eq!(snapshot_seqs(&scratch.0), vec![200, 400, 650]);
    assert_eq!(
        first_seqs(&scratch.0)[0],
        201,
        "the journal after the good snapshot"
    );
    // Now the newest goes bad too: recovery falls back to the good one and the journal.
    damage(&snapshot_path(&scratch.0, 650));
    let recovered = recover(&scratch.0, options(200, 2), fresh).expect("recover");
    assert_eq!(recovered.report.snapshot_seq, Some(200));
    assert_eq!(recovered.report.skipped_snapshots.len(), 2);
    assert_eq!(recovered.report.replayed, 450);
    assert_same(&recovered, &engine, &market);
}

#[test]
fn damage_that_no_snapshot_covers_refuses_recovery_naming_the_file() {
    // Every snapshot unreadable while the journal's start was pruned: records are missing.
    let scratch = Scratch::new("missing");
    run(&scratch.0, options(200, 1), &commands(450));
    for file in list_snapshots(&scratch.0).expect("list") {
        std::fs::write(&file.path, b"MBSNAP01 nothing useful").expect("damage");
    }
    match recover(&scratch.0, options(200, 1), fresh) {
        Err(StoreError::NoUsableStart { journal, skipped }) => {
            let crate::journal::JournalError::Corrupt { path, .. } = *journal else {
                panic!("expected the journal's gap, got {journal:?}");
            };
            assert_eq!(path, crate::journal::segment_path(&scratch.0, 401));
            assert_eq!(skipped.len(), 1, "the damaged snapshot is named too");
        }
        other => panic!("expected a refusal, got {:?}", other.map(|r| r.report)),
    }

    // A torn record inside a segment that is not the newest.
    let torn = Scratch::new("torn-old");
    run(&torn.0, options(200, 5), &commands(450));
    let old = crate::journal::segment_path(&torn.0, 201);
    let bytes = std::fs::read(&old).expect("read");
    std::fs::write(&old, &bytes[..bytes.len() - 3]).expect("cut");
    // Without the newer snapshot, recovery starts at 200 and must read that segment.
    std::fs::remove_file(snapshot_path(&torn.0, 400)).expect("remove");
    match recover(&torn.0, options(200, 5), fresh) {
        Err(StoreError::Journal(crate::journal::JournalError::Corrupt {
            path, reason, ..
        })) => {
            assert_eq!(path, old);
            assert!(reason.contains("not the newest"), "{reason}");
        }
        other => panic!("expected a refusal, got {:?}", other.map(|r| r.report)),
    }

    // A segment missing from the middle of the chain.
    let gap = Scratch::new("gap");
    run(&gap.0, options(200, 5), &commands(650));
    std::fs::remove_file(crate::journal::segment_path(&gap.0, 401)).expect("remove");
    for seq in [400, 600] {
        std::fs::remove_file(snapshot_path(&gap.0, seq)).expect("remove");
    }
    match recover(&gap.0, options(200, 5), fresh) {
        Err(StoreError::Journal(crate::journal::JournalError::Corrupt {
            path, reason, ..
        })) => {
            assert_eq!(path, crate::journal::segment_path(&gap.0, 601));
            assert!(reason.contains("gap"), "{reason}");
        }
        other => panic!("expected a refusal, got {:?}", other.map(|r| r.report)),
    }
}

#[test]
fn a_flipped_bit_in_any_record_but_the_last_refuses_recovery_at_its_offset() {
    let scratch = Scratch::new("bitflip");
    run(&scratch.0, options(0, 1), &commands(120));
    let segment = crate::journal::segment_path(&scratch.0, 1);
    let original = std::fs::read(&segment).expect("read");
    // Every bit of a stretch of records in the middle of the file.
    let middle = original.len() / 2;
    for at in middle..middle + 64 {
        for bit in 0..8 {
            let mut damaged = original.clone();
            damaged[at] ^= 1 << bit;
            std::fs::write(&segment, &damaged).expect("damage");
            match recover(&scratch.0, options(0, 1), fresh) {
                Err(StoreError::Journal(crate::journal::JournalError::Corrupt {
                    path,
                    offset,
                    ..
                })) => {
                    assert_eq!(path, segment);
                    assert!(
                        offset <= at as u64,
                        "offset {offset} after the damage at {at}"
                    );
                }
                other => panic!("byte {at} bit {bit}: {:?}", other.map(|r| r.report)),
            }
        }
    }
    std::fs::write(&segment, &original).expect("restore");
    assert!(recover(&scratch.0, options(0, 1), fresh).is_ok());
}

#[test]
fn a_torn_tail_of_the_newest_segment_is_cut_off_and_reported() {
    let scratch = Scratch::new("torn-tail");
    let commands = commands(300);
    run(&scratch.0, options(200, 2), &commands);
    let newest = crate::journal::segment_path(&scratch.0, 201);
    let bytes = std::fs::read(&newest).expect("read");
    std::fs::write(&newest, &bytes[..bytes.len() - 5]).expect("tear");
    let recovered = recover(&scratch.0, options(200, 2), fresh).expect("recover");
    assert_eq!(recovered.report.snapshot_seq, Some(200));
    assert_eq!(recovered.report.replayed, 99);
    assert!(recovered.report.truncated > 0);
    let (reference, _) = run(&Scratch::new("torn-ref").0, options(0, 1), &commands[..299]);
    assert_eq!(recovered.engine.state_hash(), reference.state_hash());
}

/// A directory whose only usable start is a snapshot of another format (an upgrade across
/// a snapshot format change after the journal before it was pruned) is refused, and the
/// refusal names both versions.
#[test]
fn a_snapshot_of_another_format_is_named_when_recovery_cannot_start() {
    let scratch = Scratch::new("foreign-format");
    let commands = commands(450);
    run(&scratch.0, options(200, 1), &commands);
    assert_eq!(snapshot_seqs(&scratch.0), vec![400]);
    let path = snapshot_path(&scratch.0, 400);
    let mut bytes = std::fs::read(&path).expect("read");
    let magic = crate::snapshot::MAGIC.len();
    bytes[magic] = crate::snapshot::LEGACY_VERSION - 1;
    let end = bytes.len() - 4;
    let crc = crate::journal::crc32c(&bytes[magic..end]).to_le_bytes();
    bytes[end..].copy_from_slice(&crc);
    std::fs::write(&path, bytes).expect("write");
    let Err(refused) = recover(&scratch.0, options(200, 1), fresh) else {
        panic!("recovered from a snapshot of another format");
    };
    let message = refused.to_string();
    let versions = format!(
        "format version {}, this build reads {}",
        crate::snapshot::LEGACY_VERSION - 1,
        crate::snapshot::VERSION
    );
    assert!(message.contains(&versions), "{message}");
}

/// A snapshot write that never finished (a full disk, a crash) left its temporary file
/// for ever, holding the space the journal needed; the next write deletes it, and a write
/// that fails deletes its own.
#[test]
fn unfinished_snapshot_files_are_deleted() {
    let scratch = Scratch::new("partial");
    std::fs::create_dir_all(&scratch.0).expect("dir");
    let (engine, market) = fresh();
    let stale = scratch.0.join("snapshot-00000000000000000007.snap.partial");
    std::fs::write(&stale, b"cut short").expect("write");
    let snapshot = crate::snapshot::Snapshot::capture(9, &engine, Some(&market)).expect("capture");
    write_snapshot(&scratch.0, &snapshot).expect("written");
    assert!(!stale.exists(), "an earlier write's leftover is deleted");
    // A write that cannot finish: a directory holds its name, so the rename fails.
    std::fs::create_dir(snapshot_path(&scratch.0, 10)).expect("in the way");
    let blocked = crate::snapshot::Snapshot::capture(10, &engine, Some(&market)).expect("capture");
    assert!(write_snapshot(&scratch.0, &blocked).is_err());
    let partial: Vec<String> = std::fs::read_dir(&scratch.0)
        .expect("list")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".partial"))
        .collect();
    assert!(partial.is_empty(), "{partial:?}");
}

/// Key files, the cursor key, the configuration copy and the pin are written this way;
/// the key store, `--keys-out`'s plaintext keys and the cursor key were once created with
/// the process's umask (0644 here), readable by every local user.
#[test]
fn files_written_atomically_are_the_owners_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("mb-atomic-mode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("keys-out.json");
    // A stale temporary file readable by all is not reused.
    std::fs::write(dir.join("keys-out.json.tmp"), b"stale").expect("stale tmp");
    write_file_atomically(&file, b"[]").expect("written");
    let mode = std::fs::metadata(&file).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    assert_eq!(std::fs::read(&file).expect("read"), b"[]");
    write_file_atomically(&file, b"[1]").expect("replaced");
    assert_eq!(std::fs::read(&file).expect("read"), b"[1]");
    assert!(
        !dir.join("keys-out.json.tmp").exists(),
        "no temporary file left"
    );
    let _ = std::fs::remove_dir_all(dir);
}
