//! The sequencer stage (thread `matchbook-sequencer`): takes requests from the ingress
//! queue in batches, stamps each command with the time (never going backwards), appends it
//! to the [`CommandLog`] and commits the batch (one fsync for all of it: group commit), then
//! hands the durable batch to matching. It may block on the log's write and fsync, and on
//! nothing else; it publishes numbered, durable batches. Snapshot points are decided here,
//! where the log is, and travel with the batch.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crossbeam_channel::{Receiver, Sender};
use matchbook_core::{Applied, Command, Timestamp};
use matchbook_store::journal::{CommandLog, JournalEntry};

use crate::clock::Clock;
use crate::handle::{Reply, Request};
use crate::output::{MatchedCommand, SubscribeRequest};
use crate::stats::RuntimeStats;

/// Most requests taken into one batch (one journal commit). Matching only sees a batch
/// once its fsync is done, so under load the batch is what amortises the fsync: at 512 a
/// producer offering 1 M commands/s was held to 0.96 M/s by fsyncs of about 0.4 ms.
pub(crate) const MAX_BATCH: usize = 4096;

/// A durable batch on its way to matching.
#[derive(Default)]
pub(crate) struct Sequenced {
    /// The commands with their numbers and times, laid out as matching publishes them:
    /// it fills in each result where the command lies, rather than move every command
    /// (over 200 bytes) into a batch of its own.
    pub(crate) commands: Vec<MatchedCommand>,
    /// Who waits for each command, in the same order.
    pub(crate) replies: Vec<Reply>,
    /// Subscriptions to open before the batch is applied.
    pub(crate) subscribers: Vec<SubscribeRequest>,
    /// Copy the state right after this batch, answering the snapshot requests counted
    /// here (see [`Sequencer::snapshot_mark`]).
    pub(crate) snapshot: Option<u64>,
    /// The last batch: every stage stops after it.
    pub(crate) stop: bool,
    /// Step down after this batch (another node leads).
    pub(crate) step_down: bool,
}

impl Sequenced {
    /// Adds command `seq` at `time`, answered through `reply` once applied.
    fn push(&mut self, seq: u64, time: Timestamp, command: Command, reply: Reply) {
        self.commands.push(MatchedCommand {
            seq,
            time,
            command,
            result: Ok(Applied::default()),
            events: 0..0,
        });
        self.replies.push(reply);
    }
}

/// When snapshots are due: after `every` journalled commands (0: never by count), on
/// request, and at the stop when `on_stop`; never twice with nothing journalled between.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SnapshotRule {
    pub(crate) every: u64,
    pub(crate) on_stop: bool,
}

/// How a batch's commit ended.
enum Committed {
    Stored,
    /// Another writer leads (or this node was told to step down): the batch's own
    /// commands are not known to be stored and are dropped unanswered.
    Deposed,
    /// The log refused the batch for good (or while a stop was asked for).
    Failed(std::io::Error),
}

/// How the sequencer starts.
pub(crate) struct SequencerStart {
    /// Latest time stamped (a recovered engine's time).
    pub(crate) time: Timestamp,
    /// The log to write, if this runtime leads.
    pub(crate) log: Option<Box<dyn CommandLog>>,
    /// Number of the next command, when known (without a log: 1, or after a follower's
    /// snapshot; with a recovered log: the log numbers them).
    pub(crate) next_seq: Option<u64>,
    /// Whether it follows another node's log (takes no commands of its own).
    pub(crate) following: bool,
}

pub(crate) struct Sequencer {
    clock: Arc<dyn Clock>,
    /// Latest time stamped or replicated.
    last: Timestamp,
    /// How far the clock stood behind `last` at the last stamp (published when it moves).
    behind: u64,
    log: Option<Box<dyn CommandLog>>,
    /// Number the next command takes, once known: replicated commands and a log handed
    /// over by [`Request::Lead`] must continue it.
    next_seq: Option<u64>,
    following: bool,
    rule: Option<SnapshotRule>,
    since_snapshot: u64,
    requested: bool,
    /// Snapshot requests taken from the inbox so far.
    requests_taken: u64,
    stats: Arc<RuntimeStats>,
}

impl Drop for Sequencer {
    /// However the sequencer leaves (even unwinding), ingress learns it before the inbox
    /// is dropped.
    fn drop(&mut self) {
        self.stats.stopped.store(true, Ordering::Release);
    }
}

fn out_of_step(what: &str, seq: u64, due: u64) -> std::io::Error {
    std::io::Error::other(format!("{what} command {seq} where {due} was due"))
}

