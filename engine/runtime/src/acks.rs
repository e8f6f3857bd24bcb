//! The acknowledgement stage (thread `matchbook-acks`): answers each caller as soon as its
//! command is durable (the sequencer committed it) and applied (matching published it). It
//! runs nothing but the callers' replies, so an answer never waits behind a history query
//! or a book read. It may block only inside a reply, which the adapters keep to a channel
//! send. Before answering a batch it publishes the batch's last sequence number: a reader
//! who has seen a reply reads state at least that recent.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crossbeam_channel::Receiver;

use crate::handle::Outcome;
use crate::matching::AckWork;
use crate::output::{CommandEvents, Published};
use crate::stats::RuntimeStats;

/// The outcome of command `index` of `published` (its events read in the batch: copying
/// them out for every caller cost this thread about half its time, measured).
pub(crate) fn outcome_of(published: &Arc<Published>, index: usize) -> Option<Outcome> {
    let command = published.commands.get(index)?;
    Some(Outcome {
        result: command.result,
        events: CommandEvents::of(published.clone(), index),
        time: command.time,
        seq: command.seq,
    })
}

/// Runs until matching stops.
pub(crate) fn run_acks(inbox: &Receiver<AckWork>, stats: &RuntimeStats) {
    while let Ok(AckWork::Batch { published, replies }) = inbox.recv() {
        if let Some(seq) = published.last_seq() {
            stats.acked.store(seq, Ordering::Release);
        }
        // Counted before the replies go out: a caller who got one may submit again at once.
        let count = published.commands.len() as u64;
        stats.acked_count.fetch_add(count, Ordering::AcqRel);
        for (index, reply) in replies {
            if let Some(outcome) = outcome_of(&published, index) {
                reply(outcome);
            }
        }
    }
}
