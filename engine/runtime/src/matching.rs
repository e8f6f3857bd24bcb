//! The matching stage (thread `matchbook-matching`): applies each durable batch to the
//! engine with `Engine::apply` and nothing else (no read, no I/O, no history), then
//! publishes the batch once, shared, to the acknowledgement stage, the market stage and the
//! subscribers. It blocks only while waiting for the next batch: the queues to the two
//! stages are unbounded (their depth is bounded by admission at ingress, which counts
//! commands until both stages have finished them) and a subscriber that is full is dropped.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};
use matchbook_core::{Engine, EventRecord};

use crate::handle::{AckReply, MarketReply, Reply};
use crate::output::{MatchedCommand, Published, Returns, Subscriber, empty_events, offer};
use crate::sequencer::Sequenced;
use crate::stats::{RuntimeStats, raise};

/// Work for the acknowledgement stage.
pub(crate) enum AckWork {
    Batch {
        published: Arc<Published>,
        replies: Vec<(usize, AckReply)>,
    },
    Stop,
}

/// Work for the market stage.
pub(crate) enum MarketWork {
    Batch {
        published: Arc<Published>,
        replies: Vec<(usize, MarketReply)>,
        /// Copy the state after this batch, answering the snapshot requests counted here.
        snapshot: Option<u64>,
    },
    Stop,
}

/// Where matching publishes.
pub(crate) struct Outputs {
    pub(crate) acks: Sender<AckWork>,
    pub(crate) market: Sender<MarketWork>,
    pub(crate) subscribers: Vec<Subscriber>,
    /// Event buffers the stages handed back, to fill again.
    pub(crate) spares: Receiver<Vec<EventRecord>>,
    /// The way back, given to each batch published here.
    pub(crate) returns: Returns,
}

/// Runs until the last batch; returns the engine.
pub(crate) fn run_matching(
    mut engine: Engine,
    inbox: &Receiver<Sequenced>,
    mut outputs: Outputs,
    stats: &RuntimeStats,
) -> Engine {
    while let Ok(batch) = inbox.recv() {
        let stop = batch.stop;
        if !publish(&mut engine, batch, &mut outputs, stats) || stop {
            break;
        }
    }
    let _ = outputs.acks.send(AckWork::Stop);
    let _ = outputs.market.send(MarketWork::Stop);
    engine
}

/// How far beyond the next event's place the event buffer is claimed, in bytes: past
/// the events of the command about to run (two or three of 144 bytes on most).
const EVENTS_AHEAD: usize = 512;

/// Lines of the event buffer claimed before each command: about one command's events.
const EVENT_LINES_CLAIMED: usize = 6;

/// Claims the lines the next command's answer will be written to: the sequencer wrote
/// them, most likely on the other core.
#[inline(always)]
fn claim_result(next: &MatchedCommand) {
    let result = std::ptr::from_ref(&next.result) as usize;
    matchbook_prefetch::line_for_write(result);
    matchbook_prefetch::line_for_write(result + 64);
}

/// Claims the event buffer's lines a little ahead of where events are written: a buffer
/// handed back was last read on other cores, a new one by none. (A claim past the
/// buffer's end is harmless: a prefetch never faults.)
#[inline(always)]
fn claim_events(events: &[EventRecord]) {
    let end = events.as_ptr() as usize + size_of_val(events);
    for line in 0..EVENT_LINES_CLAIMED {
        matchbook_prefetch::line_for_write(end + EVENTS_AHEAD + line * 64);
    }
}

/// Applies one batch and hands it on; false when a stage has gone.
fn publish(
    engine: &mut Engine,
    batch: Sequenced,
    outputs: &mut Outputs,
    stats: &RuntimeStats,
) -> bool {
    let started = Instant::now();
    let start_seq = stats.matched.load(Ordering::Relaxed);
    for request in batch.subscribers {
        outputs.subscribers.extend(request.open(start_seq));
    }
    let count = batch.commands.len();
    let events = empty_events(&outputs.spares, count);
    let mut published = Published::returning(batch.commands, events, outputs.returns.clone());
    for index in 0..count {
        // The next command's lines are fetched while this one runs (`Engine::hint_ahead`),
        // and the lines this thread writes next are claimed from the cores that last held
        // them.
        if let Some(next) = published.commands.get(index + 1) {
            engine.hint_ahead(&next.command);
            claim_result(next);
        }
        claim_events(&published.events);
        let first = published.events.len();
        let matched = &mut published.commands[index];
        matched.result = engine.apply(&matched.command, matched.time, &mut published.events);
        matched.events = first..published.events.len();
    }
    let mut acks = Vec::with_capacity(count);
    let mut market = Vec::new();
    for (index, reply) in batch.replies.into_iter().enumerate() {
        match reply {
            Reply::Ack(reply) => acks.push((index, reply)),
            Reply::Market(reply) => market.push((index, reply)),
            Reply::Replicated => {}
        }
    }
    if let Some(seq) = published.last_seq() {
        stats.matched.store(seq, Ordering::Release);
    }
    let published = Arc::new(published);
    if count > 0 {
        // Subscribers are offered the batch before anyone is answered, so a caller that
        // got its answer finds the batch already in every subscriber's queue (a session
        // following accounts reads its own command's effects at once).
        let lagged = offer(&mut outputs.subscribers, &published);
        stats
            .dropped_subscribers
            .fetch_add(lagged, Ordering::Relaxed);
        let work = AckWork::Batch {
            published: published.clone(),
            replies: acks,
        };
        if outputs.acks.send(work).is_err() {
            return false;
        }
    }
    if count > 0 || batch.snapshot.is_some() {
        let work = MarketWork::Batch {
            published,
            replies: market,
            snapshot: batch.snapshot,
        };
        if outputs.market.send(work).is_err() {
            return false;
        }
    }
    if count > 0 {
        // Everything the thread did for the batch, not only `apply`: were any other work
        // (a read, a copy) to run here, it would show.
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        stats.busy_time.record(nanos / count as u64, count as u64);
        raise(&stats.longest_batch, nanos);
    }
    true
}
