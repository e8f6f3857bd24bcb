//! # matchbook-store
//!
//! Durability: the [`journal::CommandLog`] every command is appended to before it is
//! answered (the segmented file journal is its first implementation), snapshots, and a data
//! directory: the segmented journal, snapshot files and the rule that prunes them,
//! and recovery (the newest intact snapshot, then the journal records after it, through
//! the same `Engine::apply`). Used by the runtime's owners (the REST server) and by
//! [`DurableEngine`], the single-threaded durable engine of the C and Python bindings.
//!
//! Files: `journal-<first seq>.log` segments (see [`crate::journal`]) and
//! `snapshot-<seq>.snap` files (see [`crate::snapshot`]), written to a temporary name,
//! synced, then renamed, so a snapshot file is either complete or absent.

#![warn(clippy::too_many_lines)]

mod durable;
mod files;
mod host;
pub mod journal;
mod load;
mod lock;
mod pin;
pub mod snapshot;
mod writer;

pub use durable::{DurableEngine, Journalled};
pub use files::{
    Pruned, SnapshotCheck, SnapshotFile, list_snapshots, prune, snapshot_path,
    write_file_atomically, write_snapshot,
};
pub use host::Host;
pub use load::{Loaded, load};
pub use lock::{DirLock, LOCK_FILE};
pub use pin::{CONFIG_PIN, PIN_FORMAT, check_pin, pin_config, pin_of};
pub use writer::{SnapshotObserver, SnapshotOutcome, SnapshotWriter, WriterStatus};

use std::path::{Path, PathBuf};

use crate::journal::{JournalError, SegmentedJournal, SyncPolicy, replay};
use crate::snapshot::{Snapshot, SnapshotError};
use matchbook_core::Engine;
use matchbook_market::MarketData;

/// How a data directory is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreOptions {
    /// When the journal fsyncs.
    pub sync: SyncPolicy,
    /// Take a snapshot after this many journalled commands (0: only when asked and at
    /// shutdown).
    pub snapshot_every: u64,
    /// Snapshots kept (at least 1), counting only snapshots that load and check; journal
    /// segments older than the oldest kept snapshot are deleted.
    pub keep_snapshots: usize,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            sync: SyncPolicy::EveryBatch,
            snapshot_every: 100_000,
            keep_snapshots: 2,
        }
    }
}

/// Why a data directory could not be opened, recovered or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The journal is unreadable or damaged.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// A snapshot could not be used or written.
    #[error("snapshot {path}: {source}")]
    Snapshot {
        /// File.
        path: PathBuf,
        /// Cause.
        source: SnapshotError,
    },
    /// The directory was written under another configuration.
    #[error(
        "data directory {0} was written with another configuration (currencies, instruments, \
         fees or opening holders); start with that configuration or a new data directory"
    )]
    ConfigChanged(PathBuf),
    /// The directory's configuration pin was written in a format this build does not read.
    #[error(
        "data directory {dir} has a configuration pin of format {found}; this build reads \
         pin-v{}",
        pin::PIN_FORMAT
    )]
    PinFormat {
        /// The directory.
        dir: PathBuf,
        /// The format found (`pin-vN`).
        found: String,
    },
    /// No snapshot could be used and the journal does not reach back before them.
    #[error(
        "{journal}; the snapshots that would have started recovery were refused: {}",
        skipped.iter().map(|(path, why)| format!("{}: {why}", path.display()))
            .collect::<Vec<_>>().join("; ")
    )]
    NoUsableStart {
        /// Why the journal alone cannot be replayed.
        journal: Box<JournalError>,
        /// Each refused snapshot and why.
        skipped: Vec<(PathBuf, String)>,
    },
    /// The directory holds no configuration pin: no engine ever started on it.
    #[error("{0} is not a matchbook data directory (it has no config.pin)")]
    NotADataDirectory(PathBuf),
    /// Another live engine holds the directory (its journal would interleave with ours).
    #[error(
        "data directory {dir} is in use by another engine{}; stop it first or use another \
         directory",
        holder.map_or(String::new(), |pid| format!(" (process {pid})"))
    )]
    Locked {
        /// The directory.
        dir: PathBuf,
        /// Process id of the holder, when it could be read.
        holder: Option<u32>,
    },
    /// A file operation failed.
    #[error("{path}: {source}")]
    Io {
        /// File or directory.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
}

/// What recovery did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Sequence number of the snapshot resumed from (`None`: replayed from empty).
    pub snapshot_seq: Option<u64>,
    /// Journal records replayed after it.
    pub replayed: usize,
    /// Bytes of a torn last record cut off the journal.
    pub truncated: u64,
    /// Snapshots that were skipped as unreadable, newest first, with the reason.
    pub skipped_snapshots: Vec<(PathBuf, String)>,
}

impl RecoveryReport {
    /// Whether there was any earlier state (a snapshot or journalled commands).
    pub fn resumed(&self) -> bool {
        self.snapshot_seq.is_some() || self.replayed > 0
    }
}

