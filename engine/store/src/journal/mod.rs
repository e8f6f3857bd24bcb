//! The write-ahead journal: every command the runtime applies is appended, with its
//! sequence number and time, before its result is acknowledged; a batch of commands is
//! made durable by one write and one fsync (group commit). Recovery reads the records
//! back, checks each one, and replays them through the same `Engine::apply`.
//!
//! Record layout (little-endian), after an 8-byte file magic `MBJRNL01`:
//! `u32 length | u32 crc32c(length) | u8 version | u64 sequence | i64 time | payload |
//! u32 crc32c`, where `length` counts everything after the two header words and the last
//! checksum covers version to payload. The length has its own checksum so that a damaged
//! length is reported as damage instead of looking like a record cut short.
//! A record cut short at the end of the file (a torn write) is truncated with a warning;
//! a bad checksum, an unknown version or a sequence gap anywhere else refuses recovery
//! with the file and offset.
//!
//! The runtime sees only [`CommandLog`], so a replicated log can take the file's place.

pub mod codec;
mod crc;
mod segments;
mod storage;

pub use crc::crc32c;
pub use segments::{
    SegmentFile, SegmentedJournal, list_segments, read_journal, segment_path, sync_dir,
};
pub use storage::{FileStorage, MemoryStorage, Storage};

use std::path::PathBuf;

use matchbook_core::Command;
use matchbook_core::Timestamp;

/// File magic and format version of a journal file.
pub const MAGIC: &[u8; 8] = b"MBJRNL01";
/// Record format version.
pub const RECORD_VERSION: u8 = 1;

/// The closing write of a segment being replaced, run at the next commit.
pub type CommitJob = Box<dyn FnOnce() -> std::io::Result<()> + Send + Sync>;

/// Where commands go before their results are acknowledged.
pub trait CommandLog: Send {
    /// Appends one command applied at `time`; returns its sequence number. Not durable
    /// until [`CommandLog::commit`] returns.
    fn append(&mut self, time: Timestamp, command: &Command) -> std::io::Result<u64>;
    /// Makes every appended command durable (per the log's sync policy).
    fn commit(&mut self) -> std::io::Result<()>;
    /// Starts a new segment after the commands appended so far. Called at a snapshot point,
    /// so that the segments a snapshot covers can be deleted; a log without segments
    /// ignores it.
    fn rotate(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    /// Whether a failed [`CommandLog::commit`] may be tried again, and after how long: a
    /// replicated log that lost its quorum can store the same batch once it is back. By
    /// default never: after a failed fsync the file's state is unknown, and the runtime
    /// stops rather than acknowledge what may not be on disk.
    fn retry_after(&self, _error: &std::io::Error) -> Option<std::time::Duration> {
        None
    }
    /// Whether a failed [`CommandLog::commit`] means another writer leads the log now (a
    /// replicated log's fencing): the batch was not stored, and this writer must step down
    /// and follow rather than stop. By default never.
    fn deposed(&self, _error: &std::io::Error) -> bool {
        false
    }
}

/// When the journal forces its writes to stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncPolicy {
    /// fsync once per committed batch (the default): an acknowledged command survives a
    /// crash of the process or the machine.
    #[default]
    EveryBatch,
    /// Write but never fsync: survives a crash of the process, not of the machine. For
    /// benchmarks.
    Never,
}

/// A journal record read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalEntry {
    /// Sequence number (1-based, gap-free).
    pub seq: u64,
    /// Time the command was applied at.
    pub time: Timestamp,
    /// The command.
    pub command: Command,
}

/// Why a journal could not be opened or recovered.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Reading or writing failed.
    #[error("journal {path}: {source}")]
    Io {
        /// File.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// A damaged record that is not a torn tail.
    #[error("journal {path} offset {offset}: {reason}")]
    Corrupt {
        /// File.
        path: PathBuf,
        /// Byte offset of the record.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
}

/// What recovery found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// Every valid record, in order.
    pub entries: Vec<JournalEntry>,
    /// Bytes of a torn last record that were cut off (0 when the tail was clean).
    pub truncated: u64,
}

