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