/// State recovered from a data directory, and its journal ready for appends.
#[derive(Debug)]
pub struct Recovery<L = SegmentedJournal> {
    /// The engine as the journalled commands left it.
    pub engine: Engine,
    /// Market data as those commands' events built it.
    pub market: MarketData,
    /// The journal (or the log that stands for it), positioned after its last record.
    pub journal: L,
    /// What happened.
    pub report: RecoveryReport,
    /// The directory's writer lock: keep it for as long as the engine runs.
    pub lock: DirLock,
    /// Checks snapshot files against the configuration's fresh engine (for pruning).
    pub check: SnapshotCheck,
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Recovers the state in `dir` (created when missing): the newest snapshot that reads back
/// intact and consistent with the engine `fresh()` builds (damaged ones are skipped and
/// reported), else that fresh state; then every journal record
/// after it replayed into the engine and market data. A damaged journal refuses recovery
/// with the file and offset.
pub fn recover(
    dir: &Path,
    options: StoreOptions,
    fresh: impl FnOnce() -> (Engine, MarketData),
) -> Result<Recovery, StoreError> {
    recover_with(dir, fresh, |after| {
        SegmentedJournal::open(dir, options.sync, after)
    })
}

/// As [`recover`], with the commands after the snapshot from another log (a replicated
/// one): `open_log(after)` opens it and returns the records after command `after` (the
/// snapshot's, 0 without one) to replay.
pub fn recover_with<L>(
    dir: &Path,
    fresh: impl FnOnce() -> (Engine, MarketData),
    open_log: impl FnOnce(u64) -> Result<(L, journal::Recovered), JournalError>,
) -> Result<Recovery<L>, StoreError> {
    std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    let lock = DirLock::acquire(dir)?;
    let mut resumed = resume(dir, fresh)?;
    let opened = open_log(resumed.after).map_err(|e| no_start(e, &mut resumed.report));
    let (journal, recovered) = opened?;
    resumed.replay(&recovered);
    let Resumed {
        engine,
        market,
        report,
        check,
        ..
    } = resumed;
    Ok(Recovery {
        engine,
        market,
        journal,
        report,
        lock,
        check,
    })
}

/// Why the journal could not be read from the state recovery starts at. When it cannot
/// reach back to where the refused snapshots would have started, says why they were
/// refused (a format from another version, most likely).
fn no_start(journal: JournalError, report: &mut RecoveryReport) -> StoreError {
    if report.skipped_snapshots.is_empty() {
        journal.into()
    } else {
        StoreError::NoUsableStart {
            journal: Box::new(journal),
            skipped: std::mem::take(&mut report.skipped_snapshots),
        }
    }
}

/// Where recovery starts: the newest snapshot that loads and checks (or the fresh state).
struct Resumed {
    /// The last command the state holds (0 for the fresh state).
    after: u64,
    engine: Engine,
    market: MarketData,
    report: RecoveryReport,
    check: SnapshotCheck,
}

impl Resumed {
    /// Replays the journal records read after the state, noting them in the report.
    fn replay(&mut self, recovered: &journal::Recovered) {
        self.report.truncated = recovered.truncated;
        self.report.replayed = recovered.entries.len();
        replay(&mut self.engine, Some(&mut self.market), &recovered.entries);
    }
}

/// Finds where recovery of `dir` starts, changing nothing: the newest snapshot that reads
/// back intact and consistent with the engine `fresh()` builds (damaged ones are skipped
/// and reported), else that fresh state.
fn resume(dir: &Path, fresh: impl FnOnce() -> (Engine, MarketData)) -> Result<Resumed, StoreError> {
    let mut report = RecoveryReport::default();
    let (fresh_engine, fresh_market) = fresh();
    let mut check = SnapshotCheck::new(fresh_engine.clone());
    let mut resumed = None;
    for file in list_snapshots(dir)
        .map_err(io_error(dir))?
        .into_iter()
        .rev()
    {
        match load_snapshot(&file.path, &fresh_engine) {
            Ok(state) => {
                check.mark_good(file.seq);
                resumed = Some((file.seq, state));
                break;
            }
            Err(reason) => report.skipped_snapshots.push((file.path, reason)),
        }
    }
    // A host setting snapshots do not hold: the restored history keeps the fresh one's.
    let limits = fresh_market.history_limits();
    let (after, (engine, mut market)) = match resumed {
        Some((seq, state)) => {
            report.snapshot_seq = Some(seq);
            (seq, state)
        }
        None => (0, (fresh_engine, fresh_market)),
    };
    market.set_history_limits(limits);
    Ok(Resumed {
        after,
        engine,
        market,
        report,
        check,
    })
}

/// Reads one snapshot file into engine and market data (a snapshot without market data
/// gets empty market data), checked against `reference`, the engine the configuration
/// builds.
fn load_snapshot(path: &Path, reference: &Engine) -> Result<(Engine, MarketData), String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let snapshot = Snapshot::from_bytes(&bytes).map_err(|e| e.to_string())?;
    let engine = snapshot.engine(reference).map_err(|e| e.to_string())?;
    let market = snapshot
        .market(engine.instruments().len())
        .map_err(|e| e.to_string())?
        .unwrap_or_else(|| MarketData::new(engine.instruments().len(), Default::default()));
    Ok((engine, market))
}

#[cfg(test)]
mod tests;
