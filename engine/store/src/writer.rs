//! The snapshot writer: a thread that encodes captured state, writes the snapshot file and
//! prunes what it makes unnecessary, so that neither the matching thread nor the
//! market-data thread spends more than the time to copy their state.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

use super::{SnapshotCheck, StoreError, prune, write_snapshot};
use crate::snapshot::{Captured, SnapshotSink};

/// What the writer has done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriterStatus {
    /// Snapshots written.
    pub written: u64,
    /// Sequence number of the newest written snapshot.
    pub last_seq: Option<u64>,
    /// Size of the newest snapshot file in bytes.
    pub last_bytes: u64,
    /// Time to encode and write the newest snapshot.
    pub last_duration: Duration,
    /// Journal segments deleted so far.
    pub segments_pruned: u64,
    /// Writes or prunes that failed so far.
    pub failures: u64,
    /// Sequence number of the state whose write (or prune after it) failed last.
    pub last_failed_seq: Option<u64>,
    /// The latest failure (the journal still holds everything; only pruning waits).
    pub last_error: Option<String>,
}

/// What became of one state handed to the writer, as it happens.
#[derive(Debug)]
pub enum SnapshotOutcome<'a> {
    /// The snapshot of the state after command `seq` is on disk at `path`.
    Written {
        /// The state's last command.
        seq: u64,
        /// The snapshot file.
        path: &'a Path,
        /// Its size.
        bytes: u64,
        /// Time to encode and write it.
        duration: Duration,
        /// Journal segments the prune after it deleted.
        segments_pruned: u64,
    },
    /// The snapshot of the state after command `seq` was not written, or was and the prune
    /// after it failed: nothing is lost (the journal keeps every command), but the
    /// directory keeps growing until a write succeeds.
    Failed {
        /// The state's last command.
        seq: u64,
        /// Why.
        error: &'a StoreError,
    },
}

/// Told of each outcome on the writer's thread, with the status after it: the host logs
/// it and publishes the status (the store itself neither logs nor knows the host's
/// runtime).
pub type SnapshotObserver = Box<dyn FnMut(&SnapshotOutcome<'_>, &WriterStatus) + Send>;

/// A background snapshot writer for one data directory.
#[derive(Debug)]
pub struct SnapshotWriter {
    sender: Option<Sender<Captured>>,
    thread: Option<JoinHandle<()>>,
    status: Arc<Mutex<WriterStatus>>,
}

impl SnapshotWriter {
    /// Starts the writer thread for `dir`, keeping `keep` snapshots that pass `check`
    /// (the one recovery returned).
    pub fn start(dir: PathBuf, keep: usize, check: SnapshotCheck) -> std::io::Result<Self> {
        Self::observed(dir, keep, check, Box::new(|_, _| {}))
    }

    /// As [`SnapshotWriter::start`], telling `observer` of every write and failure.
    pub fn observed(
        dir: PathBuf,
        keep: usize,
        mut check: SnapshotCheck,
        mut observer: SnapshotObserver,
    ) -> std::io::Result<Self> {
        let (sender, inbox) = crossbeam_channel::unbounded::<Captured>();
        let status = Arc::new(Mutex::new(WriterStatus::default()));
        let shared = status.clone();
        let thread = std::thread::Builder::new()
            .name("matchbook-snapshot".into())
            .spawn(move || {
                for captured in inbox {
                    let mut record = |outcome: &SnapshotOutcome<'_>| {
                        let Ok(mut status) = shared.lock() else {
                            return false;
                        };
                        status.record(outcome);
                        let now = status.clone();
                        drop(status);
                        observer(outcome, &now);
                        true
                    };
                    if !write_and_prune(&dir, keep, &mut check, &captured, &mut record) {
                        return;
                    }
                }
            })?;
        Ok(Self {
            sender: Some(sender),
            thread: Some(thread),
            status,
        })
    }

    /// A sink for the runtime (it may outlive nothing: the writer waits for every sink to
    /// be dropped when it finishes).
    pub fn sink(&self) -> SnapshotSink {
        let sender = self.sender.clone();
        Arc::new(move |captured| {
            if let Some(sender) = &sender {
                let _ = sender.send(captured);
            }
        })
    }

    /// What has been written so far.
    pub fn status(&self) -> WriterStatus {
        self.status.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// A way to ask, from any thread, the command of the newest snapshot written so far
    /// (a replicated node publishes it: the log is kept from the command after it).
    pub fn newest_written(&self) -> impl Fn() -> Option<u64> + Send + Sync + 'static {
        let status = self.status.clone();
        move || status.lock().ok().and_then(|s| s.last_seq)
    }

    /// Waits until every sink is gone and everything handed over is written.
    pub fn finish(mut self) -> WriterStatus {
        self.join();
        self.status()
    }

    fn join(&mut self) {
        self.sender = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for SnapshotWriter {
    fn drop(&mut self) {
        self.join();
    }
}

/// Writes the snapshot of `captured`, then prunes what it makes unnecessary, telling
/// `record` of each outcome; false when `record` could not take one (the status lock
/// poisoned: the writer stops).
fn write_and_prune(
    dir: &Path,
    keep: usize,
    check: &mut SnapshotCheck,
    captured: &Captured,
    record: &mut impl FnMut(&SnapshotOutcome<'_>) -> bool,
) -> bool {
    let seq = captured.seq;
    let started = Instant::now();
    let written = captured
        .encode()
        .map_err(|source| StoreError::Snapshot {
            path: dir.join("<snapshot>"),
            source,
        })
        .and_then(|snapshot| write_snapshot(dir, &snapshot));
    let path = match written {
        Ok(path) => path,
        Err(error) => return record(&SnapshotOutcome::Failed { seq, error: &error }),
    };
    let (bytes, duration) = (
        std::fs::metadata(&path).map_or(0, |m| m.len()),
        started.elapsed(),
    );
    let pruned = prune(dir, keep, check);
    let outcome = SnapshotOutcome::Written {
        seq,
        path: &path,
        bytes,
        duration,
        segments_pruned: pruned.as_ref().map_or(0, |p| p.segments.len() as u64),
    };
    record(&outcome)
        && match &pruned {
            Ok(_) => true,
            Err(error) => record(&SnapshotOutcome::Failed { seq, error }),
        }
}

impl WriterStatus {
    /// Counts `outcome` in.
    fn record(&mut self, outcome: &SnapshotOutcome<'_>) {
        match *outcome {
            SnapshotOutcome::Written {
                seq,
                bytes,
                duration,
                segments_pruned,
                ..
            } => {
                self.written += 1;
                self.last_seq = Some(seq);
                self.last_bytes = bytes;
                self.last_duration = duration;
                self.segments_pruned += segments_pruned;
            }
            SnapshotOutcome::Failed { seq, error } => {
                self.failures += 1;
                self.last_failed_seq = Some(seq);
                self.last_error = Some(error.to_string());
            }
        }
    }
}
