//! The sequencer stage (thread `matchbook-sequencer`): takes requests from the ingress
//! queue in batches, stamps each command with the time (never going backwards), appends it
//! to the [`CommandLog`] and commits the batch (one fsync for all of it: group commit), then
//! hands the durable batch to matching. It may block on the log's write and fsync, and on
//! nothing else; it publishes numbered, durable batches. Snapshot points are decided here,
//! where the log is, and travel with the batch.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crossbeam_channel::{Receiver, Sender};
use matchbook_core::{Command, Timestamp};
use matchbook_store::journal::CommandLog;

use crate::clock::Clock;
use crate::handle::{Reply, Request};
use crate::output::SubscribeRequest;
use crate::stats::RuntimeStats;

/// Most requests taken into one batch (one journal commit). Matching only sees a batch
/// once its fsync is done, so under load the batch is what amortises the fsync: at 512 a
/// producer offering 1 M commands/s was held to 0.96 M/s by fsyncs of about 0.4 ms.
pub(crate) const MAX_BATCH: usize = 4096;

/// A command with its number and time.
pub(crate) struct Stamped {
    pub(crate) seq: u64,
    pub(crate) time: Timestamp,
    pub(crate) command: Command,
    pub(crate) reply: Reply,
}

/// A durable batch on its way to matching.
#[derive(Default)]
pub(crate) struct Sequenced {
    pub(crate) commands: Vec<Stamped>,
    /// Subscriptions to open before the batch is applied.
    pub(crate) subscribers: Vec<SubscribeRequest>,
    /// Copy the state right after this batch.
    pub(crate) snapshot: bool,
    /// The last batch: every stage stops after it.
    pub(crate) stop: bool,
}

/// When snapshots are due: after `every` journalled commands (0: never by count), on
/// request, and at the stop when `on_stop`; never twice with nothing journalled between.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SnapshotRule {
    pub(crate) every: u64,
    pub(crate) on_stop: bool,
}

pub(crate) struct Sequencer {
    clock: Arc<dyn Clock>,
    /// Latest time stamped (a recovered engine's time at first).
    last: Timestamp,
    log: Option<Box<dyn CommandLog>>,
    /// Number of the next command without a log.
    next_seq: u64,
    rule: Option<SnapshotRule>,
    since_snapshot: u64,
    requested: bool,
    stats: Arc<RuntimeStats>,
}

impl Sequencer {
    pub(crate) fn new(
        clock: Arc<dyn Clock>,
        start: Timestamp,
        log: Option<Box<dyn CommandLog>>,
        rule: Option<SnapshotRule>,
        stats: Arc<RuntimeStats>,
    ) -> Self {
        Self {
            clock,
            last: start,
            log,
            next_seq: 1,
            rule,
            since_snapshot: 0,
            requested: false,
            stats,
        }
    }

    /// Runs until a stop request, a log failure or matching going away. On a log failure
    /// the batch being written is dropped unanswered: nothing unlogged is acknowledged.
    pub(crate) fn run(mut self, inbox: &Receiver<Request>, matching: &Sender<Sequenced>) {
        while let Ok(first) = inbox.recv() {
            let Ok(mut batch) = self.take(first, inbox) else {
                break;
            };
            if self.commit().is_err() {
                break;
            }
            batch.snapshot = self.snapshot_due(batch.stop);
            if let Some(last) = batch.commands.last() {
                self.stats.sequenced.store(last.seq, Ordering::Release);
            }
            let (stop, rotate) = (batch.stop, batch.snapshot);
            if matching.send(batch).is_err() {
                return;
            }
            if stop || (rotate && self.rotate().is_err()) {
                return;
            }
        }
        let _ = matching.send(Sequenced {
            stop: true,
            ..Sequenced::default()
        });
    }

    /// Takes `first` and whatever else is queued (up to [`MAX_BATCH`]) into one batch,
    /// appending each command to the log.
    fn take(&mut self, first: Request, inbox: &Receiver<Request>) -> std::io::Result<Sequenced> {
        let mut batch = Sequenced {
            commands: Vec::with_capacity(MAX_BATCH.min(inbox.len() + 1)),
            ..Sequenced::default()
        };
        let mut next = Some(first);
        while let Some(request) = next.take() {
            match request {
                Request::Apply { command, reply } => {
                    let stamped = self.stamp(command, reply)?;
                    batch.commands.push(stamped);
                }
                Request::Subscribe(request) => batch.subscribers.push(request),
                Request::Snapshot => self.requested = true,
                Request::Stop => {
                    batch.stop = true;
                    break;
                }
            }
            if batch.commands.len() < MAX_BATCH {
                next = inbox.try_recv().ok();
            }
        }
        Ok(batch)
    }

    fn stamp(&mut self, command: Command, reply: Reply) -> std::io::Result<Stamped> {
        // Never backwards, so the journal's times replay in order.
        let time = self.clock.now().max(self.last);
        self.last = time;
        let seq = match self.log.as_mut() {
            Some(log) => {
                self.since_snapshot += 1;
                log.append(time, &command)?
            }
            None => {
                self.next_seq += 1;
                self.next_seq - 1
            }
        };
        Ok(Stamped {
            seq,
            time,
            command,
            reply,
        })
    }

    /// Commits the batch; a failure the log says may be retried is retried (the same
    /// batch, so nothing is stored twice or lost) while ingress refuses new commands,
    /// until it succeeds or a stop is asked for.
    fn commit(&mut self) -> std::io::Result<()> {
        let Some(log) = self.log.as_mut() else {
            return Ok(());
        };
        loop {
            let error = match log.commit() {
                Ok(()) => {
                    self.stats.log_unavailable.store(false, Ordering::Release);
                    return Ok(());
                }
                Err(error) => error,
            };
            let Some(wait) = log.retry_after(&error) else {
                return Err(error);
            };
            self.stats.log_unavailable.store(true, Ordering::Release);
            if self.stats.stopping.load(Ordering::Acquire) {
                return Err(error);
            }
            std::thread::sleep(wait);
        }
    }

    fn rotate(&mut self) -> std::io::Result<()> {
        match self.log.as_mut() {
            Some(log) => log.rotate(),
            None => Ok(()),
        }
    }

    /// Whether the state after this batch is to be copied (resets the count when it is).
    fn snapshot_due(&mut self, stopping: bool) -> bool {
        let requested = std::mem::take(&mut self.requested);
        let Some(rule) = self.rule else {
            return false;
        };
        let by_count = rule.every > 0 && self.since_snapshot >= rule.every;
        let due = requested || by_count || (stopping && rule.on_stop);
        if self.since_snapshot == 0 || !due {
            return false;
        }
        self.since_snapshot = 0;
        true
    }
}
