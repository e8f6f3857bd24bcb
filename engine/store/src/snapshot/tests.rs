//! Snapshot file tests: the state round-trips exactly, and every truncation, every flipped
//! bit and a foreign version are refused instead of loading a wrong state.

use super::*;
use matchbook_core::Command;
use matchbook_core::fixed::{Price, Qty};
use matchbook_core::{AccountId, CurrencyId, InstrumentId};
use matchbook_core::{NewOrder, OrderType, Side, Trail, TriggerRef};

fn busy_engine() -> (Engine, MarketData) {
    busy_engine_with(VERSION)
}

/// The busy state as a format could hold it: formats before 8 have no dead-man switch,
/// formats before 9 no trailing or mark-price trigger orders and no icebergs.
fn busy_engine_with(format: u8) -> (Engine, MarketData) {
    let switch = format >= 8;
    let mut engine = Engine::new(matchbook_config::demo::config()).expect("demo");
    let mut market = MarketData::new(engine.instruments().len(), Default::default());
    let mut commands = vec![Command::CreateHolder, Command::CreateHolder];
    for account in [AccountId(0), AccountId(1)] {
        for currency in [CurrencyId(0), CurrencyId(2)] {
            commands.push(Command::Deposit {
                account,
                currency,
                amount: 1_000_000_000_000,
            });
        }
    }
    for i in 0..40i64 {
        let side = if i % 3 == 0 { Side::Sell } else { Side::Buy };
        commands.push(Command::PlaceOrder(NewOrder::limit(
            AccountId((i % 2) as u32),
            InstrumentId(0),
            side,
            Price(5_000_000 + (i % 5) * 100),
            Qty(20_000),
        )));
    }
    if switch {
        // An armed dead-man switch (format 8), an hour away.
        commands.push(Command::SetCancelAllAfter {
            account: AccountId(1),
            timeout: 3_600_000_000_000,
        });
    }
    if format >= 9 {
        commands.extend(format_9_orders());
    }
    let mut events = Vec::new();
    for (i, command) in commands.iter().enumerate() {
        events.clear();
        let time = Timestamp(1_767_225_600_000_000_000 + i as i64 * 1_000);
        let result = engine.apply(command, time, &mut events);
        assert!(
            result.is_ok()
                || !matches!(command, Command::PlaceOrder(o) if o.order_type.is_trigger()),
            "{command:?}: {result:?}"
        );
        market.on_events(&events);
    }
    (engine, market)
}

/// The orders format 9 added: a trailing stop-limit, a mark-price stop, an iceberg, a
/// one-cancels-the-other pair and a bracket.
fn format_9_orders() -> Vec<Command> {
    // A trailing stop-limit on the spot market and a mark-price stop on the perpetual.
    let mut trailing = NewOrder::limit(
        AccountId(0),
        InstrumentId(0),
        Side::Sell,
        Price(1),
        Qty(20_000),
    );
    trailing.order_type = OrderType::TrailingStopLimit;
    trailing.price = None;
    trailing.trail = Some(Trail::Bps(150));
    trailing.limit_offset = Some(Price(500));
    let mut on_mark = NewOrder::limit(AccountId(1), InstrumentId(5), Side::Buy, Price(1), Qty(10));
    on_mark.order_type = OrderType::StopMarket;
    on_mark.price = None;
    on_mark.trigger_price = Some(Price(700_000));
    on_mark.trigger_ref = TriggerRef::MarkPrice;
    // And an iceberg showing a quarter of its amount.
    let mut iceberg = NewOrder::limit(
        AccountId(1),
        InstrumentId(0),
        Side::Sell,
        Price(5_100_000),
        Qty(40_000),
    );
    iceberg.display = Some(Qty(10_000));
    let mut commands = Vec::from([trailing, on_mark, iceberg].map(Command::PlaceOrder));
    // A one-cancels-the-other pair and a bracket waiting for its entry.
    let first = NewOrder::limit(
        AccountId(0),
        InstrumentId(0),
        Side::Sell,
        Price(5_200_000),
        Qty(10_000),
    );
    let mut second = first;
    second.order_type = OrderType::StopMarket;
    second.price = None;
    second.trigger_price = Some(Price(4_000_000));
    commands.push(Command::PlaceOco {
        first,
        second: Box::new(second),
    });
    let entry = NewOrder::limit(
        AccountId(1),
        InstrumentId(0),
        Side::Buy,
        Price(4_500_000),
        Qty(10_000),
    );
    let exits = matchbook_core::BracketExits {
        take_profit: Price(5_500_000),
        stop_loss: Price(4_200_000),
        stop_limit: None,
    };
    commands.push(Command::PlaceBracket { entry, exits });
    commands
}

