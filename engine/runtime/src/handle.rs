//! The way in: a [`RuntimeHandle`] per caller thread. Commands enter the ingress queue
//! (bounded, lock-free) after admission control; reads go straight to the market stage's
//! read queue. Nothing here ever blocks except the `*_blocking` helpers, which wait for
//! their own answer.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crossbeam_channel::{Sender, TrySendError};
use matchbook_core::{Applied, Command, Engine, EngineError, Timestamp};
use matchbook_market::MarketData;
use matchbook_store::journal::{CommandLog, JournalEntry};

use crate::feed::FeedBatch;
use crate::output::{CommandEvents, SubscribeRequest, Subscriber, Subscription};
use crate::stats::{RuntimeStats, StatsSnapshot};

/// How long [`RuntimeHandle::apply_blocking`] keeps asking to be admitted before it gives
/// up with [`RuntimeError::Busy`].
pub const ADMISSION_PATIENCE: Duration = Duration::from_secs(5);
/// Pause between two admission attempts of a blocking caller.
const ADMISSION_RETRY: Duration = Duration::from_micros(200);

/// What a command produced: the engine's answer and every event it emitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The engine's result.
    pub result: Result<Applied, EngineError>,
    /// Events of this command (including expiries that ran before it), in order, read
    /// in the batch matching published.
    pub events: CommandEvents,
    /// The time the command was applied at.
    pub time: Timestamp,
    /// The command's sequence number: a read issued after this outcome was received
    /// reflects at least this command.
    pub seq: u64,
}

/// Why the runtime could not take or answer a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RuntimeError {
    /// Too many commands in flight, or the read queue is full; try again later.
    #[error("engine queue is full")]
    Busy,
    /// The runtime stopped (or is stopping) and takes no more requests.
    #[error("engine is stopped")]
    Stopped,
    /// A stage thread panicked.
    #[error("engine thread failed")]
    Failed,
    /// The command log cannot store commands now (a replicated log without its quorum);
    /// commands are refused until it can again. Try again later.
    #[error("the command log is unavailable")]
    LogUnavailable,
    /// This runtime follows a replicated log that another node writes: it applies that
    /// node's commands and takes none of its own.
    #[error("this node follows the leader; commands go to the leader")]
    NotLeader,
}

/// State as the market stage holds it when a read runs: the replica of the engine,
/// market data, and how far both have got.
#[derive(Debug, Clone, Copy)]
pub struct ReadView<'a> {
    /// The engine replica: the matching engine's exact state after command `seq`.
    pub engine: &'a Engine,
    /// History, candles, tickers and funding history as of the same command.
    pub market: &'a MarketData,
    /// Sequence number of the last command applied.
    pub seq: u64,
    /// Sequence number of the last event of that command (the engine's event counter).
    pub event_seq: u64,
}

/// Called with a command's outcome by the acknowledgement stage.
pub type AckReply = Box<dyn FnOnce(Outcome) + Send>;
/// Called with a command's outcome by the market stage, with market data holding it.
pub type MarketReply = Box<dyn FnOnce(Outcome, &MarketData) + Send>;
/// A read run by the market stage.
pub type Read = Box<dyn FnOnce(&ReadView<'_>) + Send>;

/// Who answers a command.
pub(crate) enum Reply {
    Ack(AckReply),
    Market(MarketReply),
    /// A command another node sequenced and answered: nobody here waits for it.
    Replicated,
}

// Nearly every request is an `Apply`, so its size is the one a channel slot has anyway;
// boxing the command would add an allocation (freed on another thread) per command.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Request {
    Apply {
        command: Command,
        reply: Reply,
    },
    /// Commands of the replicated log, already numbered and timed, to apply as they are.
    Replicate(Vec<JournalEntry>),
    /// Write this log from now on (the node took the lease); its next command must follow
    /// the last one sequenced.
    Lead(Box<dyn CommandLog>),
    /// Stop writing: another node leads.
    Follow,
    Subscribe(SubscribeRequest),
    Snapshot,
    Stop,
}

/// A read waiting for the market stage to reach `min_seq`; with `feed`, a subscriber of
/// the stage's feed added where the read runs.
pub(crate) struct ReadRequest {
    pub(crate) min_seq: u64,
    pub(crate) read: Read,
    pub(crate) feed: Option<Subscriber<FeedBatch>>,
}

/// A cheap, cloneable way in: every caller thread holds one.
#[derive(Clone)]
pub struct RuntimeHandle {
    pub(crate) requests: Sender<Request>,
    pub(crate) reads: Sender<ReadRequest>,
    pub(crate) stats: Arc<RuntimeStats>,
    pub(crate) limit: u64,
}

