//! Where journal bytes live: a file (appends, fsync via `sync_data`, truncation of a torn
//! tail), or memory that forgets whatever was not synced when it "crashes" (tests use it
//! to prove that nothing is acknowledged before it is durable).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Append-only storage of a journal.
pub trait Storage: Send {
    /// A name for messages (the file path).
    fn name(&self) -> PathBuf;
    /// Everything stored.
    fn read_all(&mut self) -> std::io::Result<Vec<u8>>;
    /// Appends bytes (not durable until `sync`).
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()>;
    /// Makes appended bytes durable.
    fn sync(&mut self) -> std::io::Result<()>;
    /// Cuts the storage to `len` bytes.
    fn truncate(&mut self, len: u64) -> std::io::Result<()>;
}

/// A journal file.
#[derive(Debug)]
pub struct FileStorage {
    path: PathBuf,
    file: File,
}

impl FileStorage {
    /// Opens (or creates) the file at `path`.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Self {
            path: path.to_owned(),
            file,
        })
    }
}

impl Storage for FileStorage {
    fn name(&self) -> PathBuf {
        self.path.clone()
    }
    fn read_all(&mut self) -> std::io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.file.seek(SeekFrom::Start(0))?;
        self.file.read_to_end(&mut bytes)?;
        Ok(bytes)
    }
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.file.write_all(bytes)
    }
    fn sync(&mut self) -> std::io::Result<()> {
        self.file.sync_data()
    }
    fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        self.file.set_len(len)
    }
}

#[derive(Debug, Default)]
struct Disk {
    durable: Vec<u8>,
    unsynced: Vec<u8>,
}

/// Memory storage with a crash switch: `crash()` drops every byte not yet synced. Clones
/// share the same bytes, so a test can keep a handle while the journal owns another.
#[derive(Debug, Clone, Default)]
pub struct MemoryStorage {
    disk: Arc<Mutex<Disk>>,
}

impl MemoryStorage {
    /// Loses what was not synced, as a power cut would.
    pub fn crash(&self) {
        if let Ok(mut d) = self.disk.lock() {
            d.unsynced.clear();
        }
    }

    /// The durable bytes.
    pub fn durable(&self) -> Vec<u8> {
        self.disk
            .lock()
            .map(|d| d.durable.clone())
            .unwrap_or_default()
    }

    /// Replaces the durable bytes (tests damage them).
    pub fn set_durable(&self, bytes: Vec<u8>) {
        if let Ok(mut d) = self.disk.lock() {
            d.durable = bytes;
            d.unsynced.clear();
        }
    }
}

impl Storage for MemoryStorage {
    fn name(&self) -> PathBuf {
        PathBuf::from("<memory>")
    }
    fn read_all(&mut self) -> std::io::Result<Vec<u8>> {
        let d = self
            .disk
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?;
        Ok([d.durable.as_slice(), d.unsynced.as_slice()].concat())
    }
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let mut d = self
            .disk
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?;
        d.unsynced.extend_from_slice(bytes);
        Ok(())
    }
    fn sync(&mut self) -> std::io::Result<()> {
        let mut d = self
            .disk
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?;
        let pending = std::mem::take(&mut d.unsynced);
        d.durable.extend_from_slice(&pending);
        Ok(())
    }
    fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        let mut d = self
            .disk
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?;
        let mut all = [d.durable.as_slice(), d.unsynced.as_slice()].concat();
        all.truncate(len as usize);
        d.durable = all;
        d.unsynced.clear();
        Ok(())
    }
}