impl Sequencer {
    pub(crate) fn new(
        clock: Arc<dyn Clock>,
        start: SequencerStart,
        rule: Option<SnapshotRule>,
        stats: Arc<RuntimeStats>,
    ) -> Self {
        stats.following.store(start.following, Ordering::Release);
        Self {
            clock,
            last: start.time,
            behind: 0,
            log: start.log,
            next_seq: start.next_seq,
            following: start.following,
            rule,
            since_snapshot: 0,
            requested: false,
            requests_taken: 0,
            stats,
        }
    }

    /// Runs until a stop request, a log failure or matching going away. On a log failure
    /// the batch being written is dropped unanswered: nothing unlogged is acknowledged. A
    /// log that says another writer leads makes it step down and follow instead.
    pub(crate) fn run(mut self, inbox: &Receiver<Request>, matching: &Sender<Sequenced>) {
        while let Ok(first) = inbox.recv() {
            let mut batch = match self.take(first, inbox) {
                Ok(batch) => batch,
                Err(error) => {
                    self.fail(&error);
                    break;
                }
            };
            match self.commit() {
                Committed::Stored => {}
                Committed::Deposed => {
                    self.drop_own_commands(&mut batch);
                    batch.step_down = true;
                }
                Committed::Failed(error) => {
                    self.fail(&error);
                    break;
                }
            }
            batch.snapshot = self.snapshot_due(batch.stop).then(|| self.snapshot_mark());
            if let Some(last) = batch.commands.last() {
                self.stats.sequenced.store(last.seq, Ordering::Release);
            }
            let (stop, rotate, step_down) = (batch.stop, batch.snapshot.is_some(), batch.step_down);
            if matching.send(batch).is_err() {
                return;
            }
            if stop {
                return;
            }
            if rotate && let Err(error) = self.rotate() {
                self.fail(&error);
                return;
            }
            if step_down {
                self.step_down();
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
        let capacity = MAX_BATCH.min(inbox.len() + 1);
        let mut batch = Sequenced {
            commands: Vec::with_capacity(capacity),
            replies: Vec::with_capacity(capacity),
            ..Sequenced::default()
        };
        let mut next = Some(first);
        while let Some(request) = next.take() {
            match request {
                Request::Apply { command, reply } => self.take_own(command, reply, &mut batch)?,
                Request::Replicate(entries) => self.take_replicated(entries, &mut batch)?,
                Request::Lead(log) => self.lead(log),
                Request::Subscribe(request) => batch.subscribers.push(request),
                Request::Snapshot => {
                    self.requested = true;
                    self.requests_taken += 1;
                }
                Request::Follow => {
                    batch.step_down = true;
                    break;
                }
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

    /// A caller's command: stamped and logged, or, while following, refused (its reply
    /// dropped: the caller was admitted just before the node stepped down).
    fn take_own(
        &mut self,
        command: Command,
        reply: Reply,
        batch: &mut Sequenced,
    ) -> std::io::Result<()> {
        if self.following {
            self.stats.unadmit();
            return Ok(());
        }
        let (seq, time) = self.stamp(&command)?;
        batch.push(seq, time, command, reply);
        Ok(())
    }

    /// Commands the leader sequenced, applied with its numbers and times.
    fn take_replicated(
        &mut self,
        entries: Vec<JournalEntry>,
        batch: &mut Sequenced,
    ) -> std::io::Result<()> {
        for entry in entries {
            let due = self.next_seq.unwrap_or(entry.seq);
            if entry.seq != due {
                return Err(out_of_step("replicated", entry.seq, due));
            }
            self.next_seq = Some(due + 1);
            self.last = self.last.max(entry.time);
            self.since_snapshot += 1;
            batch.push(entry.seq, entry.time, entry.command, Reply::Replicated);
        }
        Ok(())
    }

    /// Writes `log` from now on and takes commands again.
    fn lead(&mut self, log: Box<dyn CommandLog>) {
        self.log = Some(log);
        self.following = false;
        self.stats.demote.store(false, Ordering::Release);
        self.stats.following.store(false, Ordering::Release);
    }

    /// Closes the log and refuses commands: another node leads. Said after the last
    /// batch's sequence number is published, so whoever starts following from it starts
    /// in the right place.
    fn step_down(&mut self) {
        self.log = None;
        self.following = true;
        self.stats.log_unavailable.store(false, Ordering::Release);
        self.stats.demote.store(false, Ordering::Release);
        self.stats.following.store(true, Ordering::Release);
    }

    /// Drops the batch's own (unstored) commands unanswered; numbering resumes at the first.
    fn drop_own_commands(&mut self, batch: &mut Sequenced) {
        let own = |reply: &Reply| !matches!(reply, Reply::Replicated);
        if let Some(first) = batch.replies.iter().position(own) {
            self.next_seq = Some(batch.commands[first].seq);
        }
        let before = batch.commands.len();
        let mut replies = batch.replies.iter();
        (batch.commands).retain(|_| replies.next().is_some_and(|reply| !own(reply)));
        batch.replies.retain(|reply| !own(reply));
        let dropped = (before - batch.commands.len()) as u64;
        self.stats.admitted.fetch_sub(dropped, Ordering::AcqRel);
    }

    /// The number and time of `command`, appended to the log if there is one.
    fn stamp(&mut self, command: &Command) -> std::io::Result<(u64, Timestamp)> {
        // Never backwards, so the journal's times replay in order.
        let now = self.clock.now();
        let time = now.max(self.last);
        self.last = time;
        let behind = time.0.abs_diff(now.0);
        if behind != self.behind {
            self.behind = behind;
            self.stats.clock_behind.store(behind, Ordering::Relaxed);
        }
        let seq = match self.log.as_mut() {
            Some(log) => {
                self.since_snapshot += 1;
                let seq = log.append(time, command)?;
                match self.next_seq {
                    Some(due) if due != seq => return Err(out_of_step("logged", seq, due)),
                    _ => seq,
                }
            }
            None => self.next_seq.unwrap_or(1),
        };
        self.next_seq = Some(seq + 1);
        Ok((seq, time))
    }

    /// Commits the batch; a failure the log says may be retried is retried (the same
    /// batch, so nothing is stored twice or lost) while ingress refuses new commands,
    /// until it succeeds, a stop is asked for, or the node is told to step down.
    fn commit(&mut self) -> Committed {
        let Some(log) = self.log.as_mut() else {
            return Committed::Stored;
        };
        let started = std::time::Instant::now();
        loop {
            let error = match log.commit() {
                Ok(()) => {
                    self.stats.log_unavailable.store(false, Ordering::Release);
                    let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                    self.stats.commit_time.record(nanos, 1);
                    return Committed::Stored;
                }
                Err(error) => error,
            };
            if log.deposed(&error) {
                return Committed::Deposed;
            }
            let Some(wait) = log.retry_after(&error) else {
                return Committed::Failed(error);
            };
            self.stats.log_unavailable.store(true, Ordering::Release);
            if self.stats.stopping.load(Ordering::Acquire) {
                return Committed::Failed(error);
            }
            if self.stats.demote.load(Ordering::Acquire) {
                return Committed::Deposed;
            }
            std::thread::sleep(wait);
        }
    }

    /// Keeps why the log stopped the runtime, for the host to report: nothing after the
    /// last command sequenced was acknowledged.
    fn fail(&self, error: &std::io::Error) {
        let last = self.stats.sequenced.load(Ordering::Acquire);
        let _ = self.stats.log_failure.set(format!(
            "the command log failed after command {last}: {error}"
        ));
    }

    fn rotate(&mut self) -> std::io::Result<()> {
        match self.log.as_mut() {
            Some(log) => log.rotate(),
            None => Ok(()),
        }
    }

    /// The snapshot requests a copy made now answers: those taken so far plus those
    /// refused. Requests are numbered before they are sent and may arrive out of order,
    /// but a count of `n` means `n` distinct numbers were taken or refused before the
    /// copy, one of them at least `n`, given out no earlier than number `n` was: the copy
    /// follows the moment request `n` was numbered, after its caller read `sequenced`. A
    /// refusal counted only after the copy leaves the count short: its later requests then
    /// wait for the next copy, never take an earlier one.
    fn snapshot_mark(&self) -> u64 {
        self.requests_taken + self.stats.snapshot_requests_refused.load(Ordering::Acquire)
    }

    /// Whether the state after this batch is to be copied (resets the count when it is).
    fn snapshot_due(&mut self, stopping: bool) -> bool {
        let requested = std::mem::take(&mut self.requested);
        let Some(rule) = self.rule else {
            return false;
        };
        let by_count = rule.every > 0 && self.since_snapshot >= rule.every;
        // One asked for is taken even with nothing new since the last: the newest file may
        // predate the state (a journal replayed at the start, a write that failed), and
        // whoever asked waits for a snapshot of everything acknowledged so far.
        let due = by_count || (stopping && rule.on_stop);
        if !requested && (self.since_snapshot == 0 || !due) {
            return false;
        }
        self.since_snapshot = 0;
        true
    }
}
