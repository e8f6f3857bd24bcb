//! Snapshot files of a data directory: naming, atomic writes, the check that a file loads,
//! and pruning of snapshots and journal segments that newer snapshots, checked to load,
//! make unnecessary.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{StoreError, io_error};
use crate::journal::{list_segments, sync_dir};
use crate::snapshot::Snapshot;
use matchbook_core::Engine;

const PREFIX: &str = "snapshot-";
const SUFFIX: &str = ".snap";

/// A snapshot file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFile {
    /// Last journal sequence number it covers.
    pub seq: u64,
    /// Where it is.
    pub path: PathBuf,
}

/// Path of the snapshot covering records up to `seq`.
pub fn snapshot_path(dir: &Path, seq: u64) -> PathBuf {
    dir.join(format!("{PREFIX}{seq:020}{SUFFIX}"))
}

/// The snapshot files in `dir`, oldest first.
pub fn list_snapshots(dir: &Path) -> std::io::Result<Vec<SnapshotFile>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let seq = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.strip_suffix(SUFFIX))
            .and_then(|digits| digits.parse::<u64>().ok());
        if let Some(seq) = seq {
            files.push(SnapshotFile {
                seq,
                path: entry.path(),
            });
        }
    }
    files.sort_by_key(|f| f.seq);
    Ok(files)
}

/// Writes a small file (a pin, a key, a configuration copy) atomically and for its owner
/// alone: a temporary file beside it (`NAME.tmp`, mode 0600), synced, renamed over `path`,
/// then the directory synced so the rename survives a power loss. A leftover temporary
/// file is removed first: it would keep its own mode.
pub fn write_file_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let temporary = path.with_file_name(name);
    match std::fs::remove_file(&temporary) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)?;
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    sync_dir(dir)
}

/// Extension of a snapshot file still being written.
const PARTIAL: &str = "snap.partial";

/// Writes a snapshot atomically: a temporary file, fsync, rename, fsync of the directory.
/// The temporary files of earlier writes that never finished (a full disk, a crash) are
/// deleted first, and this write's own when it fails: on a full disk they would hold the
/// very space the journal needs. The directory's lock makes this its only writer.
pub fn write_snapshot(dir: &Path, snapshot: &Snapshot) -> Result<PathBuf, StoreError> {
    let path = snapshot_path(dir, snapshot.seq);
    let temporary = path.with_extension(PARTIAL);
    remove_partial_snapshots(dir).map_err(io_error(dir))?;
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(&snapshot.to_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, &path)?;
        sync_dir(dir)
    };
    write().map_err(|error| {
        // Best effort: the write's own error is the one to report.
        let _ = std::fs::remove_file(&temporary);
        io_error(&path)(error)
    })?;
    Ok(path)
}

/// Deletes the temporary files of snapshot writes that never finished.
fn remove_partial_snapshots(dir: &Path) -> std::io::Result<()> {
    let suffix = format!(".{PARTIAL}");
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let partial = name
            .to_str()
            .is_some_and(|n| n.starts_with(PREFIX) && n.ends_with(&suffix));
        if partial {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// What [`prune`] deleted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Snapshot files deleted.
    pub snapshots: Vec<PathBuf>,
    /// Journal segments deleted.
    pub segments: Vec<PathBuf>,
}

/// Keeps the newest `keep` snapshots that load and check (at least one), deleting the
/// snapshots older than those and every journal segment whose records all lie at or before
/// the oldest of them. A snapshot that does not load is never counted: while fewer than
/// `keep` load, nothing is deleted, so recovery can always fall back to an older snapshot
/// (or to the start of the journal) and replay what came after. Newer snapshots that do not
/// load are left for the operator to look at. The newest segment is never deleted.
pub fn prune(dir: &Path, keep: usize, check: &mut SnapshotCheck) -> Result<Pruned, StoreError> {
    let mut pruned = Pruned::default();
    let snapshots = list_snapshots(dir).map_err(io_error(dir))?;
    let keep = keep.max(1);
    let mut loading = 0;
    let mut cut = None;
    for (i, file) in snapshots.iter().enumerate().rev() {
        if check.loads(file) {
            loading += 1;
            if loading == keep {
                cut = Some(i);
                break;
            }
        }
    }
    let Some(cut) = cut else {
        return Ok(pruned);
    };
    let oldest_kept = snapshots[cut].seq;
    for old in &snapshots[..cut] {
        std::fs::remove_file(&old.path).map_err(io_error(&old.path))?;
        check.forget(old.seq);
        pruned.snapshots.push(old.path.clone());
    }
    let segments = list_segments(dir).map_err(io_error(dir))?;
    // A segment ends where the next begins; it is covered when that is at most one past the
    // oldest kept snapshot.
    for pair in segments.windows(2) {
        if pair[1].first_seq <= oldest_kept + 1 {
            std::fs::remove_file(&pair[0].path).map_err(io_error(&pair[0].path))?;
            pruned.segments.push(pair[0].path.clone());
        }
    }
    if !(pruned.snapshots.is_empty() && pruned.segments.is_empty()) {
        sync_dir(dir).map_err(io_error(dir))?;
    }
    Ok(pruned)
}

/// Whether snapshot files load and pass the checks recovery applies, against the engine a
/// configuration builds; a file found good is remembered by its sequence number, so a
/// prune reads only the snapshots it has not checked before.
#[derive(Debug, Clone)]
pub struct SnapshotCheck {
    reference: Engine,
    good: BTreeSet<u64>,
}

impl SnapshotCheck {
    /// Checks against `reference`, a fresh engine of the configuration in force.
    pub fn new(reference: Engine) -> Self {
        Self {
            reference,
            good: BTreeSet::new(),
        }
    }

    /// Whether `file` loads and checks (read from disk the first time).
    pub fn loads(&mut self, file: &SnapshotFile) -> bool {
        if self.good.contains(&file.seq) {
            return true;
        }
        let good = super::load_snapshot(&file.path, &self.reference).is_ok();
        if good {
            self.good.insert(file.seq);
        }
        good
    }

    /// Records a file found good elsewhere (recovery loaded it).
    pub(super) fn mark_good(&mut self, seq: u64) {
        self.good.insert(seq);
    }

    /// Drops what is remembered of a deleted file.
    fn forget(&mut self, seq: u64) {
        self.good.remove(&seq);
    }

    /// The reference engine.
    pub fn reference(&self) -> &Engine {
        &self.reference
    }
}
