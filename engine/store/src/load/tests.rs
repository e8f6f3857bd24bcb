//! Loading a data directory read-only: the state equals the live engine's, while that
//! engine still holds the directory, and no file changes; a record being written is left
//! out, not cut off; a directory without a pin or pinned to another configuration is
//! refused.

use std::collections::BTreeMap;
use std::path::Path;

use crate::snapshot::encode_market;
use crate::tests::{Scratch, commands, fresh, go_on, options};
use crate::{DurableEngine, StoreError, load, pin_config};

fn demo() -> matchbook_core::EngineConfig {
    matchbook_config::demo::config()
}

/// Every file of `dir` with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("list")
        .map(|entry| {
            let entry = entry.expect("entry");
            let bytes = std::fs::read(entry.path()).expect("read");
            (entry.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

#[test]
fn a_loaded_directory_holds_the_live_state_and_is_left_as_it_was() {
    let scratch = Scratch::new("load-live");
    pin_config(&scratch.0, &demo(), "").expect("pin");
    let commands = commands(650);
    let (mut durable, mut engine, mut market, _) =
        DurableEngine::open(&scratch.0, options(200, 2), fresh).expect("open");
    go_on(&mut durable, &mut engine, &mut market, &commands, 0);
    // The writer still runs (its lock is held): the load neither waits for it nor writes.
    let before = files(&scratch.0);
    let loaded = load(&scratch.0, &demo(), fresh).expect("load");
    assert_eq!(files(&scratch.0), before);
    assert_eq!(loaded.report.snapshot_seq, Some(600));
    assert_eq!(loaded.report.replayed, 50);
    assert_eq!(loaded.report.truncated, 0);
    assert_eq!(loaded.engine.state_hash(), engine.state_hash());
    assert!(
        encode_market(&loaded.market).expect("encode") == encode_market(&market).expect("encode"),
        "market data differs"
    );
    drop(durable);
}

#[test]
fn a_record_being_written_is_left_out_and_not_cut_off() {
    let scratch = Scratch::new("load-torn");
    pin_config(&scratch.0, &demo(), "").expect("pin");
    let commands = commands(300);
    crate::tests::run(&scratch.0, options(200, 2), &commands);
    let newest = crate::journal::segment_path(&scratch.0, 201);
    let bytes = std::fs::read(&newest).expect("read");
    std::fs::write(&newest, &bytes[..bytes.len() - 5]).expect("tear");
    let loaded = load(&scratch.0, &demo(), fresh).expect("load");
    assert_eq!(loaded.report.replayed, 99);
    assert!(loaded.report.truncated > 0);
    assert_eq!(std::fs::read(&newest).expect("read").len(), bytes.len() - 5);
    let (reference, _) = crate::tests::run(
        &Scratch::new("load-torn-ref").0,
        options(0, 1),
        &commands[..299],
    );
    assert_eq!(loaded.engine.state_hash(), reference.state_hash());
    // A segment just created, its header not yet whole, holds no record yet.
    let next = crate::journal::segment_path(&scratch.0, 301);
    std::fs::write(&newest, &bytes).expect("whole again");
    std::fs::write(&next, &crate::journal::MAGIC[..3]).expect("new segment");
    let loaded = load(&scratch.0, &demo(), fresh).expect("load");
    assert_eq!(loaded.report.replayed, 100);
    assert_eq!(loaded.report.truncated, 3);
}

#[test]
fn a_directory_without_a_pin_or_pinned_to_another_configuration_is_refused() {
    let missing = Scratch::new("load-missing");
    let refused = load(&missing.0, &demo(), fresh).expect_err("no directory");
    assert!(
        matches!(refused, StoreError::NotADataDirectory(_)),
        "{refused}"
    );
    assert!(!missing.0.exists(), "a load created the directory");

    let scratch = Scratch::new("load-other");
    pin_config(&scratch.0, &demo(), "").expect("pin");
    crate::tests::run(&scratch.0, options(0, 1), &commands(20));
    let mut other = demo();
    other.max_open_orders += 1;
    let refused = load(&scratch.0, &other, fresh).expect_err("another configuration");
    assert!(matches!(refused, StoreError::ConfigChanged(_)), "{refused}");
}
