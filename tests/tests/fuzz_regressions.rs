//! The fuzz corpus as tests: every committed seed (`fuzz/corpus/<target>/`) and every input
//! that once crashed a target (`fuzz/regressions/<target>/`) runs through its harness here,
//! so `cargo test` keeps each fixed crash fixed without a fuzzer installed.

#![warn(clippy::too_many_lines)]

use std::path::{Path, PathBuf};

use matchbook_tests::fuzz::TARGETS;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = fuzz_dir().join(kind).join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn every_seed_and_every_past_crash_passes_its_harness() {
    let mut ran = 0;
    for (target, harness) in TARGETS {
        let seeds = inputs("corpus", target);
        assert!(!seeds.is_empty(), "{target} has a committed seed corpus");
        for path in seeds.iter().chain(&inputs("regressions", target)) {
            let data = std::fs::read(path).expect("read input");
            harness(&data);
            ran += 1;
        }
    }
    assert!(ran >= TARGETS.len());
}

/// Writes the seed corpus (run once with `--ignored` after changing an encoding):
/// encodings the harnesses cannot guess, such as intact journal and snapshot files.
#[test]
#[ignore = "writes files into fuzz/corpus"]
fn write_seed_corpus() {
    // Commands: bytes from a fixed generator (xorshift).
    let mut random = Xorshift(0x2545_f491_4f6c_dd1d);
    for (i, len) in [64usize, 512, 2048].into_iter().enumerate() {
        let bytes = random.bytes(len);
        write_seed("engine_commands", &format!("random-{i}"), &bytes);
    }
    write_text_seeds();
    write_journal_seed();
    write_snapshot_seeds(&random.bytes(2048));
    write_request_seeds();
    write_stream_seeds();
}

/// A fixed pseudo-random byte source.
struct Xorshift(u64);

impl Xorshift {
    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                self.0 as u8
            })
            .collect()
    }
}

/// Writes one seed file of `target`'s corpus.
fn write_seed(target: &str, name: &str, bytes: &[u8]) {
    let dir = fuzz_dir().join("corpus").join(target);
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join(format!("seed-{name}")), bytes).expect("write");
}

/// Numbers, times and words for the input parsers.
fn write_text_seeds() {
    for (i, text) in [
        "0.01",
        "60000.00",
        "1e5",
        "-1",
        "0.000000000000000000001",
        "99999999999999999999",
        "1,000.50",
        "2026-01-01T00:00:00Z",
        "1767225600000",
        "MINUTES",
        "{\"amount\":\"1\"}",
    ]
    .iter()
    .enumerate()
    {
        write_seed("parse_inputs", &format!("text-{i}"), text.as_bytes());
    }
}

/// A journal of real commands, without the magic (the harness adds it).
fn write_journal_seed() {
    use matchbook::journal::{CommandLog, Journal, MemoryStorage, SyncPolicy};
    let w =
        matchbook_bench::workload::generate_funded(matchbook_bench::workload::EXCHANGE_CORE, 3, 40);
    let storage = MemoryStorage::default();
    // Synced, or the storage's durable bytes would be the magic alone.
    let (mut journal, _) = Journal::open(storage.clone(), SyncPolicy::EveryBatch).expect("journal");
    for (i, command) in w.setup.iter().take(4).chain(&w.commands).enumerate() {
        journal
            .append(matchbook_bench::workload::time_of(i), command)
            .expect("append");
    }
    journal.commit().expect("commit");
    let file = storage.durable();
    write_seed(
        "journal_decode",
        "journal",
        &file[matchbook::journal::MAGIC.len()..],
    );
}

