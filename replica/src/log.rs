//! [`JetStreamLog`]: the command log as a JetStream stream of sealed batches. One process
//! (the leader) appends; it states, with every publish, the stream sequence it expects to
//! follow, so a publish from a leader that another has replaced is refused by the servers
//! ([`LogError::Fenced`]), and a fenced log refuses everything after. The message id of a
//! batch is (term, first command sequence): a publish retried after a lost acknowledgement
//! is stored once, and two leaders of different terms never collide.

use std::time::{Duration, Instant};

use async_nats::jetstream::{self, context::PublishErrorKind, stream};
use matchbook_core::{Command, Timestamp};
use matchbook_store::journal::{CommandLog, JournalEntry};

use crate::batch::BatchWriter;
use crate::tail::{locate, read_messages};

/// Where the log lives and how it is written.
#[derive(Debug, Clone)]
pub struct LogConfig {
    /// Server URLs (`nats://host:port`); the client moves between them.
    pub servers: Vec<String>,
    /// Stream name (one stream per engine); its subject is `matchbook.<name>.log`.
    pub stream: String,
    /// Copies JetStream keeps (3 for a quorum that survives one lost server).
    pub replicas: usize,
    /// The writer's leadership term: part of every message id.
    pub term: u64,
    /// How long a publish (and the first connection) may take before it fails.
    pub timeout: Duration,
}

impl LogConfig {
    /// The subject batches are published on.
    pub fn subject(&self) -> String {
        format!("matchbook.{}.log", self.stream)
    }
}

/// Why the log could not be opened, read or appended to.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// No server could be reached in time.
    #[error("cannot connect to NATS: {0}")]
    Connect(String),
    /// The stream could not be created or read.
    #[error("stream {stream}: {reason}")]
    Stream {
        /// Stream name.
        stream: String,
        /// The server's or client's words.
        reason: String,
    },
    /// A batch was not acknowledged (no quorum, timed out, connection lost): it may or may
    /// not be stored; a retry with the same message id is safe.
    #[error("batch at command {first} not acknowledged: {reason}")]
    Unacknowledged {
        /// Its first command's sequence number.
        first: u64,
        /// The client's words.
        reason: String,
    },
    /// Another writer appended since this one last did: this writer is no longer leader.
    #[error("fenced: the stream moved past sequence {expected} (another leader appended)")]
    Fenced {
        /// The stream sequence this writer expected to follow.
        expected: u64,
    },
    /// The stream no longer holds a command a reader needs (trimmed below it, after every
    /// node's snapshot covered it): the reader must start from a newer snapshot.
    #[error(
        "command {needed} is no longer in the log (it starts at {oldest}): start this node \
         from a newer snapshot (copy one from another node's data directory)"
    )]
    Trimmed {
        /// The command needed.
        needed: u64,
        /// The oldest command stored.
        oldest: u64,
    },
    /// A stored batch does not decode, or its commands do not follow the previous ones.
    #[error("stream message {sequence}: {reason}")]
    Corrupt {
        /// Stream sequence of the message.
        sequence: u64,
        /// What is wrong.
        reason: String,
    },
}

impl From<LogError> for std::io::Error {
    fn from(e: LogError) -> Self {
        std::io::Error::other(e)
    }
}

/// The command log on a JetStream stream.
pub struct JetStreamLog {
    runtime: tokio::runtime::Runtime,
    context: jetstream::Context,
    config: LogConfig,
    subject: String,
    batch: BatchWriter,
    /// A sealed batch not acknowledged yet: (first command, bytes). Published again, as
    /// it is, by the next commit; nothing is appended until it is stored.
    unsent: Option<(u64, Vec<u8>)>,
    /// Sequence number the next appended command takes.
    next_seq: u64,
    /// Stream sequence of the last batch stored (what the next publish expects).
    last_stream_seq: u64,
    /// Set once fenced: every later append and commit is refused.
    fenced: bool,
}

impl std::fmt::Debug for JetStreamLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (f.debug_struct("JetStreamLog"))
            .field("stream", &self.config.stream)
            .field("next_seq", &self.next_seq)
            .field("last_stream_seq", &self.last_stream_seq)
            .field("fenced", &self.fenced)
            .finish()
    }
}

/// Creates the stream (or finds it), retrying while the cluster is still electing its
/// JetStream leader.
async fn ensure_stream(
    context: &jetstream::Context,
    config: &LogConfig,
) -> Result<stream::Stream, LogError> {
    let settings = stream::Config {
        name: config.stream.clone(),
        subjects: vec![config.subject()],
        storage: stream::StorageType::File,
        num_replicas: config.replicas,
        duplicate_window: Duration::from_secs(120),
        allow_direct: true,
        ..Default::default()
    };
    let deadline = Instant::now() + config.timeout.max(Duration::from_secs(20));
    loop {
        match context.get_or_create_stream(settings.clone()).await {
            Ok(stream) => return Ok(stream),
            // The cluster may still be electing its JetStream leader.
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => {
                return Err(LogError::Stream {
                    stream: config.stream.clone(),
                    reason: e.to_string(),
                });
            }
        }
    }
}

/// The whole stream, retried while the servers cannot serve it yet (a cluster that has
/// just regained its quorum is still electing the stream's leader); damage is not retried.
async fn read_all_patiently(
    context: &jetstream::Context,
    config: &LogConfig,
) -> Result<(Vec<JournalEntry>, u64), LogError> {
    let deadline = Instant::now() + config.timeout.max(Duration::from_secs(20));
    loop {
        let stream = ensure_stream(context, config).await?;
        match read_messages(&stream, &config.stream, 1, &mut None).await {
            Err(LogError::Stream { .. }) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            done => return done,
        }
    }
}

