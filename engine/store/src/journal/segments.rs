//! The journal of a data directory as a chain of segment files, `journal-<first seq>.log`,
//! each holding consecutive records. A new segment starts at every snapshot point, so that
//! once a snapshot is durable the segments it covers can be deleted whole. Only the newest
//! segment is written; a torn record is tolerated at its end only.

use std::path::{Path, PathBuf};

use super::{
    CommandLog, CommitJob, FileStorage, Journal, JournalError, Recovered, SyncPolicy, scan,
};
use matchbook_core::Command;
use matchbook_core::Timestamp;

const PREFIX: &str = "journal-";
const SUFFIX: &str = ".log";
/// The single journal file of earlier versions: a segment starting at record 1.
const LEGACY_FILE: &str = "journal.log";

/// One segment file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentFile {
    /// Sequence number of its first record.
    pub first_seq: u64,
    /// Where it is.
    pub path: PathBuf,
}

/// Path of the segment whose first record is `first_seq`.
pub fn segment_path(dir: &Path, first_seq: u64) -> PathBuf {
    dir.join(format!("{PREFIX}{first_seq:020}{SUFFIX}"))
}

/// The segments in `dir`, oldest first.
pub fn list_segments(dir: &Path) -> std::io::Result<Vec<SegmentFile>> {
    let mut segments = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let first_seq = if name == LEGACY_FILE {
            Some(1)
        } else {
            name.strip_prefix(PREFIX)
                .and_then(|rest| rest.strip_suffix(SUFFIX))
                .and_then(|digits| digits.parse::<u64>().ok())
        };
        if let Some(first_seq) = first_seq {
            segments.push(SegmentFile {
                first_seq,
                path: entry.path(),
            });
        }
    }
    segments.sort_by_key(|s| s.first_seq);
    Ok(segments)
}

/// Makes a directory entry (a created, renamed or deleted file) durable.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// The journal of a directory: appends go to the newest segment.
pub struct SegmentedJournal {
    dir: PathBuf,
    policy: SyncPolicy,
    current: Journal<FileStorage>,
    /// First sequence number of the current segment.
    current_first: u64,
    /// Closing writes of segments replaced since the last commit.
    closing: Vec<CommitJob>,
}

impl std::fmt::Debug for SegmentedJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegmentedJournal")
            .field("dir", &self.dir)
            .field("next_seq", &self.current.next_seq())
            .finish()
    }
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> JournalError + '_ {
    move |source| JournalError::Io {
        path: path.to_owned(),
        source,
    }
}

fn corrupt(path: &Path, offset: u64, reason: String) -> JournalError {
    JournalError::Corrupt {
        path: path.to_owned(),
        offset,
        reason,
    }
}

impl SegmentedJournal {
    /// Opens the journal in `dir` (creating the directory and a first segment when there is
    /// none) and returns the records after `after`, the last sequence number the caller's
    /// state (a snapshot, or 0 for none) already holds. Checks every segment from the one
    /// holding `after + 1` on: records consecutive within and across segments, a torn
    /// record only at the very end (cut off, and reported in `truncated`).
    pub fn open(
        dir: &Path,
        policy: SyncPolicy,
        after: u64,
    ) -> Result<(Self, Recovered), JournalError> {
        std::fs::create_dir_all(dir).map_err(io_error(dir))?;
        let segments = list_segments(dir).map_err(io_error(dir))?;
        let Some(start) = resume_segment(&segments, after)? else {
            let current = Self::create_segment(dir, policy, after + 1)?;
            return Ok((
                Self {
                    dir: dir.to_owned(),
                    policy,
                    current,
                    current_first: after + 1,
                    closing: Vec::new(),
                },
                Recovered {
                    entries: Vec::new(),
                    truncated: 0,
                },
            ));
        };
        let last = segments.len() - 1;
        let mut entries = Vec::new();
        let first = segments[start].first_seq;
        let expected = read_closed(&segments[start..last], first, after, &mut entries)?;
        let newest = &segments[last];
        if newest.first_seq != expected {
            return Err(gap(newest, expected));
        }
        let storage = FileStorage::open(&newest.path).map_err(io_error(&newest.path))?;
        let (current, recovered) = Journal::open_from(storage, policy, newest.first_seq)?;
        entries.extend(recovered.entries.into_iter().filter(|e| e.seq > after));
        let mut journal = Self {
            dir: dir.to_owned(),
            policy,
            current,
            current_first: newest.first_seq,
            closing: Vec::new(),
        };
        // The resumed state is ahead of the journal (possible only when the journal is not
        // synced and the machine lost its tail): continue numbering after the state.
        if journal.current.next_seq() <= after {
            journal.current = Self::create_segment(dir, policy, after + 1)?;
            journal.current_first = after + 1;
        }
        Ok((
            journal,
            Recovered {
                entries,
                truncated: recovered.truncated,
            },
        ))
    }

