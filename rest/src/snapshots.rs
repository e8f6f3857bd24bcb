//! The snapshot writer as the server runs it: each write and each failure logged as it
//! happens (a failure at ERROR: nothing is lost, the journal keeps every command, but the
//! directory grows until a write succeeds), its status published for `/admin/metrics` and
//! for `POST /admin/snapshot`, which asks for a snapshot and waits for its file.

use std::time::Duration;

use matchbook::store::{SnapshotObserver, SnapshotOutcome, WriterStatus};
use tokio::sync::watch;

/// The writer's status as of its latest outcome.
#[derive(Debug, Clone)]
pub struct SnapshotStatus(watch::Receiver<WriterStatus>);

/// What waiting for a snapshot came to.
#[derive(Debug)]
pub enum Waited {
    /// Written: the status right after it.
    Written(WriterStatus),
    /// The write failed (the log says why).
    Failed,
    /// Still being written when the patience ran out.
    StillWriting,
}

impl SnapshotStatus {
    /// The observer to start the writer with, and the status it keeps.
    pub fn observer() -> (SnapshotObserver, Self) {
        let (sender, receiver) = watch::channel(WriterStatus::default());
        let observer = Box::new(move |outcome: &SnapshotOutcome<'_>, now: &WriterStatus| {
            log(outcome);
            sender.send_replace(now.clone());
        });
        (observer, Self(receiver))
    }

    /// The status now.
    pub fn now(&self) -> WriterStatus {
        self.0.borrow().clone()
    }

    /// Waits up to `patience` for the next outcome, after `before` (the status read before
    /// asking), of a snapshot of the state after command `target` or a later one.
    pub async fn wait_for(&self, before: &WriterStatus, target: u64, patience: Duration) -> Waited {
        let at_or_after = |seq: Option<u64>| seq.is_some_and(|s| s >= target);
        let written = |s: &WriterStatus| s.written > before.written && at_or_after(s.last_seq);
        let failed =
            |s: &WriterStatus| s.failures > before.failures && at_or_after(s.last_failed_seq);
        let mut receiver = self.0.clone();
        let outcome = receiver.wait_for(|s| written(s) || failed(s));
        match tokio::time::timeout(patience, outcome).await {
            // A write that succeeded and a prune after it that failed: the file is there.
            Ok(Ok(status)) if written(&status) => Waited::Written(status.clone()),
            Ok(Ok(_)) => Waited::Failed,
            // The writer is gone (the server is stopping) or slow: not known to be written.
            Ok(Err(_)) | Err(_) => Waited::StillWriting,
        }
    }
}

fn log(outcome: &SnapshotOutcome<'_>) {
    match *outcome {
        SnapshotOutcome::Written {
            seq,
            path,
            bytes,
            duration,
            segments_pruned,
        } => tracing::info!(
            seq,
            file = %path.display(),
            bytes,
            millis = duration.as_millis() as u64,
            segments_pruned,
            "snapshot written"
        ),
        SnapshotOutcome::Failed { seq, error } => tracing::error!(
            seq,
            %error,
            "a snapshot could not be written (or the files it replaces pruned): the journal \
             keeps every command and grows until one is"
        ),
    }
}
