//! Determinism: the same seeded workload run twice gives the same event stream and the same
//! `state_hash()`, and a cloned engine continuing the stream stays in step with the original.

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
                    .balances[c];
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