/// A journal over some storage.
#[derive(Debug)]
pub struct Journal<S: Storage> {
    storage: std::sync::Arc<std::sync::Mutex<S>>,
    policy: SyncPolicy,
    pending: Vec<u8>,
    next_seq: u64,
    last_time: Timestamp,
}

impl<S: Storage + 'static> Journal<S> {
    /// Opens a journal on `storage`: checks every record, truncates a torn tail, and
    /// returns the records for replay.
    pub fn open(storage: S, policy: SyncPolicy) -> Result<(Self, Recovered), JournalError> {
        Self::open_from(storage, policy, 1)
    }

    /// As [`Journal::open`] for a segment whose first record is `first_seq` (records
    /// before it live in older segments or in a snapshot).
    pub fn open_from(
        mut storage: S,
        policy: SyncPolicy,
        first_seq: u64,
    ) -> Result<(Self, Recovered), JournalError> {
        let path = storage.name();
        let io = |source| JournalError::Io {
            path: path.clone(),
            source,
        };
        let bytes = storage.read_all().map_err(io)?;
        let mut truncated = 0;
        let entries = if bytes.is_empty() {
            storage.append(MAGIC).map_err(io)?;
            storage.sync().map_err(io)?;
            Vec::new()
        } else {
            let scan = scan(&bytes, &path, first_seq)?;
            if let Some(torn_at) = scan.torn_at {
                truncated = (bytes.len() - torn_at) as u64;
                storage.truncate(torn_at as u64).map_err(io)?;
                storage.sync().map_err(io)?;
            }
            scan.entries
        };
        let journal = Self {
            storage: std::sync::Arc::new(std::sync::Mutex::new(storage)),
            policy,
            pending: Vec::with_capacity(64 * 1024),
            next_seq: entries.last().map_or(first_seq, |e| e.seq + 1),
            last_time: entries.last().map_or(Timestamp(i64::MIN), |e| e.time),
        };
        Ok((journal, Recovered { entries, truncated }))
    }

    /// Sequence number the next appended command gets.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Hands over everything appended so far as a job that writes it and syncs the file:
    /// the closing write of a segment that is being replaced must be durable on its own,
    /// since later syncs go to another file.
    pub(crate) fn seal_closing(&mut self) -> CommitJob {
        let bytes = std::mem::take(&mut self.pending);
        let (storage, policy) = (self.storage.clone(), self.policy);
        Box::new(move || write_batch(&storage, &bytes, policy == SyncPolicy::EveryBatch))
    }

    /// Time of the last record (so a restarted runtime never stamps an earlier time).
    pub fn last_time(&self) -> Timestamp {
        self.last_time
    }
}

/// Records of one journal file, checked.
pub(crate) struct Scan {
    /// Every intact record, in order.
    pub(crate) entries: Vec<JournalEntry>,
    /// Offset of a torn last record, if the file ends in one.
    pub(crate) torn_at: Option<usize>,
}

/// Checks and decodes every record of a journal file whose first record is `first_seq`.
pub(crate) fn scan(
    bytes: &[u8],
    path: &std::path::Path,
    first_seq: u64,
) -> Result<Scan, JournalError> {
    let corrupt = |offset: usize, reason: String| JournalError::Corrupt {
        path: path.to_owned(),
        offset: offset as u64,
        reason,
    };
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        let family = &MAGIC[..MAGIC.len() - 2];
        let reason = match bytes.get(..MAGIC.len()) {
            Some(other) if other.starts_with(family) => format!(
                "journal file format {}: this build reads {}",
                String::from_utf8_lossy(other),
                String::from_utf8_lossy(MAGIC)
            ),
            _ => "not a matchbook journal (bad magic)".into(),
        };
        return Err(corrupt(0, reason));
    }
    let mut entries: Vec<JournalEntry> = Vec::new();
    let mut at = MAGIC.len();
    while at < bytes.len() {
        match read_record(bytes, at) {
            Ok((entry, next)) => {
                let expected = entries.last().map_or(first_seq, |e| e.seq + 1);
                if entry.seq != expected {
                    return Err(corrupt(
                        at,
                        format!("sequence gap: expected {expected}, found {}", entry.seq),
                    ));
                }
                entries.push(entry);
                at = next;
            }
            Err(RecordError::Torn) => {
                return Ok(Scan {
                    entries,
                    torn_at: Some(at),
                });
            }
            Err(RecordError::Bad(reason)) => return Err(corrupt(at, reason)),
        }
    }
    Ok(Scan {
        entries,
        torn_at: None,
    })
}