impl std::fmt::Debug for RuntimeHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeHandle")
            .field("queued", &self.requests.len())
            .field("limit", &self.limit)
            .finish()
    }
}

fn refused<T>(e: TrySendError<T>) -> RuntimeError {
    match e {
        TrySendError::Full(_) => RuntimeError::Busy,
        TrySendError::Disconnected(_) => RuntimeError::Stopped,
    }
}

impl RuntimeHandle {
    fn enqueue(&self, command: Command, reply: Reply) -> Result<(), RuntimeError> {
        if self.stats.stopped.load(Ordering::Acquire) {
            return Err(RuntimeError::Stopped);
        }
        if self.stats.following.load(Ordering::Acquire) {
            return Err(RuntimeError::NotLeader);
        }
        if self.stats.log_unavailable.load(Ordering::Acquire) {
            return Err(RuntimeError::LogUnavailable);
        }
        if !self.stats.admit(self.limit) {
            return Err(RuntimeError::Busy);
        }
        self.requests
            .try_send(Request::Apply { command, reply })
            .map_err(|e| {
                self.stats.unadmit();
                refused(e)
            })
    }

    /// Queues a command; `reply` is called by the acknowledgement stage once the command is
    /// durable and applied. Never blocks: too many commands in flight is
    /// [`RuntimeError::Busy`]. If the runtime stops first, `reply` is dropped uncalled.
    pub fn submit(
        &self,
        command: Command,
        reply: impl FnOnce(Outcome) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        self.enqueue(command, Reply::Ack(Box::new(reply)))
    }

    /// As [`RuntimeHandle::submit`], `reply` called by the market stage with market data
    /// as it stands right after the command (one hop where a submit plus a read would take
    /// two). Its answer waits behind the market stage's work; [`RuntimeHandle::submit`]'s
    /// never does.
    pub fn submit_with_market(
        &self,
        command: Command,
        reply: impl FnOnce(Outcome, &MarketData) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        self.enqueue(command, Reply::Market(Box::new(reply)))
    }

    /// Runs `read` on the market stage, on state that includes every command acknowledged
    /// before this call (read-your-writes), never on the matching thread.
    pub fn read(
        &self,
        read: impl FnOnce(&ReadView<'_>) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        let min_seq = self.stats.acked.load(Ordering::Acquire);
        self.read_at(min_seq, read)
    }

    /// As [`RuntimeHandle::read`], on state that also includes command `min_seq`: a
    /// reader that has seen the output up to a command (a stream's snapshot) reads a state
    /// at least that new.
    pub fn read_after(
        &self,
        min_seq: u64,
        read: impl FnOnce(&ReadView<'_>) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        let acked = self.stats.acked.load(Ordering::Acquire);
        self.read_at(min_seq.max(acked), read)
    }

    /// Runs `read` once the market stage has applied command `min_seq` (or every command
    /// sequenced so far, if `min_seq` is beyond them: a read never waits for a command
    /// that may never come).
    pub fn read_at(
        &self,
        min_seq: u64,
        read: impl FnOnce(&ReadView<'_>) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        let min_seq = min_seq.min(self.stats.sequenced.load(Ordering::Acquire));
        let read = Box::new(read);
        self.reads
            .try_send(ReadRequest {
                min_seq,
                read,
                feed: None,
            })
            .map_err(refused)
    }

    /// Subscribes to the market stage's feed ([`FeedBatch`]: each batch with what its
    /// commands did to the books) through a queue of `capacity` batches, and runs `start`
    /// on the stage's state at the command the feed starts after (the snapshot to apply
    /// its updates to: nothing missed, nothing twice); includes every command acknowledged
    /// before the call. Waits for the stage.
    pub fn subscribe_feed<R: Send + 'static>(
        &self,
        capacity: usize,
        start: impl FnOnce(&ReadView<'_>) -> R + Send + 'static,
    ) -> Result<(Subscription<FeedBatch>, R), RuntimeError> {
        let (subscriber, mut subscription) = crate::output::subscription(capacity, 0);
        let (tx, rx) = crossbeam_channel::bounded(1);
        let read: Read = Box::new(move |view: &ReadView<'_>| {
            let _ = tx.send((view.seq, start(view)));
        });
        let acked = self.stats.acked.load(Ordering::Acquire);
        let min_seq = acked.min(self.stats.sequenced.load(Ordering::Acquire));
        let request = ReadRequest {
            min_seq,
            read,
            feed: Some(subscriber),
        };
        self.reads.try_send(request).map_err(refused)?;
        let (seq, started) = rx.recv().map_err(|_| RuntimeError::Stopped)?;
        subscription.start_seq = seq;
        Ok((subscription, started))
    }

    /// Reads the engine replica (see [`RuntimeHandle::read`]).
    pub fn read_engine(
        &self,
        read: impl FnOnce(&Engine) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        self.read(move |view| read(view.engine))
    }

    /// Reads market data (see [`RuntimeHandle::read`]).
    pub fn read_market(
        &self,
        read: impl FnOnce(&MarketData) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        self.read(move |view| read(view.market))
    }

    /// Submits a command and waits for its outcome (for threads that may block). A caller
    /// that may block also waits to be admitted: `Busy` only after [`ADMISSION_PATIENCE`]
    /// of refusals, since a full pipeline drains by itself unless it is overloaded.
    pub fn apply_blocking(&self, command: Command) -> Result<Outcome, RuntimeError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let deadline = Instant::now() + ADMISSION_PATIENCE;
        loop {
            let tx = tx.clone();
            match self.submit(command.clone(), move |outcome| {
                let _ = tx.send(outcome);
            }) {
                Ok(()) => break,
                Err(RuntimeError::Busy) if Instant::now() < deadline => {
                    std::thread::sleep(ADMISSION_RETRY);
                }
                Err(refused) => return Err(refused),
            }
        }
        drop(tx);
        rx.recv().map_err(|_| RuntimeError::Stopped)
    }

    /// Reads and waits for the answer.
    pub fn read_blocking<R: Send + 'static>(
        &self,
        read: impl FnOnce(&ReadView<'_>) -> R + Send + 'static,
    ) -> Result<R, RuntimeError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.read(move |view| {
            let _ = tx.send(read(view));
        })?;
        rx.recv().map_err(|_| RuntimeError::Stopped)
    }

