//! The snapshot writer: a thread that encodes captured state, writes the snapshot file and
//! prunes what it makes unnecessary, so that neither the matching thread nor the
//! market-data thread spends more than the time to copy their state.

use std::path::PathBuf;
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
    /// The latest failure (the journal still holds everything; only pruning waits).
    pub last_error: Option<String>,
}

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
    pub fn start(dir: PathBuf, keep: usize, mut check: SnapshotCheck) -> std::io::Result<Self> {
        let (sender, inbox) = crossbeam_channel::unbounded::<Captured>();
        let status = Arc::new(Mutex::new(WriterStatus::default()));
        let shared = status.clone();
        let thread = std::thread::Builder::new()
            .name("matchbook-snapshot".into())
            .spawn(move || {
                for captured in inbox {
                    let started = Instant::now();
                    let outcome = write_and_prune(&dir, keep, &mut check, &captured);
                    let Ok(mut status) = shared.lock() else {
                        return;
                    };
                    match outcome {
                        Ok((bytes, segments)) => {
                            status.written += 1;
                            status.last_seq = Some(captured.seq);
                            status.last_bytes = bytes;
                            status.last_duration = started.elapsed();
                            status.segments_pruned += segments;
                        }
                        Err(e) => status.last_error = Some(e.to_string()),
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

fn write_and_prune(
    dir: &std::path::Path,
    keep: usize,
    check: &mut SnapshotCheck,
    captured: &Captured,
) -> Result<(u64, u64), StoreError> {
    let path = dir.join("<snapshot>");
    let snapshot = captured
        .encode()
        .map_err(|source| StoreError::Snapshot { path, source })?;
    let written = write_snapshot(dir, &snapshot)?;
    let bytes = std::fs::metadata(&written).map_or(0, |m| m.len());
    let pruned = prune(dir, keep, check)?;
    Ok((bytes, pruned.segments.len() as u64))
}