enum RecordError {
    Torn,
    Bad(String),
}

fn read_record(bytes: &[u8], at: usize) -> Result<(JournalEntry, usize), RecordError> {
    let rest = &bytes[at..];
    let word = |i: usize| u32::from_le_bytes([rest[i], rest[i + 1], rest[i + 2], rest[i + 3]]);
    if rest.len() < 8 {
        return Err(RecordError::Torn);
    }
    if crc32c(&rest[..4]) != word(4) {
        return Err(RecordError::Bad("record length checksum mismatch".into()));
    }
    let len = word(0) as usize;
    if len < 1 + 8 + 8 + 4 {
        return Err(RecordError::Bad(format!("record length {len} too small")));
    }
    let end = 8usize.saturating_add(len);
    if end > rest.len() {
        return Err(RecordError::Torn);
    }
    let body = &rest[8..end - 4];
    if crc32c(body) != word(end - 4) {
        // Only the last record may be torn; a bad record followed by more is damage.
        return Err(if at + end == bytes.len() {
            RecordError::Torn
        } else {
            RecordError::Bad("checksum mismatch".into())
        });
    }
    if body[0] != RECORD_VERSION {
        return Err(RecordError::Bad(format!(
            "record version {}: this build reads version {RECORD_VERSION}",
            body[0]
        )));
    }
    let seq = u64::from_le_bytes(body[1..9].try_into().unwrap_or([0; 8]));
    let time = i64::from_le_bytes(body[9..17].try_into().unwrap_or([0; 8]));
    let command = codec::decode(&body[17..]).map_err(|e| RecordError::Bad(e.to_string()))?;
    Ok((
        JournalEntry {
            seq,
            time: Timestamp(time),
            command,
        },
        at + end,
    ))
}

fn write_batch<S: Storage>(
    storage: &std::sync::Mutex<S>,
    bytes: &[u8],
    sync: bool,
) -> std::io::Result<()> {
    let mut storage = storage
        .lock()
        .map_err(|_| std::io::Error::other("journal storage poisoned"))?;
    if !bytes.is_empty() {
        storage.append(bytes)?;
    }
    if sync {
        storage.sync()?;
    }
    Ok(())
}

impl<S: Storage + 'static> CommandLog for Journal<S> {
    fn append(&mut self, time: Timestamp, command: &Command) -> std::io::Result<u64> {
        let seq = self.next_seq;
        let start = self.pending.len();
        self.pending.extend_from_slice(&[0; 8]);
        self.pending.push(RECORD_VERSION);
        self.pending.extend_from_slice(&seq.to_le_bytes());
        self.pending.extend_from_slice(&time.0.to_le_bytes());
        codec::encode(command, &mut self.pending);
        let crc = crc32c(&self.pending[start + 8..]);
        self.pending.extend_from_slice(&crc.to_le_bytes());
        let len = ((self.pending.len() - start - 8) as u32).to_le_bytes();
        self.pending[start..start + 4].copy_from_slice(&len);
        self.pending[start + 4..start + 8].copy_from_slice(&crc32c(&len).to_le_bytes());
        self.next_seq += 1;
        self.last_time = time;
        Ok(seq)
    }

    fn commit(&mut self) -> std::io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        write_batch(
            &self.storage,
            &self.pending,
            self.policy == SyncPolicy::EveryBatch,
        )?;
        self.pending.clear();
        Ok(())
    }
}

/// Replays recovered records through `Engine::apply` (and into market data when given),
/// exactly as the runtime applied them; returns the number of events produced.
pub fn replay(
    engine: &mut matchbook_core::Engine,
    mut market: Option<&mut matchbook_market::MarketData>,
    entries: &[JournalEntry],
) -> usize {
    let mut events = Vec::with_capacity(64);
    let mut produced = 0;
    for entry in entries {
        events.clear();
        let _ = engine.apply(&entry.command, entry.time, &mut events);
        produced += events.len();
        if let Some(market) = market.as_deref_mut() {
            market.on_events(&events);
        }
    }
    produced
}

#[cfg(test)]
mod tests;
