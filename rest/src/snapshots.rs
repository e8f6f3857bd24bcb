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

    /// Waits up to `patience` for the answer to snapshot request `request` (the number
    /// the runtime gave it): the first outcome of a copy made after the request was numbered.
    /// An earlier request's outcome, even of the same state, is not this one's.
    pub async fn wait_for(&self, request: u64, patience: Duration) -> Waited {
        let written = |s: &WriterStatus| s.written_requests >= request;
        let failed = |s: &WriterStatus| s.failed_requests >= request;
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
            ..
        } => tracing::info!(
            seq,
            file = %path.display(),
            bytes,
            millis = duration.as_millis() as u64,
            segments_pruned,
            "snapshot written"
        ),
        SnapshotOutcome::Failed { seq, error, .. } => tracing::error!(
            seq,
            %error,
            "a snapshot could not be written (or the files it replaces pruned): the journal \
             keeps every command and grows until one is"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A written outcome of the state after `seq` answering requests up to `requests`.
    fn written(seq: u64, requests: u64) -> impl FnOnce(&mut WriterStatus) {
        move |s| {
            s.written += 1;
            s.last_seq = Some(seq);
            s.written_requests = requests;
        }
    }

    /// A failed outcome of the state after `seq` answering requests up to `requests`.
    fn failed(seq: u64, requests: u64) -> impl FnOnce(&mut WriterStatus) {
        move |s| {
            s.failures += 1;
            s.last_failed_seq = Some(seq);
            s.failed_requests = requests;
        }
    }

    /// What request `request` is answered when the writer's status already shows
    /// `earlier` as it starts waiting and `later` arrives while it waits.
    async fn answer(
        request: u64,
        earlier: impl FnOnce(&mut WriterStatus),
        later: impl FnOnce(&mut WriterStatus) + Send + 'static,
    ) -> Waited {
        let (sender, receiver) = watch::channel(WriterStatus::default());
        let status = SnapshotStatus(receiver);
        sender.send_modify(earlier);
        let writer = tokio::spawn(async move {
            sender.send_modify(later);
            sender
        });
        let waited = status.wait_for(request, Duration::from_secs(5)).await;
        drop(writer.await);
        waited
    }

    /// Two operators ask for a snapshot one after the other with no command between: the
    /// first one's copy (of the state after command 7) fails after the second has read the
    /// status, and the second's own copy, of the same state, is written. The second is
    /// answered with its file, not with the first one's failure.
    #[tokio::test]
    async fn another_requests_failure_at_the_same_number_is_not_this_ones() {
        // The first request, number 1, fails; the second is number 2.
        let waited = answer(2, failed(7, 1), written(7, 2)).await;
        assert!(
            matches!(&waited, Waited::Written(s) if s.last_seq == Some(7)),
            "{waited:?}"
        );
    }

    /// This request's own copy failing is its answer; an earlier request's copy written
    /// is not (it is waited past).
    #[tokio::test]
    async fn a_requests_own_failure_is_its_answer_and_an_earlier_write_is_not() {
        let waited = answer(2, written(7, 1), failed(9, 2)).await;
        assert!(matches!(waited, Waited::Failed), "{waited:?}");
    }
}
