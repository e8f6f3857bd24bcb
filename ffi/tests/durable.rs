//! Durable engines through the C ABI: every call acknowledged before a close is there after
//! `mb_engine_open` recovers the directory (from snapshots and the journal), the recovered
//! engine goes on exactly like one that never stopped, a directory written under another
//! definition is refused with `MB_STATUS_STORAGE`, and the new exports keep the boundary
//! rules (NULLs, a forced panic, a snapshot asked of an engine without a directory).

#![warn(clippy::too_many_lines)]
// Calling the C ABI from Rust needs `unsafe`, as a C caller would.
#![allow(unsafe_code)]

mod common;

use std::ffi::CString;
use std::ptr::{null, null_mut};

use common::{DEFINITION, START};
use matchbook_ffi::MbStatus;
use matchbook_ffi::config::*;
use matchbook_ffi::constructors::*;
use matchbook_ffi::diagnostics::*;
use matchbook_ffi::durable::*;
use matchbook_ffi::engine::*;
use matchbook_ffi::refdata::*;
use matchbook_ffi::types::*;

const OK: MbStatus = MbStatus::Ok;

struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mb-ffi-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Self(dir)
    }

    fn c_path(&self) -> CString {
        CString::new(self.0.to_str().expect("UTF-8 path")).expect("no NUL")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn config(start: i64) -> *mut MbConfig {
    let mut config = null_mut();
    // SAFETY: valid pointers.
    unsafe {
        assert_eq!(mb_config_parse(DEFINITION.as_ptr(), 0, &mut config), OK);
        assert_eq!(mb_config_set_market_data(config, 1), OK);
        assert_eq!(mb_config_set_start_time(config, start), OK);
    }
    config
}

fn open(config: *const MbConfig, dir: &Scratch, options: &MbStoreOptions) -> *mut MbEngine {
    let mut engine = null_mut();
    let path = dir.c_path();
    // SAFETY: valid pointers.
    let status = unsafe { mb_engine_open(config, path.as_ptr(), options, &mut engine) };
    assert_eq!(status, OK, "open {}", last_error());
    engine
}

fn plain(config: *const MbConfig) -> *mut MbEngine {
    let mut engine = null_mut();
    // SAFETY: valid pointers.
    assert_eq!(unsafe { mb_engine_new(config, &mut engine) }, OK);
    engine
}

fn last_error() -> String {
    let mut buf = [0 as std::ffi::c_char; 512];
    let mut len = 0usize;
    // SAFETY: a writable buffer of its stated size.
    unsafe { mb_last_error(buf.as_mut_ptr(), buf.len(), &mut len) };
    let bytes: Vec<u8> = buf[..len.min(buf.len())].iter().map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn state_hash(engine: *const MbEngine) -> u64 {
    let mut hash = 0;
    // SAFETY: a live engine and a writable slot.
    assert_eq!(unsafe { mb_engine_state_hash(engine, &mut hash) }, OK);
    hash
}

fn accounts(engine: *const MbEngine) -> (u32, u32, u16) {
    let (mut holder, mut maker, mut taker, mut btc_eur) = (0, 0, 0, 0);
    // SAFETY: a live engine; valid strings and slots.
    unsafe {
        let refdata = mb_engine_refdata(engine);
        let main = c"main".as_ptr();
        assert_eq!(
            mb_refdata_account(refdata, c"maker".as_ptr(), main, &mut holder, &mut maker),
            OK
        );
        assert_eq!(
            mb_refdata_account(refdata, c"taker".as_ptr(), main, &mut holder, &mut taker),
            OK
        );
        assert_eq!(
            mb_refdata_instrument(refdata, c"BTC_EUR".as_ptr(), &mut btc_eur),
            OK
        );
    }
    (maker, taker, btc_eur)
}

/// Calls `from..to` of a scripted flow: resting bids and asks from the maker, crossing
/// orders from the taker (through `mb_engine_submit` and the fast path), and cancels.
fn drive(engine: *mut MbEngine, from: i64, to: i64) {
    let (maker, taker, btc_eur) = accounts(engine);
    for i in from..to {
        let t = START + 1_000 + i * 1_000_000;
        let price = 6_000_000 + (i % 9 - 4) * 1_000;
        // SAFETY: a live engine; commands by value.
        unsafe {
            match i % 4 {
                0 => {
                    let bid = mb_cmd_place_limit(maker, btc_eur, 0, price, 2_000, 0);
                    let _ = mb_engine_submit(engine, t, &bid, null_mut());
                }
                1 => {
                    let ask = mb_cmd_place_limit(maker, btc_eur, 1, price + 5_000, 2_000, 0);
                    let _ = mb_engine_submit(engine, t, &ask, null_mut());
                }
                2 => {
                    let mut order = MbOrderRef::default();
                    let _ = mb_engine_place_limit(
                        engine,
                        t,
                        taker,
                        btc_eur,
                        (i / 4 % 2) as u32,
                        price,
                        1_000,
                        1,
                        &mut order,
                    );
                }
                _ => {
                    let cancel = mb_cmd_cancel_all(maker, 0, 0);
                    if i % 8 == 7 {
                        let _ = mb_engine_submit(engine, t, &cancel, null_mut());
                    }
                }
            }
            assert_eq!(mb_engine_clear_events(engine), OK);
        }
    }
}

#[test]
fn a_reopened_engine_has_every_call_and_goes_on_like_one_that_never_stopped() {
    let dir = Scratch::new("reopen");
    let config = config(START);
    let options = MbStoreOptions {
        snapshot_every: 25,
        keep_snapshots: 2,
        fsync: true,
    };
    let reference = plain(config);
    drive(reference, 0, 180);

    let engine = open(config, &dir, &options);
    drive(engine, 0, 120);
    // SAFETY: a live engine, then freed once (no explicit snapshot: the journal has it).
    unsafe { mb_engine_free(engine) };
    let snapshots = matchbook::store::list_snapshots(&dir.0).expect("list");
    assert_eq!(snapshots.len(), 2, "interval snapshots, older ones pruned");
    // Freeing took a last snapshot: nothing is left to replay.
    let (_, journal) = matchbook::journal::SegmentedJournal::open(
        &dir.0,
        matchbook::journal::SyncPolicy::Never,
        snapshots[1].seq,
    )
    .expect("journal");
    assert!(
        journal.entries.is_empty(),
        "the last snapshot covers every call"
    );

    let engine = open(config, &dir, &options);
    let reopened = plain(config);
    drive(reopened, 0, 120);
    assert_eq!(
        state_hash(engine),
        state_hash(reopened),
        "recovered after 120 calls"
    );
    drive(engine, 120, 180);
    // SAFETY: a live durable engine.
    assert_eq!(unsafe { mb_engine_snapshot(engine) }, OK);
    unsafe { mb_engine_free(engine) };
    let engine = open(config, &dir, &options);
    assert_eq!(
        state_hash(engine),
        state_hash(reference),
        "recovered after 180 calls"
    );
    // SAFETY: live handles, each freed once.
    unsafe {
        mb_engine_free(engine);
        mb_engine_free(reopened);
        mb_engine_free(reference);
        mb_config_free(config);
    }
}

#[test]
fn a_directory_a_live_engine_holds_is_refused_to_a_second_opener() {
    let dir = Scratch::new("lock");
    let config = config(START);
    let defaults = mb_store_options_default();
    let engine = open(config, &dir, &defaults);
    drive(engine, 0, 3);
    let mut second = null_mut();
    let path = dir.c_path();
    // SAFETY: valid pointers.
    let status = unsafe { mb_engine_open(config, path.as_ptr(), null(), &mut second) };
    assert_eq!(status, MbStatus::Storage);
    assert!(second.is_null());
    let message = last_error();
    assert!(message.contains("in use by another engine"), "{message}");
    assert!(
        message.contains(dir.0.to_str().expect("UTF-8")),
        "{message}"
    );
    assert!(
        message.contains(&format!("process {}", std::process::id())),
        "{message}"
    );
    let before = state_hash(engine);
    // SAFETY: live handles, freed once.
    unsafe { mb_engine_free(engine) };
    // Once the first lets go, the directory opens, with every call it acknowledged.
    let reopened = open(config, &dir, &defaults);
    assert_eq!(state_hash(reopened), before);
    // SAFETY: live handles, freed once.
    unsafe {
        mb_engine_free(reopened);
        mb_config_free(config);
    }
}

#[test]
fn a_directory_written_under_another_definition_is_refused() {
    let dir = Scratch::new("pin");
    let first = config(START);
    let defaults = mb_store_options_default();
    let engine = open(first, &dir, &defaults);
    drive(engine, 0, 10);
    // SAFETY: live handles.
    unsafe { mb_engine_free(engine) };
    let other = config(START + 1);
    let mut engine = null_mut();
    let path = dir.c_path();
    // SAFETY: valid pointers.
    let status = unsafe { mb_engine_open(other, path.as_ptr(), null(), &mut engine) };
    assert_eq!(status, MbStatus::Storage);
    assert!(engine.is_null());
    assert!(
        last_error().contains("another configuration"),
        "{}",
        last_error()
    );
    // SAFETY: live configs, freed once.
    unsafe {
        mb_config_free(first);
        mb_config_free(other);
    }
}

#[test]
fn the_durable_exports_keep_the_boundary_rules() {
    let dir = Scratch::new("boundary");
    let config = config(START);
    let path = dir.c_path();
    let mut engine = null_mut();
    // SAFETY: each call passes NULL where the contract forbids it, or valid pointers.
    unsafe {
        assert_eq!(
            mb_engine_open(null(), path.as_ptr(), null(), &mut engine),
            MbStatus::NullArgument
        );
        assert_eq!(
            mb_engine_open(config, null(), null(), &mut engine),
            MbStatus::NullArgument
        );
        assert_eq!(
            mb_engine_open(config, path.as_ptr(), null(), null_mut()),
            MbStatus::NullArgument
        );
        assert_eq!(mb_engine_snapshot(null_mut()), MbStatus::NullArgument);
        let volatile = plain(config);
        assert_eq!(mb_engine_snapshot(volatile), MbStatus::InvalidArgument);
        mb_debug_panic_next_call();
        assert_eq!(
            mb_engine_open(config, path.as_ptr(), null(), &mut engine),
            MbStatus::Panic
        );
        mb_debug_panic_next_call();
        assert_eq!(mb_engine_snapshot(volatile), MbStatus::Panic);
        mb_engine_free(volatile);
        mb_config_free(config);
    }
}

/// `mb_engine_copy`: a branch of a durable engine in memory. The copy starts equal, goes on
/// alone (the original and its directory are untouched by what the copy does), outlives the
/// original, and the boundary rules hold (NULLs).
#[test]
fn a_copy_is_a_branch_in_memory_that_leaves_the_original_alone() {
    let dir = Scratch::new("copy");
    let config = config(START);
    let options = MbStoreOptions {
        snapshot_every: 0,
        keep_snapshots: 1,
        fsync: false,
    };
    let original = open(config, &dir, &options);
    drive(original, 0, 60);
    let mut copy = null_mut();
    // SAFETY: a live engine and a writable slot; NULLs refused.
    unsafe {
        assert_eq!(mb_engine_copy(original, &mut copy), OK, "{}", last_error());
        assert_eq!(mb_engine_copy(null(), &mut copy), MbStatus::NullArgument);
        assert_eq!(mb_engine_copy(original, null_mut()), MbStatus::NullArgument);
    }
    assert_eq!(state_hash(copy), state_hash(original));
    drive(copy, 60, 120);
    let reference = plain(config);
    drive(reference, 0, 60);
    assert_eq!(
        state_hash(original),
        state_hash(reference),
        "the original as it was"
    );
    drive(reference, 60, 120);
    assert_eq!(
        state_hash(copy),
        state_hash(reference),
        "the copy went on alone"
    );
    // SAFETY: live engines, each freed once; the copy after the original.
    unsafe { mb_engine_free(original) };
    let reopened = open(config, &dir, &options);
    let at_copy = plain(config);
    drive(at_copy, 0, 60);
    assert_eq!(
        state_hash(reopened),
        state_hash(at_copy),
        "the directory has none of the copy's calls"
    );
    drive(copy, 120, 130);
    unsafe {
        mb_engine_free(copy);
        mb_engine_free(reopened);
        mb_engine_free(at_copy);
        mb_engine_free(reference);
        mb_config_free(config);
    }
}

/// The definition of [`DEFINITION`] in JSON, as a server records it in its directory.
const RECORDED: &str = r#"{"holders": [
    {"name": "maker", "accounts": [{"name": "main",
        "deposits": {"BTC": "10", "EUR": "1000000", "USD": "1000000"}}]},
    {"name": "taker", "accounts": [{"name": "main",
        "deposits": {"EUR": "1000000", "USD": "1000000"}}]}]}"#;

