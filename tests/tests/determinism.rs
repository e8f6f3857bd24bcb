//! Determinism: the same seeded workload run twice gives the same event stream and the same
//! `state_hash()`, and a cloned engine continuing the stream stays in step with the original.

#![warn(clippy::too_many_lines)]

use matchbook::{Engine, EventRecord, StateHasher};
use matchbook_bench::workload::{self, EXCHANGE_CORE};

fn run(engine: &mut Engine, w: &workload::Workload, range: std::ops::Range<usize>) -> u64 {
    let mut events: Vec<EventRecord> = Vec::new();
    let mut digest = StateHasher::default();
    for i in range {
        events.clear();
        let _ = engine.apply(&w.commands[i], w.time_of_command(i), &mut events);
        for e in &events {
            digest.bytes(format!("{e:?}").as_bytes());
        }
    }
    digest.finish()
}

#[test]
fn same_seed_same_events_and_state_hash() {
    let w = workload::generate(EXCHANGE_CORE, 42, 50_000);
    let again = workload::generate(EXCHANGE_CORE, 42, 50_000);
    assert_eq!(w.commands, again.commands, "generator is deterministic");
    let mut first = w.prepared_engine();
    let mut second = again.prepared_engine();
    assert_eq!(first.state_hash(), second.state_hash());
    let a = run(&mut first, &w, 0..w.commands.len());
    let b = run(&mut second, &again, 0..again.commands.len());
    assert_eq!(a, b, "event streams differ");
    assert_eq!(first.state_hash(), second.state_hash());

    let other = workload::generate(EXCHANGE_CORE, 43, 50_000);
    let mut third = other.prepared_engine();
    run(&mut third, &other, 0..other.commands.len());
    assert_ne!(
        first.state_hash(),
        third.state_hash(),
        "the hash must tell different states apart"
    );
}

#[test]
fn a_clone_mid_stream_continues_identically() {
    let w = workload::generate(EXCHANGE_CORE, 9, 20_000);
    let mut engine = w.prepared_engine();
    run(&mut engine, &w, 0..10_000);
    let mut copy = engine.clone();
    assert_eq!(copy.state_hash(), engine.state_hash());
    let a = run(&mut engine, &w, 10_000..20_000);
    let b = run(&mut copy, &w, 10_000..20_000);
    assert_eq!(a, b);
    assert_eq!(copy.state_hash(), engine.state_hash());
}

#[test]
fn funded_workload_is_deterministic_and_conserves_money() {
    let w = workload::generate_funded(EXCHANGE_CORE, 5, 30_000);
    let mut first = w.prepared_engine();
    let mut second = w.prepared_engine();
    let a = run(&mut first, &w, 0..w.commands.len());
    let b = run(&mut second, &w, 0..w.commands.len());
    assert_eq!(a, b);
    assert_eq!(first.state_hash(), second.state_hash());
    // Every account was funded with the same amount of both currencies; fees went to the
    // exchange; nothing was created or lost.
    let inst = first.instrument(workload::INSTRUMENT).expect("instrument");
    for currency in [inst.base, inst.quote] {
        let c = usize::from(currency.0);
        let held: i128 = (0..EXCHANGE_CORE.accounts)
            .map(|a| {
                let b = first
                    .account(matchbook::AccountId(a))
                    .expect("account")
                    .balances
                    .get(currency);
                i128::from(b.available) + i128::from(b.locked)
            })
            .sum();
        let fees = i128::from(first.fees_collected()[c]);
        assert!(fees > 0, "fees were charged");
        assert_eq!(
            held + fees,
            i128::from(workload::FUNDING) * i128::from(EXCHANGE_CORE.accounts)
        );
    }
}

