//! The data directory's writer lock: an exclusive OS file lock on `DATA/lock`, held for as
//! long as an engine owns the directory, so a second process (or a second opener in the same
//! process) cannot append to the same journal and interleave records with the first.
//!
//! The lock file also holds the owner's process id, read back only to name the holder in
//! the refusal. The OS drops the lock when the owner exits or dies, so a stale file never
//! blocks a restart after a crash.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::StoreError;

/// Name of the lock file inside a data directory.
pub const LOCK_FILE: &str = "lock";

/// The held lock of one data directory; dropping it releases the directory.
#[derive(Debug)]
pub struct DirLock {
    file: File,
    path: PathBuf,
}

impl DirLock {
    /// Takes the lock of `dir` (which must exist), or refuses with the directory and the
    /// process id of the holder.
    pub fn acquire(dir: &Path) -> Result<Self, StoreError> {
        let path = dir.join(LOCK_FILE);
        let io = |source| StoreError::Io {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(StoreError::Locked {
                    dir: dir.to_owned(),
                    holder: read_holder(&mut file),
                });
            }
            Err(TryLockError::Error(source)) => return Err(io(source)),
        }
        let mut lock = Self {
            file,
            path: path.clone(),
        };
        lock.record_holder().map_err(io)?;
        Ok(lock)
    }

    fn record_holder(&mut self) -> std::io::Result<()> {
        self.file.set_len(0)?;
        self.file.seek(SeekFrom::Start(0))?;
        writeln!(self.file, "{}", std::process::id())?;
        self.file.sync_all()
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The process id the holder wrote, when readable.
fn read_holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_opener_is_refused_with_the_holder_named_until_the_first_lets_go() {
        let dir = std::env::temp_dir().join(format!("mb-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let first = DirLock::acquire(&dir).expect("first lock");
        match DirLock::acquire(&dir) {
            Err(StoreError::Locked { dir: d, holder }) => {
                assert_eq!(d, dir);
                assert_eq!(holder, Some(std::process::id()));
            }
            other => panic!("second opener not refused: {other:?}"),
        }
        drop(first);
        let again = DirLock::acquire(&dir).expect("free again");
        assert!(again.path().ends_with(LOCK_FILE));
        drop(again);
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