    /// Reads the engine replica and waits for the answer.
    pub fn engine_blocking<R: Send + 'static>(
        &self,
        read: impl FnOnce(&Engine) -> R + Send + 'static,
    ) -> Result<R, RuntimeError> {
        self.read_blocking(move |view| read(view.engine))
    }

    /// Reads market data and waits for the answer.
    pub fn market_blocking<R: Send + 'static>(
        &self,
        read: impl FnOnce(&MarketData) -> R + Send + 'static,
    ) -> Result<R, RuntimeError> {
        self.read_blocking(move |view| read(view.market))
    }

    /// Subscribes to every batch published from now on, through a queue of `capacity`
    /// batches; waits until the matching thread has opened it.
    pub fn subscribe(&self, capacity: usize) -> Result<Subscription, RuntimeError> {
        let (answer, opened) = crossbeam_channel::bounded(1);
        let request = SubscribeRequest { capacity, answer };
        self.requests
            .try_send(Request::Subscribe(request))
            .map_err(refused)?;
        opened.recv().map_err(|_| RuntimeError::Stopped)
    }

    /// The earliest time at which time passing alone changes the engine (a good-till-time
    /// expiry or a dead-man switch), as of the last batch the market stage applied: when
    /// the clock reaches it, a host applies [`Command::AdvanceTime`]. Read from a counter;
    /// no stage is asked.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        let at = self.stats.next_deadline.load(Ordering::Acquire);
        (at != i64::MAX).then_some(Timestamp(at))
    }

    /// Asks for a snapshot after the commands queued so far, even when nothing changed
    /// since the last (a durable runtime with a snapshot plan only; otherwise nothing
    /// happens), and returns the request's number. The first snapshot writer's outcome
    /// whose `written_requests` (or `failed_requests`) reaches that number is this
    /// request's answer: its state was copied after the request was numbered, so it holds
    /// every command acknowledged before the request, and another request's earlier
    /// outcome, even of the same state, is never mistaken for it.
    pub fn request_snapshot(&self) -> Result<u64, RuntimeError> {
        // Numbered before it is sent: a count of requests taken that reaches a number was
        // reached after that number was given out (see `Sequencer::snapshot_mark`).
        let number = self.stats.snapshot_requests.fetch_add(1, Ordering::AcqRel) + 1;
        self.requests.try_send(Request::Snapshot).map_err(|error| {
            (self.stats.snapshot_requests_refused).fetch_add(1, Ordering::AcqRel);
            refused(error)
        })?;
        Ok(number)
    }

    /// Hands the replicated log's next commands to a following runtime (they must follow
    /// the last one it sequenced, or it stops). Waits while the pipeline holds `capacity`
    /// unfinished commands, so a follower catching up never outruns its own stages.
    pub fn replicate(&self, entries: Vec<JournalEntry>) -> Result<(), RuntimeError> {
        if entries.is_empty() {
            return Ok(());
        }
        if self.stats.stopped.load(Ordering::Acquire) {
            return Err(RuntimeError::Stopped);
        }
        while self.stats.in_flight() >= self.limit {
            let stopping = self.requests.is_empty() && self.stats.stopping.load(Ordering::Acquire);
            if stopping || self.stats.stopped.load(Ordering::Acquire) {
                return Err(RuntimeError::Stopped);
            }
            std::thread::sleep(ADMISSION_RETRY);
        }
        let count = entries.len() as u64;
        self.stats.admitted.fetch_add(count, Ordering::AcqRel);
        self.requests
            .send(Request::Replicate(entries))
            .map_err(|_| {
                self.stats.admitted.fetch_sub(count, Ordering::AcqRel);
                RuntimeError::Stopped
            })
    }

    /// Makes a following runtime write `log` from now on: it takes commands again once the
    /// sequencer has the log. The log's next command must follow the last one replicated.
    pub fn lead(&self, log: Box<dyn CommandLog>) -> Result<(), RuntimeError> {
        (self.requests.send(Request::Lead(log))).map_err(|_| RuntimeError::Stopped)
    }

    /// Makes a leading runtime step down: the batch being written is finished (or, if the
    /// log cannot store it, dropped unanswered), the log is closed, and commands are
    /// refused with [`RuntimeError::NotLeader`] from then on.
    pub fn follow(&self) -> Result<(), RuntimeError> {
        self.stats.demote.store(true, Ordering::Release);
        (self.requests.send(Request::Follow)).map_err(|_| RuntimeError::Stopped)
    }

    /// Whether this runtime follows (takes no commands of its own).
    pub fn is_following(&self) -> bool {
        self.stats.following.load(Ordering::Acquire)
    }

    /// Sequence number of the last command sequenced (durable and on its way to matching),
    /// or `None` before the first in this run.
    pub fn last_sequenced(&self) -> Option<u64> {
        let seq = self.stats.sequenced.load(Ordering::Acquire);
        (seq > 0).then_some(seq)
    }

    /// Makes the market stage record the state hash after every command whose number is a
    /// multiple of `every` (0: never), so that nodes applying the same log can compare
    /// their states at the same commands.
    pub fn set_checkpoint_every(&self, every: u64) {
        self.stats.checkpoint_every.store(every, Ordering::Relaxed);
    }

    /// The recorded (command number, state hash) checkpoints, oldest first (at most
    /// [`crate::CHECKPOINTS_KEPT`]).
    pub fn checkpoints(&self) -> Vec<(u64, u64)> {
        let kept = self
            .stats
            .checkpoints
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        kept.iter().copied().collect()
    }

    /// Requests in the ingress queue, not yet taken by the sequencer.
    pub fn queued(&self) -> usize {
        self.requests.len()
    }

    /// The stages' counters now.
    pub fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }

    /// Why the runtime failed, if it did: the command log refused a batch (a write, sync
    /// or rotation it could not retry: a full disk, an I/O error; or a batch still unstored
    /// when a stop was asked for), or a stage ended without being asked to (a panic,
    /// reported where it happened). Nothing after the command named was acknowledged, and
    /// a restart recovers every command that was.
    pub fn failure(&self) -> Option<String> {
        // Read before the log's reason, which the sequencer keeps before it says stopped.
        let stopped = self.stats.stopped.load(Ordering::Acquire)
            && !self.stats.stopping.load(Ordering::Acquire);
        if let Some(why) = self.stats.log_failure.get() {
            return Some(why.clone());
        }
        stopped.then(|| {
            let last = self.stats.sequenced.load(Ordering::Acquire);
            format!("the engine runtime stopped unexpectedly after command {last}")
        })
    }

    /// The stages' live counters (the matching time histogram among them).
    pub fn live_stats(&self) -> &RuntimeStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A handle whose read queue the test holds, with the stages' counters set by hand.
    fn handle(
        acked: u64,
        sequenced: u64,
    ) -> (RuntimeHandle, crossbeam_channel::Receiver<ReadRequest>) {
        let (requests, _) = crossbeam_channel::bounded(1);
        let (reads, queued) = crossbeam_channel::bounded(4);
        let stats = Arc::new(RuntimeStats::default());
        stats.acked.store(acked, Ordering::Release);
        stats.sequenced.store(sequenced, Ordering::Release);
        let handle = RuntimeHandle {
            requests,
            reads,
            stats,
            limit: 4,
        };
        (handle, queued)
    }

    #[test]
    fn a_read_waits_for_every_command_acknowledged_before_it() {
        let (handle, queued) = handle(7, 9);
        handle.read(|_| {}).expect("queued");
        assert_eq!(queued.try_recv().map(|r| r.min_seq).ok(), Some(7));
    }

    #[test]
    fn a_read_never_waits_for_a_command_not_yet_sequenced() {
        let (handle, queued) = handle(7, 9);
        handle.read_at(100, |_| {}).expect("queued");
        assert_eq!(queued.try_recv().map(|r| r.min_seq).ok(), Some(9));
    }
}
