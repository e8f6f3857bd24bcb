//! One message of the replicated log: a sealed batch of sequenced commands, in a versioned
//! binary form of its own (never a dump of in-memory structures).
//!
//! Layout (little-endian): `"MBLB" | u8 version | u64 first sequence | u32 count`, then per
//! command `i64 time | u32 length | command bytes` (the journal's command codec), then a
//! `u32 crc32c` of everything before it.

use matchbook_core::{Command, Timestamp};
use matchbook_store::journal::codec;
use matchbook_store::journal::{JournalEntry, crc32c};

/// First bytes of every batch.
pub const BATCH_MAGIC: &[u8; 4] = b"MBLB";
/// Batch format version.
pub const BATCH_VERSION: u8 = 1;

/// Why a message is not a batch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BatchError {
    /// Too short, a wrong magic or version, or lengths that run past the end.
    #[error("malformed batch: {0}")]
    Malformed(&'static str),
    /// The checksum does not match.
    #[error("batch checksum mismatch")]
    Checksum,
    /// A command that does not decode.
    #[error("batch command {index}: {reason}")]
    Command {
        /// Its place in the batch.
        index: u32,
        /// The decoder's words.
        reason: String,
    },
}

/// A batch being sealed: commands appended in sequence.
#[derive(Debug, Default)]
pub struct BatchWriter {
    bytes: Vec<u8>,
    count: u32,
    first: u64,
}

impl BatchWriter {
    /// Starts a batch whose first command has sequence number `first` (keeps the buffer).
    pub fn start(&mut self, first: u64) {
        self.bytes.clear();
        self.bytes.extend_from_slice(BATCH_MAGIC);
        self.bytes.push(BATCH_VERSION);
        self.bytes.extend_from_slice(&first.to_le_bytes());
        self.bytes.extend_from_slice(&0u32.to_le_bytes());
        self.count = 0;
        self.first = first;
    }

    /// Adds the next command.
    pub fn push(&mut self, time: Timestamp, command: &Command) {
        if self.bytes.is_empty() {
            self.start(self.first);
        }
        self.bytes.extend_from_slice(&time.0.to_le_bytes());
        let at = self.bytes.len();
        self.bytes.extend_from_slice(&0u32.to_le_bytes());
        codec::encode(command, &mut self.bytes);
        let length = (self.bytes.len() - at - 4) as u32;
        self.bytes[at..at + 4].copy_from_slice(&length.to_le_bytes());
        self.count += 1;
    }

    /// Commands in the batch.
    pub fn len(&self) -> u32 {
        self.count
    }

    /// Whether it holds no command.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Sequence number of its first command.
    pub fn first(&self) -> u64 {
        self.first
    }

    /// The sealed bytes (count and checksum written).
    pub fn seal(&mut self) -> Vec<u8> {
        self.bytes[13..17].copy_from_slice(&self.count.to_le_bytes());
        let mut sealed = self.bytes.clone();
        sealed.extend_from_slice(&crc32c(&self.bytes).to_le_bytes());
        sealed
    }
}

fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Result<&'a [u8], BatchError> {
    if bytes.len() < n {
        return Err(BatchError::Malformed("cut short"));
    }
    let (head, rest) = bytes.split_at(n);
    *bytes = rest;
    Ok(head)
}

fn word<const N: usize>(bytes: &mut &[u8]) -> Result<[u8; N], BatchError> {
    let mut out = [0u8; N];
    out.copy_from_slice(take(bytes, N)?);
    Ok(out)
}

/// Reads a sealed batch back into its sequenced commands.
pub fn decode_batch(bytes: &[u8]) -> Result<Vec<JournalEntry>, BatchError> {
    let Some(body_len) = bytes.len().checked_sub(4) else {
        return Err(BatchError::Malformed("cut short"));
    };
    let (body, sum) = bytes.split_at(body_len);
    if crc32c(body).to_le_bytes() != sum {
        return Err(BatchError::Checksum);
    }
    let mut rest = body;
    if take(&mut rest, 4)? != BATCH_MAGIC {
        return Err(BatchError::Malformed("not a matchbook batch"));
    }
    if word::<1>(&mut rest)?[0] != BATCH_VERSION {
        return Err(BatchError::Malformed("unknown batch version"));
    }
    let first = u64::from_le_bytes(word(&mut rest)?);
    let count = u32::from_le_bytes(word(&mut rest)?);
    let mut entries = Vec::with_capacity(count.min(1 << 16) as usize);
    for index in 0..count {
        let time = Timestamp(i64::from_le_bytes(word(&mut rest)?));
        let length = u32::from_le_bytes(word(&mut rest)?) as usize;
        let command = codec::decode(take(&mut rest, length)?).map_err(|e| BatchError::Command {
            index,
            reason: e.to_string(),
        })?;
        let seq = first
            .checked_add(u64::from(index))
            .ok_or(BatchError::Malformed("sequence overflow"))?;
        entries.push(JournalEntry { seq, time, command });
    }
    if !rest.is_empty() {
        return Err(BatchError::Malformed("bytes after the last command"));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use matchbook_core::{AccountId, CurrencyId};

    use super::*;

    fn deposit(account: u32) -> Command {
        Command::Deposit {
            account: AccountId(account),
            currency: CurrencyId(1),
            amount: 5,
        }
    }

    #[test]
    fn a_batch_reads_back_as_written() {
        let mut writer = BatchWriter::default();
        writer.start(41);
        writer.push(Timestamp(7), &deposit(1));
        writer.push(Timestamp(8), &Command::CreateHolder);
        let entries = decode_batch(&writer.seal()).expect("decodes");
        let seqs: Vec<(u64, i64)> = entries.iter().map(|e| (e.seq, e.time.0)).collect();
        assert_eq!(seqs, [(41, 7), (42, 8)]);
        assert_eq!(entries[0].command, deposit(1));
    }

    /// The exact bytes of a one-command batch: a change of format must change the version.
    #[test]
    fn golden_bytes_of_format_1() {
        let mut writer = BatchWriter::default();
        writer.start(1);
        writer.push(Timestamp(2), &Command::CreateHolder);
        let sealed = writer.seal();
        let mut command = Vec::new();
        codec::encode(&Command::CreateHolder, &mut command);
        let mut expected = b"MBLB\x01".to_vec();
        expected.extend_from_slice(&1u64.to_le_bytes());
        expected.extend_from_slice(&1u32.to_le_bytes());
        expected.extend_from_slice(&2i64.to_le_bytes());
        expected.extend_from_slice(&(command.len() as u32).to_le_bytes());
        expected.extend_from_slice(&command);
        let sum = crc32c(&expected);
        expected.extend_from_slice(&sum.to_le_bytes());
        assert_eq!(sealed, expected);
    }

    #[test]
    fn damage_is_refused_not_misread() {
        let mut writer = BatchWriter::default();
        writer.start(1);
        writer.push(Timestamp(2), &deposit(3));
        let sealed = writer.seal();
        for cut in 0..sealed.len() {
            assert!(decode_batch(&sealed[..cut]).is_err(), "cut at {cut}");
        }
        for at in 0..sealed.len() {
            let mut bad = sealed.clone();
            bad[at] ^= 0x40;
            assert!(decode_batch(&bad).is_err(), "flip at {at}");
        }
    }
}