/// A snapshot of the demo engine after running `commands`, as a file and as the
/// harness's split form (engine bytes, then the commands to run on it).
fn write_snapshot_seeds(commands: &[u8]) {
    let (engine, market) = matchbook_tests::fuzz::demo_state_after(commands);
    let snapshot =
        matchbook::snapshot::Snapshot::capture(40, &engine, Some(&market)).expect("capture");
    write_seed("snapshot_decode", "file", &snapshot.to_bytes());
    let length = u16::try_from(snapshot.engine.len()).expect("the seed engine fits the split");
    let mut split = length.to_le_bytes().to_vec();
    split.extend_from_slice(&snapshot.engine);
    split.extend_from_slice(&commands[..512]);
    write_seed("snapshot_decode", "split", &split);
}

/// REST requests: flags (1 admin, 2 JSON), method, key, path NUL body.
fn write_request_seeds() {
    let requests: [(&[u8], &str, &str); 6] = [
        (&[0, 0, 9], "/v1/instruments", ""),
        (&[0, 0, 0], "/v1/account/balances", ""),
        (
            &[2, 1, 0],
            "/v1/account/orders",
            r#"{"instrument_code":"BTC_EUR","type":"LIMIT","side":"BUY","amount":"0.01","price":"59000.00"}"#,
        ),
        (
            &[0, 0, 1],
            "/v1/account/trades?from=2026-01-01T00:00:00Z&max_page_size=5",
            "",
        ),
        (
            &[0, 0, 0],
            "/v1/candlesticks/BTC_EUR?unit=MINUTES&period=1&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z",
            "",
        ),
        (&[1, 0, 3], "/admin/state", ""),
    ];
    for (i, (head, path, body)) in requests.iter().enumerate() {
        let mut bytes = head.to_vec();
        bytes.extend_from_slice(path.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(body.as_bytes());
        write_seed("rest_request", &format!("request-{i}"), &bytes);
    }
    // Nesting bombs from the structured generator (flag bit 2: depth as two bytes,
    // brackets, placement, cut as two bytes, inner text): objects all the way down
    // (brackets 0xff), at the top and in `price`; then a mix.
    for (name, brackets, placement) in [
        ("objects", 0xff, 0),
        ("in-field", 0xff, 3),
        ("mixed", 0x5a, 3),
    ] {
        let mut bomb = vec![4, 1, 0];
        bomb.extend_from_slice(b"/v1/account/orders\0");
        bomb.extend_from_slice(&[0x10, 0x27, brackets, placement, 0, 0]);
        bomb.push(b'1');
        write_seed("rest_request", &format!("nested-bomb-{name}"), &bomb);
    }
}

/// Stream messages (`stream_message`: flags, key choice, message), the last a nesting
/// bomb of the structured generator (flag bit 0, then its bytes as for requests).
fn write_stream_seeds() {
    let messages: [(&[u8], &str); 5] = [
        (
            &[0, 4],
            r#"{"type":"SUBSCRIBE","channels":[{"name":"ORDER_BOOK","instrument_codes":["BTC_EUR"],"depth":5}]}"#,
        ),
        (
            &[0, 0],
            r#"{"type":"SUBSCRIBE","channels":[{"name":"TRADING"},{"name":"ACCOUNT_HISTORY"}]}"#,
        ),
        (
            &[0, 0],
            r#"{"type":"CREATE_ORDER","order":{"instrument_code":"BTC_EUR","type":"LIMIT","side":"BUY","amount":"0.01","price":"59000.00"}}"#,
        ),
        (&[0, 0], r#"{"type":"CANCEL_ALL_AFTER","timeout":60000}"#),
        (&[1, 4, 0x10, 0x27, 0xa5, 0x09, 0, 0], "1"),
    ];
    for (i, (head, message)) in messages.iter().enumerate() {
        let mut bytes = head.to_vec();
        bytes.extend_from_slice(message.as_bytes());
        write_seed("stream_message", &format!("message-{i}"), &bytes);
    }
}

/// The committed snapshot seed passes the load check, so the fuzzer starts from engines
/// that reach the command runs and not only the refusals.
#[test]
fn the_snapshot_seed_is_accepted_by_the_load_check() {
    let read = |name: &str| {
        let bytes = std::fs::read(fuzz_dir().join("corpus/snapshot_decode").join(name));
        matchbook::snapshot::Snapshot::from_bytes(&bytes.expect("seed")).expect("intact")
    };
    let snapshot = read("seed-file");
    // Rewritten with `write_seed_corpus` when the format changes.
    assert_eq!(
        snapshot.version,
        matchbook::snapshot::VERSION,
        "today's format"
    );
    let reference = matchbook::Engine::new(matchbook::demo::config()).expect("demo");
    let engine = snapshot.engine(&reference).expect("consistent");
    let legacy = read("seed-file-v6")
        .engine(&reference)
        .expect("format 6 loads");
    assert!(legacy.holder_count() > 0);
    assert!(engine.holder_count() == 3 && engine.state_hash() != reference.state_hash());
    let market = snapshot.market(engine.instruments().len());
    let market = market.expect("consistent").expect("kept");
    let day = matchbook::market::period::GRANULARITIES[6];
    let candles = (0..7u16).map(|i| {
        let instrument = matchbook::InstrumentId(i);
        let to = engine.now();
        market
            .candles(instrument, day, to, to, Some(1000))
            .map_or(0, |c| c.len())
    });
    let candles: Vec<usize> = candles.collect();
    assert!(
        candles.iter().sum::<usize>() > 0,
        "the seed has market data to check"
    );
}

/// The committed journal seed is a journal of commands (it was the magic alone, written
/// unsynced), so the fuzzer starts from records and not only from a bare header.
#[test]
fn the_journal_seed_holds_commands() {
    use matchbook::journal::{Journal, MemoryStorage, SyncPolicy};
    let seed = std::fs::read(fuzz_dir().join("corpus/journal_decode/seed-journal"));
    let mut file = matchbook::journal::MAGIC.to_vec();
    file.extend_from_slice(&seed.expect("seed"));
    let storage = MemoryStorage::default();
    storage.set_durable(file);
    let (_, recovered) = Journal::open(storage, SyncPolicy::Never).expect("a journal");
    assert!(
        recovered.entries.len() > 40,
        "{} records",
        recovered.entries.len()
    );
}

/// A format-6 engine (`snapshot_decode`, 20 s smoke run in CI) whose held trigger names
/// a slot of about 1.5 billion: the decoder sized the queue positions, kept by slot, to
/// match (12.6 GB, 28 s) before the load check could refuse it. It is refused now.
#[test]
fn a_legacy_engine_naming_a_held_slot_past_its_orders_is_refused() {
    let refused = legacy_refusal("legacy-held-trigger-slot");
    assert!(refused.contains("held trigger"), "{refused}");
}

/// A format-6 engine (`snapshot_decode`, 20 s smoke run of `ci-local`, 2026-11-27) with an
/// order of an account about 500 million past the accounts: the decoder sized the
/// accounts' order chains to it (2 GB, past the fuzzer's memory limit) before the load
/// check could refuse it. It is refused now, before any chain is built.
#[test]
fn a_legacy_engine_with_an_order_of_no_account_is_refused() {
    let refused = legacy_refusal("legacy-order-account-past-accounts");
    assert!(refused.contains("account that does not exist"), "{refused}");
}

/// Why the format-6 engine of a `snapshot_decode` regression input is refused, as the
/// harness reads the input (a little-endian split whose top bit picks format 6, then the
/// engine's bytes); fails, briefly, if it is decoded.
fn legacy_refusal(name: &str) -> String {
    let path = fuzz_dir().join("regressions/snapshot_decode").join(name);
    let data = std::fs::read(path).expect("read input");
    let split = u16::from_le_bytes([data[0], data[1]]);
    assert_ne!(split & 0x8000, 0, "a format-6 input");
    let body = &data[2..];
    let engine = &body[..usize::from(split & 0x7fff).min(body.len())];
    let Err(refused) = matchbook::Engine::decode_legacy(engine) else {
        panic!("the damaged engine {name} was decoded");
    };
    format!("{refused:?}")
}