/// Journal replay: a funded spot workload and a futures workload, each written through the
/// journal (set-up included) and replayed from empty, give the identical event stream and
/// `state_hash()`, and the replay of any prefix equals the run at that point.
#[test]
fn replaying_the_journal_reproduces_events_and_state() {
    use matchbook::journal::{self, CommandLog, Journal, MemoryStorage, SyncPolicy};
    for w in [
        workload::generate_funded(EXCHANGE_CORE, 7, 30_000),
        workload::generate_futures(EXCHANGE_CORE, 8, 30_000),
    ] {
        let storage = MemoryStorage::default();
        let (mut log, _) = Journal::open(storage.clone(), SyncPolicy::EveryBatch).expect("journal");
        let mut engine = Engine::new(w.config.clone()).expect("config");
        let mut live = StateHasher::default();
        let mut checkpoints = Vec::new();
        let mut events: Vec<EventRecord> = Vec::new();
        let all = w.setup.iter().chain(&w.commands).enumerate();
        for (i, command) in all {
            let time = workload::time_of(i);
            log.append(time, command).expect("append");
            events.clear();
            let _ = engine.apply(command, time, &mut events);
            for e in &events {
                live.bytes(format!("{e:?}").as_bytes());
            }
            if i % 7_919 == 0 {
                log.commit().expect("commit");
                checkpoints.push((i + 1, engine.state_hash()));
            }
        }
        log.commit().expect("commit");
        let (_, recovered) = Journal::open(storage, SyncPolicy::EveryBatch).expect("reopen");
        assert_eq!(recovered.entries.len(), w.setup.len() + w.commands.len());
        let mut replayed = Engine::new(w.config.clone()).expect("config");
        let mut digest = StateHasher::default();
        for (i, entry) in recovered.entries.iter().enumerate() {
            events.clear();
            let _ = replayed.apply(&entry.command, entry.time, &mut events);
            for e in &events {
                digest.bytes(format!("{e:?}").as_bytes());
            }
            if let Some(&(_, hash)) = checkpoints.iter().find(|(n, _)| *n == i + 1) {
                assert_eq!(
                    replayed.state_hash(),
                    hash,
                    "state after {} commands",
                    i + 1
                );
            }
        }
        assert_eq!(digest.finish(), live.finish(), "event streams differ");
        assert_eq!(replayed.state_hash(), engine.state_hash());
        // The library helper replays the same way.
        let mut helper = Engine::new(w.config.clone()).expect("config");
        journal::replay(&mut helper, None, &recovered.entries);
        assert_eq!(helper.state_hash(), engine.state_hash());
    }
}

/// Hash of the events of each command, in order.
fn per_command_digests(
    engine: &mut Engine,
    mut market: Option<&mut matchbook::market::MarketData>,
    entries: &[matchbook::journal::JournalEntry],
) -> Vec<u64> {
    let mut events: Vec<EventRecord> = Vec::new();
    entries
        .iter()
        .map(|entry| {
            events.clear();
            let _ = engine.apply(&entry.command, entry.time, &mut events);
            if let Some(market) = market.as_deref_mut() {
                market.on_events(&events);
            }
            let mut digest = StateHasher::default();
            for e in &events {
                digest.bytes(format!("{e:?}").as_bytes());
            }
            digest.finish()
        })
        .collect()
}