#[test]
fn engine_and_market_data_round_trip_exactly() {
    let (engine, market) = busy_engine();
    assert!(!market.trades().is_empty(), "the workload traded");
    let snapshot = Snapshot::capture(46, &engine, Some(&market)).expect("capture");
    let back = Snapshot::from_bytes(&snapshot.to_bytes()).expect("read");
    assert_eq!(back, snapshot);
    assert_eq!(back.seq, 46);
    assert_eq!(back.time, engine.now());
    let reference = Engine::new(matchbook_config::demo::config()).expect("demo");
    let restored = back.engine(&reference).expect("engine");
    assert_eq!(restored.state_hash(), engine.state_hash());
    let restored_market = back
        .market(engine.instruments().len())
        .expect("market")
        .expect("kept");
    assert!(encode_market(&restored_market).expect("encode") == snapshot.market);
    // Without market data the part is empty and comes back as none.
    let bare = Snapshot::capture(46, &engine, None).expect("capture");
    assert!(bare.market.is_empty());
    assert!(
        Snapshot::from_bytes(&bare.to_bytes())
            .expect("read")
            .market(engine.instruments().len())
            .expect("market")
            .is_none()
    );
}

#[test]
fn truncations_and_flipped_bits_are_refused() {
    let (engine, market) = busy_engine();
    let bytes = Snapshot::capture(46, &engine, Some(&market))
        .expect("capture")
        .to_bytes();
    // Every bit of the header and a spread of the body (each check reads the whole file).
    let stride = (bytes.len() / 1_500).max(1);
    let positions = (0..64.min(bytes.len())).chain((64..bytes.len()).step_by(stride));
    for at in positions {
        assert!(
            Snapshot::from_bytes(&bytes[..at]).is_err(),
            "truncated to {at} bytes"
        );
        for bit in 0..8 {
            let mut damaged = bytes.clone();
            damaged[at] ^= 1 << bit;
            assert!(
                Snapshot::from_bytes(&damaged).is_err(),
                "byte {at} bit {bit}"
            );
        }
    }
}