impl JetStreamLog {
    /// Connects, creates the stream if it does not exist, and reads every batch stored:
    /// the log appends after the last of them. Returns the commands to replay.
    pub fn open(config: LogConfig) -> Result<(Self, Vec<JournalEntry>), LogError> {
        let runtime = crate::nats::runtime()?;
        let (context, entries, last) = runtime.block_on(async {
            let context = crate::nats::connect(&config.servers, config.timeout).await?;
            let (entries, last) = read_all_patiently(&context, &config).await?;
            Ok::<_, LogError>((context, entries, last))
        })?;
        let next_seq = entries.last().map_or(1, |e| e.seq + 1);
        let log = Self::writing(runtime, context, config, next_seq, last);
        Ok((log, entries))
    }

    /// Connects, creates the stream if it does not exist, and reads the batches from the
    /// one holding command `next` on (a node that has applied every command before it
    /// takes over): the log appends after the last stored. Returns the commands from
    /// `next` on, to apply before appending.
    pub fn open_after(config: LogConfig, next: u64) -> Result<(Self, Vec<JournalEntry>), LogError> {
        let runtime = crate::nats::runtime()?;
        let next = next.max(1);
        let (context, entries, last, next_seq) = runtime.block_on(async {
            let context = crate::nats::connect(&config.servers, config.timeout).await?;
            let stream = ensure_stream(&context, &config).await?;
            let from = locate(&stream, &config.stream, next).await?;
            let mut due = Some(next);
            let (entries, last) = read_messages(&stream, &config.stream, from, &mut due).await?;
            Ok::<_, LogError>((context, entries, last, due.unwrap_or(next)))
        })?;
        let log = Self::writing(runtime, context, config, next_seq, last);
        Ok((log, entries))
    }

    /// A writer that appends command `next_seq` on after stream message `last`.
    fn writing(
        runtime: tokio::runtime::Runtime,
        context: jetstream::Context,
        config: LogConfig,
        next_seq: u64,
        last: u64,
    ) -> Self {
        let subject = config.subject();
        JetStreamLog {
            runtime,
            context,
            config,
            subject,
            batch: BatchWriter::default(),
            unsent: None,
            next_seq,
            last_stream_seq: last,
            fenced: false,
        }
    }

    /// Sequence number the next appended command takes.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Whether another writer has appended since this one (it must step down).
    pub fn is_fenced(&self) -> bool {
        self.fenced
    }

    /// Publishes a sealed batch and waits for its acknowledgement.
    fn publish(&mut self, first: u64, payload: Vec<u8>) -> Result<(), LogError> {
        let expected = self.last_stream_seq;
        let message = jetstream::message::PublishMessage::build()
            .payload(payload.into())
            .message_id(format!("{}.{first}", self.config.term))
            .expected_last_sequence(expected);
        let subject = self.subject.clone();
        let acked = self.runtime.block_on(async {
            let ack = self.context.send_publish(subject, message).await?;
            ack.await
        });
        match acked {
            Ok(ack) => {
                self.last_stream_seq = ack.sequence;
                Ok(())
            }
            Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => {
                self.fenced = true;
                Err(LogError::Fenced { expected })
            }
            Err(e) => Err(LogError::Unacknowledged {
                first,
                reason: e.to_string(),
            }),
        }
    }
}

impl CommandLog for JetStreamLog {
    /// A batch not acknowledged is published again (after 100 ms); a fenced log never.
    fn retry_after(&self, error: &std::io::Error) -> Option<Duration> {
        let cause = error.get_ref()?.downcast_ref::<LogError>()?;
        matches!(cause, LogError::Unacknowledged { .. }).then_some(Duration::from_millis(100))
    }

    fn deposed(&self, error: &std::io::Error) -> bool {
        let cause = error.get_ref().and_then(|e| e.downcast_ref::<LogError>());
        matches!(cause, Some(LogError::Fenced { .. }))
    }

    fn append(&mut self, time: Timestamp, command: &Command) -> std::io::Result<u64> {
        if self.fenced {
            return Err(LogError::Fenced {
                expected: self.last_stream_seq,
            }
            .into());
        }
        if let Some((first, _)) = self.unsent {
            // Appending to it would give the retried batch other contents under the same
            // message id: the servers would keep the first and drop the rest.
            return Err(LogError::Unacknowledged {
                first,
                reason: "a batch is waiting to be acknowledged; commit again first".into(),
            }
            .into());
        }
        if self.batch.is_empty() {
            self.batch.start(self.next_seq);
        }
        self.batch.push(time, command);
        self.next_seq += 1;
        Ok(self.next_seq - 1)
    }

    /// Publishes the batch appended since the last commit. A batch that is not
    /// acknowledged stays pending, sealed: the next commit publishes the same bytes with
    /// the same message id, so it is stored once whether or not the first try was; a
    /// fenced log refuses from then on.
    fn commit(&mut self) -> std::io::Result<()> {
        if self.fenced {
            return Err(LogError::Fenced {
                expected: self.last_stream_seq,
            }
            .into());
        }
        if self.unsent.is_none() && !self.batch.is_empty() {
            self.unsent = Some((self.batch.first(), self.batch.seal()));
            self.batch = BatchWriter::default();
        }
        let Some((first, payload)) = self.unsent.clone() else {
            return Ok(());
        };
        self.publish(first, payload)?;
        self.unsent = None;
        Ok(())
    }
}
