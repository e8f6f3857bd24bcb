//! [`LogTail`]: a follower's reader of the command log. It remembers the stream sequence it
//! has read to and, on each poll, returns the commands stored since, checked to follow the
//! last one it returned: a follower applies exactly the leader's sequence, once, in order.

use std::time::Duration;

use async_nats::jetstream::{self, stream};
use matchbook_store::journal::JournalEntry;

use crate::LogError;
use crate::batch::decode_batch;

/// A reader of the log from some command on.
pub struct LogTail {
    runtime: tokio::runtime::Runtime,
    stream: stream::Stream,
    name: String,
    /// Next stream message to read.
    next_message: u64,
    /// Sequence number of the next command to return.
    next_command: u64,
}

impl std::fmt::Debug for LogTail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (f.debug_struct("LogTail"))
            .field("stream", &self.name)
            .field("next_message", &self.next_message)
            .field("next_command", &self.next_command)
            .finish()
    }
}

impl LogTail {
    /// A reader of stream `name` that returns commands from number `from` on (1: all of
    /// them; after a snapshot of command `n`: `n + 1`).
    pub fn open(
        servers: &[String],
        name: &str,
        from: u64,
        timeout: Duration,
    ) -> Result<Self, LogError> {
        let runtime = crate::nats::runtime()?;
        let from = from.max(1);
        let (stream, next_message) = runtime.block_on(async {
            let context: jetstream::Context = crate::nats::connect(servers, timeout).await?;
            let stream = (context.get_stream(name).await).map_err(|e| LogError::Stream {
                stream: name.to_owned(),
                reason: e.to_string(),
            })?;
            let message = locate(&stream, name, from).await?;
            Ok::<_, LogError>((stream, message))
        })?;
        Ok(LogTail {
            runtime,
            stream,
            name: name.to_owned(),
            next_message,
            next_command: from,
        })
    }

    /// Sequence number of the next command it will return.
    pub fn next_command(&self) -> u64 {
        self.next_command
    }

    /// Removes every batch wholly before command `keep_from` from the log (the group's
    /// leader does, once every node's snapshot covers them); returns how many went.
    pub fn trim_before(&mut self, keep_from: u64) -> Result<u64, LogError> {
        self.runtime
            .block_on(trim_before(&self.stream, &self.name, keep_from))
    }

    /// The commands stored since the last poll (none when nothing new is stored).
    pub fn poll(&mut self) -> Result<Vec<JournalEntry>, LogError> {
        let mut next = Some(self.next_command);
        let read = read_messages(&self.stream, &self.name, self.next_message, &mut next);
        let (entries, last) = self.runtime.block_on(read)?;
        self.next_message = last + 1;
        self.next_command = next.unwrap_or(self.next_command);
        Ok(entries)
    }
}

/// First command of stream message `sequence` (a batch is never empty).
async fn first_command(
    stream: &stream::Stream,
    name: &str,
    sequence: u64,
) -> Result<u64, LogError> {
    let message = (stream.get_raw_message(sequence).await).map_err(|e| LogError::Stream {
        stream: name.to_owned(),
        reason: format!("message {sequence}: {e}"),
    })?;
    let batch = decode_batch(&message.payload).map_err(|e| LogError::Corrupt {
        sequence,
        reason: e.to_string(),
    })?;
    (batch.first().map(|e| e.seq)).ok_or(LogError::Corrupt {
        sequence,
        reason: "an empty batch".into(),
    })
}

/// The stream message that holds command `command`, found by bisection over the
/// messages' first commands (batches are stored in command order), or the one after the
/// last when `command` is not stored yet. A stream trimmed past `command` cannot serve a
/// reader that needs it: that is an error (the reader needs a newer snapshot).
pub(crate) async fn locate(
    stream: &stream::Stream,
    name: &str,
    command: u64,
) -> Result<u64, LogError> {
    let mut stream = stream.clone();
    let info = (stream.info().await).map_err(|e| LogError::Stream {
        stream: name.to_owned(),
        reason: e.to_string(),
    })?;
    let (mut low, mut high) = (info.state.first_sequence, info.state.last_sequence);
    if info.state.messages == 0 || high < low {
        return Ok(high + 1);
    }
    let oldest = first_command(&stream, name, low).await?;
    if oldest > command {
        return Err(LogError::Trimmed {
            needed: command,
            oldest,
        });
    }
    // Invariant: message `low` starts at or before `command`.
    while low < high {
        let middle = low + (high - low).div_ceil(2);
        if first_command(&stream, name, middle).await? <= command {
            low = middle;
        } else {
            high = middle - 1;
        }
    }
    Ok(low)
}

/// Removes from the stream every batch wholly before command `keep_from` (the batch that
/// holds it stays); returns how many messages went.
pub(crate) async fn trim_before(
    stream: &stream::Stream,
    name: &str,
    keep_from: u64,
) -> Result<u64, LogError> {
    let message = locate(stream, name, keep_from).await?;
    let purged = (stream.purge().sequence(message).await).map_err(|e| LogError::Stream {
        stream: name.to_owned(),
        reason: format!("trimming: {e}"),
    })?;
    Ok(purged.purged)
}

/// The commands of the stream's messages from message `from` to the last stored, each
/// numbered `*next` (then `*next` moves on; commands below it are skipped, a gap above it
/// is damage; `None`: the first one read sets it). Returns them and the last message read.
pub(crate) async fn read_messages(
    stream: &stream::Stream,
    name: &str,
    from: u64,
    next: &mut Option<u64>,
) -> Result<(Vec<JournalEntry>, u64), LogError> {
    let stream_error = |reason: String| LogError::Stream {
        stream: name.to_owned(),
        reason,
    };
    let info = (stream.get_info().await).map_err(|e| stream_error(e.to_string()))?;
    let (first, last) = (
        info.state.first_sequence.max(from),
        info.state.last_sequence,
    );
    let mut out = Vec::new();
    for sequence in first..=last {
        let message = (stream.get_raw_message(sequence).await)
            .map_err(|e| stream_error(format!("message {sequence}: {e}")))?;
        let corrupt = |reason: String| LogError::Corrupt { sequence, reason };
        let batch = decode_batch(&message.payload).map_err(|e| corrupt(e.to_string()))?;
        for entry in batch {
            let due = *next.get_or_insert(entry.seq);
            if entry.seq < due {
                continue;
            }
            if entry.seq != due {
                return Err(corrupt(format!(
                    "command {} where {due} was due",
                    entry.seq
                )));
            }
            *next = Some(due + 1);
            out.push(entry);
        }
    }
    Ok((out, last.max(from.saturating_sub(1))))
}