    fn create_segment(
        dir: &Path,
        policy: SyncPolicy,
        first_seq: u64,
    ) -> Result<Journal<FileStorage>, JournalError> {
        let path = segment_path(dir, first_seq);
        let storage = FileStorage::open(&path).map_err(io_error(&path))?;
        let (journal, _) = Journal::open_from(storage, policy, first_seq)?;
        if policy == SyncPolicy::EveryBatch {
            sync_dir(dir).map_err(io_error(dir))?;
        }
        Ok(journal)
    }

    /// Sequence number the next appended command gets.
    pub fn next_seq(&self) -> u64 {
        self.current.next_seq()
    }

    /// Directory of the segments.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Index of the segment holding record `after + 1` (`None`: no segment at all); refused
/// when the oldest segment starts after it (records in between are missing).
fn resume_segment(segments: &[SegmentFile], after: u64) -> Result<Option<usize>, JournalError> {
    match segments.iter().rposition(|s| s.first_seq <= after + 1) {
        Some(start) => Ok(Some(start)),
        None => match segments.first() {
            Some(first) => Err(corrupt(
                &first.path,
                0,
                format!(
                    "the journal starts at record {} but the state to resume from ends at \
                     record {after}: records in between are missing",
                    first.first_seq
                ),
            )),
            None => Ok(None),
        },
    }
}

/// Reads the segments no writer appends to any more (`closed`, oldest first, the first
/// starting at record `expected`), checking that their records follow one another without
/// a gap or a torn record, and keeps those after `after`; returns the sequence number the
/// next segment must start at.
fn read_closed(
    closed: &[SegmentFile],
    mut expected: u64,
    after: u64,
    entries: &mut Vec<super::JournalEntry>,
) -> Result<u64, JournalError> {
    for segment in closed {
        if segment.first_seq != expected {
            return Err(gap(segment, expected));
        }
        let bytes = std::fs::read(&segment.path).map_err(io_error(&segment.path))?;
        let scanned = scan(&bytes, &segment.path, segment.first_seq)?;
        if let Some(at) = scanned.torn_at {
            return Err(corrupt(
                &segment.path,
                at as u64,
                "incomplete record in a segment that is not the newest".into(),
            ));
        }
        expected = scanned
            .entries
            .last()
            .map_or(segment.first_seq, |e| e.seq + 1);
        entries.extend(scanned.entries.into_iter().filter(|e| e.seq > after));
    }
    Ok(expected)
}

/// Every intact record after `after` in the journal of `dir`, read without changing any
/// file, so while a writer may be appending: a torn record at the newest segment's end
/// (one being written) is left out and counted in `truncated`, not cut off, and a newest
/// segment still getting its header reads as empty. An empty `dir` has no records.
pub fn read_journal(dir: &Path, after: u64) -> Result<Recovered, JournalError> {
    let segments = list_segments(dir).map_err(io_error(dir))?;
    let mut entries = Vec::new();
    let Some(start) = resume_segment(&segments, after)? else {
        return Ok(Recovered {
            entries,
            truncated: 0,
        });
    };
    let last = segments.len() - 1;
    let first = segments[start].first_seq;
    let expected = read_closed(&segments[start..last], first, after, &mut entries)?;
    let newest = &segments[last];
    if newest.first_seq != expected {
        return Err(gap(newest, expected));
    }
    let bytes = std::fs::read(&newest.path).map_err(io_error(&newest.path))?;
    if bytes.len() < super::MAGIC.len() && super::MAGIC.starts_with(&bytes) {
        return Ok(Recovered {
            entries,
            truncated: bytes.len() as u64,
        });
    }
    let scanned = scan(&bytes, &newest.path, newest.first_seq)?;
    let truncated = scanned.torn_at.map_or(0, |at| (bytes.len() - at) as u64);
    entries.extend(scanned.entries.into_iter().filter(|e| e.seq > after));
    Ok(Recovered { entries, truncated })
}

fn gap(segment: &SegmentFile, expected: u64) -> JournalError {
    corrupt(
        &segment.path,
        0,
        format!(
            "sequence gap between segments: expected a segment starting at record {expected}, \
             found one starting at {}",
            segment.first_seq
        ),
    )
}

impl CommandLog for SegmentedJournal {
    fn append(&mut self, time: Timestamp, command: &Command) -> std::io::Result<u64> {
        self.current.append(time, command)
    }

    fn commit(&mut self) -> std::io::Result<()> {
        for job in self.closing.drain(..) {
            job()?;
        }
        self.current.commit()
    }

    fn rotate(&mut self) -> std::io::Result<()> {
        let next = self.current.next_seq();
        if next == self.current_first {
            // Nothing was written to the current segment: it already starts there.
            return Ok(());
        }
        let fresh = Self::create_segment(&self.dir, self.policy, next)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let mut old = std::mem::replace(&mut self.current, fresh);
        self.current_first = next;
        self.closing.push(old.seal_closing());
        Ok(())
    }
}
