//! The journal thread of a durable runtime (group commit) and the engine thread's record
//! of when a snapshot is due.

use crossbeam_channel::{Receiver, Sender};
use matchbook_core::Engine;
use matchbook_store::journal::CommitJob;

use super::{Deferred, MarketWork, SnapshotPlan};

/// A batch waiting for its journal write, and the answer of the journal thread.
pub(crate) type Sealed = (CommitJob, Vec<Deferred>);
pub(crate) type Durable = Result<Vec<Deferred>, ()>;

/// The journal thread: writes sealed batches in order and syncs once for all that queued
/// up meanwhile (group commit), then hands each batch back, in order, once durable.
pub(crate) fn run_journal(jobs: &Receiver<Sealed>, durable: &Sender<Durable>) {
    let mut group: Vec<Sealed> = Vec::new();
    while let Ok(first) = jobs.recv() {
        group.push(first);
        group.extend(jobs.try_iter());
        let last = group.len() - 1;
        let mut written = Ok(());
        let mut batches = Vec::with_capacity(group.len());
        for (i, (job, batch)) in group.drain(..).enumerate() {
            if written.is_ok() {
                written = job(i == last);
            }
            batches.push(batch);
        }
        if written.is_err() {
            let _ = durable.send(Err(()));
            break;
        }
        for batch in batches {
            if durable.send(Ok(batch)).is_err() {
                return;
            }
        }
    }
}

/// Where the engine thread stands with snapshots.
pub(crate) struct SnapshotState {
    pub(crate) plan: Option<SnapshotPlan>,
    /// Commands journalled since the last snapshot point.
    pub(crate) since: u64,
    pub(crate) last_seq: u64,
    pub(crate) requested: bool,
}

impl SnapshotState {
    pub(crate) fn journalled(&mut self, seq: u64) {
        self.since += 1;
        self.last_seq = seq;
    }

    /// The snapshot work for the end of this batch, when one is due (asked for, or the
    /// plan's interval reached) and anything was journalled since the last one.
    pub(crate) fn due(&mut self, engine: &Engine) -> Option<Deferred> {
        let requested = std::mem::take(&mut self.requested);
        let plan = self.plan.as_ref()?;
        let interval = plan.every > 0 && self.since >= plan.every;
        if self.since == 0 || !(requested || interval) {
            return None;
        }
        self.since = 0;
        Some(Deferred::Market(MarketWork::Snapshot {
            seq: self.last_seq,
            engine: Box::new(engine.clone()),
            sink: plan.sink.clone(),
        }))
    }
}
