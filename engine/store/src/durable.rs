//! A durable engine for single-threaded owners (the C and Python bindings): every command
//! is journalled and committed before `apply` returns, snapshots are taken every so many
//! commands (synchronously: such an owner has no other thread to give the work to), and
//! `open` recovers whatever the directory holds.

use std::path::{Path, PathBuf};

use super::{
    DirLock, Recovery, RecoveryReport, SnapshotCheck, StoreError, StoreOptions, prune, recover,
};
use crate::journal::{CommandLog, SegmentedJournal};
use crate::snapshot::Snapshot;
use matchbook_core::Command;
use matchbook_core::EngineError;
use matchbook_core::EventRecord;
use matchbook_core::Timestamp;
use matchbook_core::{Applied, Engine};
use matchbook_market::MarketData;

/// Journal and snapshots of an engine owned by one thread.
#[derive(Debug)]
pub struct DurableEngine {
    dir: PathBuf,
    options: StoreOptions,
    journal: SegmentedJournal,
    since_snapshot: u64,
    /// A journal write failed: memory may hold commands the journal does not, so nothing
    /// more is taken (reopen to continue from what is durable).
    failed: bool,
    /// Held for the engine's life: no second opener can write to the directory.
    _lock: DirLock,
    /// The process that opened the directory: a child it forks shares the open journal
    /// and the lock, and must not write (the records would interleave).
    owner: u32,
    /// What pruning checks snapshots with.
    check: SnapshotCheck,
}

/// An engine's result, or the storage failure that stopped the command from being taken.
pub type Journalled = Result<Result<Applied, EngineError>, StoreError>;

impl DurableEngine {
    /// Opens (or creates) the data directory and recovers its state; `fresh` builds the
    /// state of an empty directory.
    pub fn open(
        dir: &Path,
        options: StoreOptions,
        fresh: impl FnOnce() -> (Engine, MarketData),
    ) -> Result<(Self, Engine, MarketData, RecoveryReport), StoreError> {
        let Recovery {
            engine,
            market,
            journal,
            report,
            lock,
            check,
        } = recover(dir, options, fresh)?;
        let durable = Self {
            dir: dir.to_owned(),
            options,
            journal,
            since_snapshot: 0,
            failed: false,
            _lock: lock,
            owner: std::process::id(),
            check,
        };
        Ok((durable, engine, market, report))
    }

    /// Journals `command`, applies it (events appended to `events` and fed to `market`),
    /// and commits the journal before returning: an `Ok` means the command is durable.
    pub fn apply(
        &mut self,
        engine: &mut Engine,
        mut market: Option<&mut MarketData>,
        command: &Command,
        time: Timestamp,
        events: &mut Vec<EventRecord>,
    ) -> Journalled {
        let result =
            self.apply_uncommitted(engine, market.as_deref_mut(), command, time, events)?;
        self.commit(engine, market.as_deref())?;
        Ok(result)
    }

    /// As [`DurableEngine::apply`] without the commit: for batches, which call
    /// [`DurableEngine::commit`] once at the end (nothing is durable before that).
    pub fn apply_uncommitted(
        &mut self,
        engine: &mut Engine,
        market: Option<&mut MarketData>,
        command: &Command,
        time: Timestamp,
        events: &mut Vec<EventRecord>,
    ) -> Journalled {
        self.check()?;
        let appended = self.journal.append(time, command);
        self.guard(appended)?;
        self.since_snapshot += 1;
        Ok(matchbook_market::apply_and_record(
            engine, market, command, time, events,
        ))
    }

    /// Makes every applied command durable, and takes a snapshot when the policy says one
    /// is due (`market` is what the snapshot keeps of market data).
    pub fn commit(
        &mut self,
        engine: &Engine,
        market: Option<&MarketData>,
    ) -> Result<(), StoreError> {
        self.check()?;
        self.check_writer()?;
        let committed = self.journal.commit();
        self.guard(committed)?;
        let every = self.options.snapshot_every;
        if every > 0 && self.since_snapshot >= every {
            self.snapshot(engine, market)?;
        }
        Ok(())
    }

    /// Commits, writes a snapshot of `engine` and `market` now, starts a new journal
    /// segment and prunes what the snapshot makes unnecessary. Returns the snapshot file.
    pub fn snapshot(
        &mut self,
        engine: &Engine,
        market: Option<&MarketData>,
    ) -> Result<PathBuf, StoreError> {
        self.check()?;
        self.check_writer()?;
        let committed = self.journal.commit();
        self.guard(committed)?;
        let seq = self.journal.next_seq() - 1;
        let rotated = self.journal.rotate().and_then(|()| self.journal.commit());
        self.guard(rotated)?;
        let snapshot =
            Snapshot::capture(seq, engine, market).map_err(|source| StoreError::Snapshot {
                path: self.dir.clone(),
                source,
            })?;
        let path = super::write_snapshot(&self.dir, &snapshot)?;
        prune(&self.dir, self.options.keep_snapshots, &mut self.check)?;
        self.since_snapshot = 0;
        Ok(path)
    }

    /// Refuses work after a failed journal write.
    pub(crate) fn check(&self) -> Result<(), StoreError> {
        if self.failed {
            return Err(StoreError::Io {
                path: self.dir.clone(),
                source: std::io::Error::other(
                    "an earlier journal write failed; reopen the directory to continue from \
                     what is durable",
                ),
            });
        }
        Ok(())
    }

    /// Refuses to write in any process but the one that opened the directory (a forked
    /// child shares the journal's file offset: both would write records of the same
    /// numbers and the directory would no longer recover). Checked where the journal is
    /// written (appends only fill a buffer), so once per commit, not per command of a
    /// batch; a refusal fails the engine, whose memory then holds what was not written.
    fn check_writer(&mut self) -> Result<(), StoreError> {
        let process = std::process::id();
        if process == self.owner {
            return Ok(());
        }
        self.failed = true;
        Err(StoreError::Io {
            path: self.dir.clone(),
            source: std::io::Error::other(format!(
                "opened by process {}; a forked process ({process}) cannot write it: open \
                 the directory in the child once the parent has closed it",
                self.owner
            )),
        })
    }

    /// Passes a journal result on, remembering a failure.
    fn guard<T>(&mut self, result: std::io::Result<T>) -> Result<T, StoreError> {
        result.map_err(|source| {
            self.failed = true;
            StoreError::Io {
                path: self.dir.clone(),
                source,
            }
        })
    }

    /// Commands journalled since the last snapshot (an owner closing the engine snapshots
    /// when this is not zero, so the next open replays nothing).
    pub fn commands_since_snapshot(&self) -> u64 {
        self.since_snapshot
    }

    /// Sequence number of the last journalled command (0: none).
    pub fn last_seq(&self) -> u64 {
        self.journal.next_seq() - 1
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}