#[test]
fn another_format_version_is_refused_by_name() {
    let (engine, _) = busy_engine();
    let mut bytes = Snapshot::capture(1, &engine, None)
        .expect("capture")
        .to_bytes();
    bytes[MAGIC.len()] = VERSION + 1;
    let end = bytes.len() - 4;
    let crc = crc32c(&bytes[MAGIC.len()..end]);
    bytes[end..].copy_from_slice(&crc.to_le_bytes());
    match Snapshot::from_bytes(&bytes) {
        Err(SnapshotError::Damaged(reason)) => assert!(
            reason.contains(&format!(
                "format version {}, this build reads {VERSION}",
                VERSION + 1
            )),
            "{reason}"
        ),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn an_intact_file_with_a_bad_state_encoding_is_refused_not_panicked_on() {
    let snapshot = Snapshot {
        version: VERSION,
        seq: 1,
        time: Timestamp(0),
        engine: vec![0xff; 64],
        market: vec![1, 2, 3],
    };
    let back = Snapshot::from_bytes(&snapshot.to_bytes()).expect("the frame is intact");
    let reference = Engine::new(matchbook_config::demo::config()).expect("demo");
    assert!(back.engine(&reference).is_err());
    assert!(back.market(reference.instruments().len()).is_err());
}

/// The committed snapshot of the current format: the busy state above, engine and market
/// data, as the encoder wrote it when the format was last changed.
const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/snapshot-v9.snap");
/// The same state as format 8 wrote it, without trigger terms.
const GOLDEN_V8: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/snapshot-v8.snap");
/// The same state but its dead-man switch as written by format 7, before the switches.
const GOLDEN_PREVIOUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/snapshot-v7.snap");
/// The same state as written by format 6, the last format before the engine image.
const GOLDEN_LEGACY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/snapshot-v6.snap");

/// A format change is a deliberate act: the committed file still loads (passing the load
/// check) into the same state, and today's encoder reproduces it byte for byte. After a
/// deliberate change (and a bumped `VERSION`), `MATCHBOOK_BLESS=1` writes the new file.
#[test]
fn the_committed_snapshot_loads_and_is_reproduced_byte_for_byte() {
    let (engine, market) = busy_engine();
    let encoded = Snapshot::capture(46, &engine, Some(&market))
        .expect("capture")
        .to_bytes();
    if std::env::var_os("MATCHBOOK_BLESS").is_some() {
        std::fs::write(GOLDEN, &encoded).expect("bless");
    }
    let golden = std::fs::read(GOLDEN).expect("the committed snapshot");
    let snapshot = Snapshot::from_bytes(&golden).expect("reads");
    assert_eq!(snapshot.version, VERSION);
    let reference = Engine::new(matchbook_config::demo::config()).expect("demo");
    let restored = snapshot.engine(&reference).expect("loads");
    assert_eq!(restored.state_hash(), engine.state_hash());
    let instruments = engine.instruments().len();
    let restored_market = snapshot.market(instruments).expect("market").expect("kept");
    assert!(
        encode_market(&restored_market).expect("encode") == encode_market(&market).expect("encode")
    );
    assert!(
        encoded == golden,
        "the encoder no longer writes format {VERSION}"
    );
}

/// An engine's image, with `book_sequences` false without them: format 6 wrote the number
/// of the last event that changed each book where later formats count the commands that
/// did, so an upgraded book keeps counting from the old number.
fn image_of(engine: &Engine, book_sequences: bool) -> matchbook_core::image::EngineImage {
    let mut image = engine.image().expect("image");
    if !book_sequences {
        for book in &mut image.books {
            book.sequence = 0;
        }
    }
    image
}

/// Loads the committed snapshot `file`, written by format `version`, beside the engine
/// and market data that wrote it: checks that its market data reads back the same and
/// that it saves as today's format and reads back as the same state. Returns (the engine
/// that wrote it, the engine it upgrades to).
fn upgraded(file: &str, version: u8) -> (Engine, Engine) {
    let (engine, market) = busy_engine_with(version);
    let previous = Snapshot::from_bytes(&std::fs::read(file).expect("committed"))
        .expect("an earlier format is still read");
    assert_eq!(previous.version, version);
    let reference = Engine::new(matchbook_config::demo::config()).expect("demo");
    let upgraded = previous.engine(&reference).expect("loads");
    let upgraded_market = previous
        .market(engine.instruments().len())
        .expect("market")
        .expect("kept");
    assert!(
        encode_market(&upgraded_market).expect("encode") == encode_market(&market).expect("encode")
    );
    let rewritten =
        Snapshot::capture(previous.seq, &upgraded, Some(&upgraded_market)).expect("capture");
    assert_eq!(rewritten.version, VERSION);
    let reread = Snapshot::from_bytes(&rewritten.to_bytes()).expect("reads");
    let reread_engine = reread.engine(&reference).expect("loads");
    assert_eq!(reread_engine.state_hash(), upgraded.state_hash());
    (engine, upgraded)
}

/// A data directory written by format 8 upgrades: its snapshot loads into the same state
/// (it could hold no trigger terms) and saves as today's format.
#[test]
fn a_format_8_snapshot_upgrades_to_the_same_state() {
    let (engine, upgraded) = upgraded(GOLDEN_V8, PREVIOUS_VERSION);
    assert_eq!(upgraded.state_hash(), engine.state_hash());
}

/// A data directory written by format 7 upgrades: its snapshot loads into the same state
/// but for the dead-man switch format 7 could not hold, and saves as today's format.
#[test]
fn a_format_7_snapshot_upgrades_to_the_same_state() {
    let (engine, upgraded) = upgraded(GOLDEN_PREVIOUS, EARLIER_VERSION);
    assert_eq!(upgraded.cancel_all_after(AccountId(1)), None);
    assert!(image_of(&upgraded, true) == image_of(&engine, true));
}

/// A data directory written by format 6 upgrades: its snapshot loads into the same state
/// (but for the meaning of the book sequence), and saving that state again writes today's
/// format.
#[test]
fn a_format_6_snapshot_upgrades_to_the_same_state() {
    let (engine, market) = busy_engine_with(LEGACY_VERSION);
    let legacy = Snapshot::from_bytes(&std::fs::read(GOLDEN_LEGACY).expect("committed"))
        .expect("format 6 is still read");
    assert_eq!(legacy.version, LEGACY_VERSION);
    let reference = Engine::new(matchbook_config::demo::config()).expect("demo");
    let upgraded = legacy.engine(&reference).expect("loads");
    assert!(image_of(&upgraded, false) == image_of(&engine, false));
    let upgraded_market = legacy
        .market(engine.instruments().len())
        .expect("market")
        .expect("kept");
    let rewritten = Snapshot::capture(legacy.seq, &upgraded, Some(&upgraded_market))
        .expect("capture")
        .to_bytes();
    let reread = Snapshot::from_bytes(&rewritten).expect("reads");
    assert_eq!(reread.version, VERSION);
    let reread_engine = reread.engine(&reference).expect("loads");
    assert_eq!(reread_engine.state_hash(), upgraded.state_hash());
    assert!(
        encode_market(
            &reread
                .market(engine.instruments().len())
                .expect("market")
                .expect("kept")
        )
        .expect("encode")
            == encode_market(&market).expect("encode"),
        "an upgraded state saves as today's format"
    );
}

/// Format 7 drops what the engine recomputes: the same state is smaller than in format 6.
#[test]
fn the_engine_image_holds_no_index_or_scratch() {
    let legacy =
        Snapshot::from_bytes(&std::fs::read(GOLDEN_LEGACY).expect("committed")).expect("reads");
    let (engine, _) = busy_engine();
    let today = encode_engine(&engine).expect("encode");
    assert!(
        today.len() < legacy.engine.len(),
        "format 7 engine part {} bytes, format 6 {}",
        today.len(),
        legacy.engine.len()
    );
}