/// A directory as `matchbook-rest` keeps one: pinned to the engine configuration, the
/// definition recorded beside the pin, the holders provisioned through the journal; then
/// `drive`'s first calls made on the C engine and repeated through the journal. Returns
/// the running host (it holds the directory's lock) and its state hash.
fn server_directory(dir: &Scratch) -> (matchbook::store::Host, u64) {
    use matchbook::store::Host;
    let exchange = matchbook_config::Exchange::from_json(RECORDED).expect("definition");
    let engine_config = exchange.engine_config().expect("configuration");
    let engine = matchbook::Engine::new(engine_config.clone()).expect("engine");
    let market = matchbook::market::MarketData::new(engine.instruments().len(), Default::default());
    let mut host = Host::in_memory(engine, Some(market), false);
    let options = matchbook::store::StoreOptions::default();
    host.open_on(&dir.0, options, &engine_config, "")
        .expect("open");
    std::fs::write(dir.0.join(matchbook_config::RECORDED_DEFINITION), RECORDED).expect("record");
    let time = matchbook::Timestamp(START);
    let currency = |code: &str| {
        let id = host.engine.currency_by_code(code)?;
        Some((id, host.engine.balance_scale(id).ok()?))
    };
    let currencies: Vec<_> = ["BTC", "EUR", "USD"].map(|c| (c, currency(c))).to_vec();
    let lookup = |code: &str| {
        currencies
            .iter()
            .find(|(c, _)| *c == code)
            .and_then(|x| x.1)
    };
    matchbook_config::provision(&exchange.holders, lookup, |command| {
        host.apply(&command, time).expect("journalled")
    })
    .expect("provisioned");
    let hash = host.engine.state_hash();
    (host, hash)
}

