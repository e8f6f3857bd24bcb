//! The snapshot writer: a thread that encodes captured state, writes the snapshot file and
//! prunes what it makes unnecessary, so that neither the matching thread nor the
//! market-data thread spends more than the time to copy their state.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};

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
    /// Copies of the state dropped unwritten because a newer one arrived while the writer
    /// was busy (the interval is shorter than a write takes).
    pub superseded: u64,
    /// Sequence number of the state whose write (or prune after it) failed last.
    pub last_failed_seq: Option<u64>,
    /// The latest failure (the journal still holds everything; only pruning waits).
    pub last_error: Option<String>,
    /// The snapshot requests the newest written snapshot answers: every one numbered up
    /// to this (its copy's [`Captured::requests`]).
    pub written_requests: u64,
    /// The snapshot requests the latest failure answers: every one numbered up to this.
    pub failed_requests: u64,
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
        /// The snapshot requests it answers (its copy's [`Captured::requests`]).
        requests: u64,
    },
    /// The snapshot of the state after command `seq` was not written, or was and the prune
    /// after it failed: nothing is lost (the journal keeps every command), but the
    /// directory keeps growing until a write succeeds.
    Failed {
        /// The state's last command.
        seq: u64,
        /// Why.
        error: &'a StoreError,
        /// The snapshot requests it answers (its copy's [`Captured::requests`]).
        requests: u64,
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
    /// The waiting copy's side of the one-place mailbox, for a sink to take back a copy a
    /// newer one supersedes.
    waiting: Receiver<Captured>,
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
        // One place: a copy waits while one is written, and a newer one takes its place.
        let (sender, inbox) = crossbeam_channel::bounded::<Captured>(1);
        let waiting = inbox.clone();
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
            waiting,
            thread: Some(thread),
            status,
        })
    }

    /// A sink for the runtime (it may outlive nothing: the writer waits for every sink to
    /// be dropped when it finishes). It never blocks: a copy handed over while another
    /// waits for the busy writer replaces it, since the newer state holds everything the
    /// older one does, and at most one copy of the state is ever held besides the one being
    /// written. It has room while no copy waits.
    pub fn sink(&self) -> SnapshotSink {
        let (sender, waiting, status) = (
            self.sender.clone(),
            self.waiting.clone(),
            self.status.clone(),
        );
        let mailbox = self.waiting.clone();
        SnapshotSink::new(
            move |captured| {
                if let Some(sender) = &sender {
                    hand_over(sender, &waiting, &status, captured);
                }
            },
            move || mailbox.is_empty(),
        )
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

/// Puts `captured` in the writer's mailbox, taking out (and counting) an older copy
/// waiting there.
fn hand_over(
    sender: &Sender<Captured>,
    waiting: &Receiver<Captured>,
    status: &Mutex<WriterStatus>,
    mut captured: Captured,
) {
    loop {
        match sender.try_send(captured) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => return,
            Err(TrySendError::Full(back)) => {
                captured = back;
                // The writer may have taken it meanwhile: then the place is free.
                if waiting.try_recv().is_ok()
                    && let Ok(mut status) = status.lock()
                {
                    status.superseded += 1;
                }
            }
        }
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
    let (seq, requests) = (captured.seq, captured.requests);
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
        Err(error) => {
            let failed = SnapshotOutcome::Failed {
                seq,
                error: &error,
                requests,
            };
            return record(&failed);
        }
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
        requests,
    };
    record(&outcome)
        && match &pruned {
            Ok(_) => true,
            Err(error) => record(&SnapshotOutcome::Failed {
                seq,
                error,
                requests,
            }),
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
                requests,
                ..
            } => {
                self.written += 1;
                self.written_requests = requests;
                self.last_seq = Some(seq);
                self.last_bytes = bytes;
                self.last_duration = duration;
                self.segments_pruned += segments_pruned;
            }
            SnapshotOutcome::Failed {
                seq,
                error,
                requests,
            } => {
                self.failures += 1;
                self.failed_requests = requests;
                self.last_failed_seq = Some(seq);
                self.last_error = Some(error.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;
    use crate::tests::{Scratch, fresh};

    /// A writer slower than the snapshots handed to it holds one waiting copy, the newest:
    /// an older copy not yet begun is superseded (dropped and counted), never queued, so a
    /// slow disk or a large state cannot pile up copies of the state in memory.
    #[test]
    fn a_busy_writer_keeps_only_the_newest_copy_waiting() {
        let scratch = Scratch::new("writer-busy");
        std::fs::create_dir_all(&scratch.0).expect("dir");
        let (engine, _) = fresh();
        let (started, first_written) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        // The first outcome holds the writer's thread until the test lets it go.
        let observer: SnapshotObserver = Box::new(move |_, status| {
            if status.written == 1 {
                let _ = started.send(());
                let _ = released.recv();
            }
        });
        let check = SnapshotCheck::new(engine.clone());
        let writer =
            SnapshotWriter::observed(scratch.0.clone(), 10, check, observer).expect("writer");
        let sink = writer.sink();
        let copy = |seq| Captured {
            seq,
            engine: engine.clone(),
            market: None,
            requests: seq / 2,
        };
        sink.hand_over(copy(1));
        first_written.recv().expect("the first write");
        for seq in 2..=20 {
            sink.hand_over(copy(seq));
        }
        release.send(()).expect("released");
        drop(sink);
        let status = writer.finish();
        assert_eq!(status.written, 2, "the first and the newest");
        assert_eq!(status.last_seq, Some(20));
        assert_eq!(status.superseded, 18);
        assert_eq!(status.failures, 0);
        // The newest copy answers the requests the superseded ones did.
        assert_eq!(status.written_requests, 10);
    }
}
