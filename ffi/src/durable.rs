//! Durable single-threaded engines: `mb_engine_open` puts an engine on a data directory
//! (journal segments and snapshots, recovered on open), after which every accepted call is
//! journalled and committed before it returns; `mb_engine_copy` branches any engine into
//! one in memory; `mb_engine_load` reads a server's data directory into one.

use std::ffi::c_char;
use std::path::Path;

use matchbook::journal::SyncPolicy;
use matchbook::store::{Host, StoreOptions};

use crate::boundary::{arg, fail, guard, text};
use crate::config::MbConfig;
use crate::engine::{MbEngine, engine_mut, engine_ref, publish};
use crate::status::MbStatus;

/// How a durable engine keeps its data directory.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbStoreOptions {
    /// Snapshot after this many journalled commands (0: only on `mb_engine_snapshot`).
    pub snapshot_every: u64,
    /// Snapshots kept (at least 1); journal segments they make unnecessary are deleted.
    pub keep_snapshots: u32,
    /// fsync the journal before each call returns (false: survives a crash of the process,
    /// not of the machine; for benchmarks).
    pub fsync: bool,
}

impl From<MbStoreOptions> for StoreOptions {
    fn from(o: MbStoreOptions) -> Self {
        Self {
            sync: if o.fsync {
                SyncPolicy::EveryBatch
            } else {
                SyncPolicy::Never
            },
            snapshot_every: o.snapshot_every,
            keep_snapshots: o.keep_snapshots.max(1) as usize,
        }
    }
}

/// The defaults: a snapshot every 100,000 commands, two kept, fsync on.
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_store_options_default() -> MbStoreOptions {
    let defaults = StoreOptions::default();
    MbStoreOptions {
        snapshot_every: defaults.snapshot_every,
        keep_snapshots: defaults.keep_snapshots as u32,
        fsync: defaults.sync == SyncPolicy::EveryBatch,
    }
}

fn storage(e: impl std::fmt::Display) -> MbStatus {
    fail(MbStatus::Storage, e.to_string())
}

fn open(config: &MbConfig, dir: &Path, options: StoreOptions) -> Result<MbEngine, MbStatus> {
    // The fresh state (engine and provisioned holders) is what the journal was written on;
    // the directory is pinned to what it depends on, so another definition is refused.
    let (start, market_data) = (config.start_time_ns, config.market_data);
    let starting_point = config.exchange.starting_point(start, market_data);
    let legacy = config.exchange.fingerprint(start, market_data);
    let mut engine = MbEngine::build(config)?;
    engine
        .host
        .open_on(dir, options, &starting_point, &legacy)
        .map_err(storage)?;
    Ok(engine)
}

/// Opens a durable engine on the data directory `dir` (created if missing): a new
/// directory starts from `config` (holders provisioned at its start time); an existing one
/// is recovered (newest intact snapshot, then the journal after it) and must have been
/// written under the same `config`, else `MB_STATUS_STORAGE`. `options` NULL takes
/// `mb_store_options_default()`. Every accepted command is then journalled (and, with
/// fsync, on stable storage) before its call returns.
///
/// # Safety
/// `config` from `mb_config_*`; `dir` a NUL-terminated UTF-8 path; `options` NULL or
/// valid; `out_engine` writable.
///
/// Threads: any thread, while no thread changes the definition.
/// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_open(
    config: *const MbConfig,
    dir: *const c_char,
    options: *const MbStoreOptions,
    out_engine: *mut *mut MbEngine,
) -> MbStatus {
    guard(|| {
        let config = arg(config, "config")?;
        // SAFETY: forwarded contract.
        let dir = unsafe { text(dir, "dir") }?;
        // SAFETY: NULL or valid per the contract.
        let options = unsafe { options.as_ref() }
            .copied()
            .unwrap_or_else(|| mb_store_options_default());
        publish(out_engine, || open(config, Path::new(dir), options.into()))
    })
}

fn load(dir: &Path, market_data: bool, keep_events: bool) -> Result<MbEngine, MbStatus> {
    let read = matchbook::recorded::load_recorded(dir).map_err(storage)?;
    // Built, then given the state read: the holders provisioned here name the accounts the
    // server provisioned the same way when the directory was new.
    let config = MbConfig {
        exchange: read.exchange,
        market_data,
        start_time_ns: 0,
        history_limits: Default::default(),
        drop_events: !keep_events,
        unchecked_threads: false,
    };
    let mut engine = MbEngine::build(&config)?;
    let market = market_data.then_some(read.loaded.market);
    engine.host = Host::in_memory(read.loaded.engine, market, keep_events);
    Ok(engine)
}

/// An engine in memory holding the state of a `matchbook-rest` server's data directory
/// `dir`: its newest intact snapshot and the journal after it, under the definition the
/// server recorded there (`config.exchange.json`). Nothing in the directory is written or
/// locked, so the server may be running (a command it is still writing is left out); the
/// engine is a branch, changed only by the calls made on it. Holders and accounts keep the
/// definition's names (`mb_refdata_account`). `market_data` nonzero keeps the state's
/// history, candles and tickers; `keep_events` nonzero keeps each later command's events
/// for `mb_engine_poll_events`. `MB_STATUS_STORAGE` (see `mb_last_error`) for a directory
/// that is not a server's, or whose definition does not match its pin.
///
/// # Safety
/// `dir` a NUL-terminated UTF-8 path; `out_engine` writable.
///
/// Threads: any thread.
/// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_load(
    dir: *const c_char,
    market_data: u8,
    keep_events: u8,
    out_engine: *mut *mut MbEngine,
) -> MbStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let dir = unsafe { text(dir, "dir") }?;
        publish(out_engine, || {
            load(Path::new(dir), market_data != 0, keep_events != 0)
        })
    })
}

/// Writes a snapshot of a durable engine now (and prunes what it makes unnecessary).
/// `MB_STATUS_INVALID_ARGUMENT` for an engine not opened on a directory.
///
/// # Safety
/// `engine` live.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_snapshot(engine: *mut MbEngine) -> MbStatus {
    guard(|| {
        let snapshot = engine_mut(engine)?.host.snapshot().ok_or_else(|| {
            fail(
                MbStatus::InvalidArgument,
                "engine has no data directory (use mb_engine_open)",
            )
        })?;
        snapshot.map(|_| ()).map_err(storage)
    })
}

/// A copy of `engine` in memory with its state, market data and reference data as they
/// are now: a branch to try other commands on, leaving `engine` as it is (what-if runs of
/// a simulation). A durable engine's copy is not durable; no events wait in it. It costs
/// what the state holds, history included.
///
/// # Safety
/// `engine` live; `out_engine` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_copy(
    engine: *const MbEngine,
    out_engine: *mut *mut MbEngine,
) -> MbStatus {
    guard(|| {
        let engine = engine_ref(engine)?;
        publish(out_engine, || engine.copy())
    })
}