#[test]
fn a_servers_directory_loads_into_an_engine_in_memory_while_the_server_runs() {
    let dir = Scratch::new("load");
    let (running, hash) = server_directory(&dir);
    let path = dir.c_path();
    let mut engine = null_mut();
    // SAFETY: valid pointers.
    let status = unsafe { mb_engine_load(path.as_ptr(), 1, 1, &mut engine) };
    assert_eq!(status, OK, "load {}", last_error());
    assert_eq!(state_hash(engine), hash);
    // Named as the definition names them, and a branch: calls change it, not the directory.
    let journal: Vec<u64> = matchbook::journal::list_segments(&dir.0)
        .expect("segments")
        .iter()
        .map(|s| std::fs::metadata(&s.path).expect("segment").len())
        .collect();
    drive(engine, 0, 40);
    assert_ne!(state_hash(engine), hash);
    let after: Vec<u64> = matchbook::journal::list_segments(&dir.0)
        .expect("segments")
        .iter()
        .map(|s| std::fs::metadata(&s.path).expect("segment").len())
        .collect();
    assert_eq!(after, journal, "the directory's journal is untouched");
    // SAFETY: a live engine, freed once.
    unsafe { mb_engine_free(engine) };
    drop(running);
}

/// `mb_engine_load` of `dir`, refused with `MB_STATUS_STORAGE` and no engine: the message.
fn refused_load(dir: &Scratch) -> String {
    let mut engine = null_mut();
    let path = dir.c_path();
    // SAFETY: valid pointers.
    let status = unsafe { mb_engine_load(path.as_ptr(), 1, 1, &mut engine) };
    assert_eq!(status, MbStatus::Storage);
    assert!(engine.is_null());
    last_error()
}

#[test]
fn a_directory_that_is_not_a_servers_is_refused_with_a_storage_status() {
    let missing = Scratch::new("load-missing");
    let refused = refused_load(&missing);
    assert!(
        refused.contains("not a matchbook data directory"),
        "{refused}"
    );
    // One the C ABI wrote itself is opened with its definition, not loaded.
    let own = Scratch::new("load-own");
    let config = config(START);
    // SAFETY: a live engine, freed once.
    unsafe { mb_engine_free(open(config, &own, &mb_store_options_default())) };
    let refused = refused_load(&own);
    assert!(
        refused.contains("records no exchange definition"),
        "{refused}"
    );
    let mut engine = null_mut();
    // SAFETY: NULL path: refused, nothing written.
    let status = unsafe { mb_engine_load(null(), 1, 1, &mut engine) };
    assert_eq!(status, MbStatus::NullArgument);
    // SAFETY: freed once.
    unsafe { mb_config_free(config) };
}