/// Snapshots: a funded spot workload and a futures workload run through a segmented
/// journal with a snapshot every 4,000 commands (each starting a new segment). Replaying
/// the journal from empty, and from each snapshot file on, gives the identical event stream
/// for every command after the starting point, the same `state_hash()`, and market data
/// that encodes to the same bytes; each snapshot holds the state the live run had there.
#[test]
fn replay_from_empty_and_from_every_snapshot_agree() {
    use matchbook::journal::{SegmentedJournal, SyncPolicy};
    use matchbook::store::list_snapshots;
    for (n, w) in [
        workload::generate_funded(EXCHANGE_CORE, 17, 20_000),
        workload::generate_futures(EXCHANGE_CORE, 18, 20_000),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = std::env::temp_dir().join(format!("mb-snapshots-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let live = LiveRun::journalled(&w, &dir);
        let (entries, live_digests) = (&live.entries, &live.digests);
        let (_, from_empty) = SegmentedJournal::open(&dir, SyncPolicy::Never, 0).expect("reopen");
        assert_eq!(
            &from_empty.entries, entries,
            "the segments hold every record"
        );
        let (mut replayed, mut replayed_market) = fresh_pair(&w);
        let digests = per_command_digests(
            &mut replayed,
            Some(&mut replayed_market),
            &from_empty.entries,
        );
        assert_eq!(&digests, live_digests, "event stream replayed from empty");
        assert_eq!(replayed.state_hash(), live.engine.state_hash());

        let snapshots = list_snapshots(&dir).expect("list");
        assert_eq!(snapshots.len(), entries.len() / 4_000);
        for file in snapshots {
            check_from_snapshot(&w, &dir, &file, &live);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Both fresh: an engine of the workload's configuration and its market data.
fn fresh_pair(w: &workload::Workload) -> (Engine, matchbook::market::MarketData) {
    let engine = Engine::new(w.config.clone()).expect("config");
    let market = matchbook::market::MarketData::new(engine.instruments().len(), Default::default());
    (engine, market)
}

/// The live run of a workload through a journal in a directory, with a snapshot every
/// 4,000 commands: its final state, the records, each command's digest, and the state
/// hash at each snapshot.
struct LiveRun {
    engine: Engine,
    market: matchbook::market::MarketData,
    entries: Vec<matchbook::journal::JournalEntry>,
    digests: Vec<u64>,
    hashes_at: std::collections::BTreeMap<u64, u64>,
}

impl LiveRun {
    fn journalled(w: &workload::Workload, dir: &std::path::Path) -> Self {
        use matchbook::journal::{CommandLog, JournalEntry, SegmentedJournal, SyncPolicy};
        use matchbook::snapshot::Snapshot;
        use matchbook::store::write_snapshot;
        let (mut live, mut live_market) = fresh_pair(w);
        let (mut log, _) = SegmentedJournal::open(dir, SyncPolicy::Never, 0).expect("journal");
        let mut entries = Vec::new();
        let mut live_digests = Vec::new();
        let mut hashes_at = std::collections::BTreeMap::new();
        for (i, command) in w.setup.iter().chain(&w.commands).enumerate() {
            let time = workload::time_of(i);
            let seq = log.append(time, command).expect("append");
            entries.push(JournalEntry {
                seq,
                time,
                command: command.clone(),
            });
            let last = &entries[entries.len() - 1..];
            live_digests.extend(per_command_digests(&mut live, Some(&mut live_market), last));
            if (i + 1) % 4_000 == 0 {
                log.commit().expect("commit");
                let snapshot = Snapshot::capture(seq, &live, Some(&live_market)).expect("capture");
                write_snapshot(dir, &snapshot).expect("write");
                hashes_at.insert(seq, live.state_hash());
                log.rotate().expect("rotate");
            }
        }
        log.commit().expect("commit");

        Self {
            engine: live,
            market: live_market,
            entries,
            digests: live_digests,
            hashes_at,
        }
    }
}

/// Recovery from one snapshot file: its state is the live run's there, and replaying the
/// journal after it gives the same events, state and market data as the live run.
fn check_from_snapshot(
    w: &workload::Workload,
    dir: &std::path::Path,
    file: &matchbook::store::SnapshotFile,
    live: &LiveRun,
) {
    use matchbook::journal::{SegmentedJournal, SyncPolicy};
    use matchbook::snapshot::{Snapshot, encode_market};
    let bytes = std::fs::read(&file.path).expect("read");
    let snapshot = Snapshot::from_bytes(&bytes).expect("intact");
    let reference = Engine::new(w.config.clone()).expect("config");
    let mut engine = snapshot.engine(&reference).expect("engine");
    let mut market = snapshot
        .market(engine.instruments().len())
        .expect("market")
        .expect("kept");
    assert_eq!(
        engine.state_hash(),
        live.hashes_at[&file.seq],
        "state at {}",
        file.seq
    );
    let (_, tail) = SegmentedJournal::open(dir, SyncPolicy::Never, file.seq).expect("tail");
    assert_eq!(tail.entries.first().map(|e| e.seq), Some(file.seq + 1));
    let digests = per_command_digests(&mut engine, Some(&mut market), &tail.entries);
    assert_eq!(
        digests,
        live.digests[file.seq as usize..],
        "event stream replayed from snapshot {}",
        file.seq
    );
    assert_eq!(
        engine.state_hash(),
        live.engine.state_hash(),
        "from snapshot {}",
        file.seq
    );
    assert_eq!(
        encode_market(&market).expect("encode"),
        encode_market(&live.market).expect("encode"),
        "market data from snapshot {}",
        file.seq
    );
}
