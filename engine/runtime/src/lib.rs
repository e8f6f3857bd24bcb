//! # matchbook-runtime
//!
//! A running exchange: the engine behind a one-way pipeline of stages, each on a thread of
//! its own, joined by lock-free queues (crossbeam). Any number of caller threads hold a
//! [`RuntimeHandle`]. Used by the REST adapter and the C ABI.
//!
//! ```text
//!  callers ──commands──> ingress ──> sequencer ──durable batch──> matching ──Arc<Published>──┬─> acks ──> callers
//!     │                 (bounded,    stamp time,                  Engine::apply              ├─> market ──> reads,
//!     │                  admission)  CommandLog append + commit   only                       │   replica,  snapshots
//!     │                                                                                      └─> subscribers (bounded,
//!     └──────────────────────reads (bounded)─────────────────────────────────> market            dropped when full)
//! ```
//!
//! | stage | thread | may block on | publishes |
//! |---|---|---|---|
//! | ingress | the caller's | nothing (a full pipeline is [`RuntimeError::Busy`]) | requests |
//! | sequencer | `matchbook-sequencer` | the log's write and fsync | numbered, durable batches; snapshot points |
//! | matching | `matchbook-matching` | nothing but its inbox | one shared [`Published`] batch per batch |
//! | acks | `matchbook-acks` | callers' replies (a channel send) | answers; the acknowledged sequence number |
//! | market | `matchbook-market` | the reads it runs | history, candles, tickers, replicas; read answers; snapshot copies; the feed ([`FeedBatch`]: each batch with the book levels its commands changed) |
//!
//! **Back-pressure only at ingress.** A command is admitted while fewer than `capacity`
//! commands are unanswered and the market stage is fewer than `2 * capacity` commands
//! behind; otherwise it is refused with [`RuntimeError::Busy`]. So the queues behind
//! ingress never hold more than about `2 * capacity` commands (callers admitted at the same
//! instant may pass the bound by one each) and the matching thread never waits for a
//! consumer. A subscriber (of matching's batches, [`RuntimeHandle::subscribe`], or of the
//! market stage's feed, [`RuntimeHandle::subscribe_feed`]) has a bounded queue of its own
//! and is dropped, with [`DropReason::Lagged`], the moment it is full.
//!
//! **Events are written once.** Matching writes each batch's events into one buffer; a
//! caller's [`Outcome`] reads its command's slice of it ([`CommandEvents`]), as the stages
//! and subscribers read the whole batch, and whoever drops the batch last hands the buffer
//! back for matching to fill again.
//!
//! **Reads never run on the matching thread.** They run on the market stage against a
//! replica of the engine kept in step by applying the same commands (see [Reads](#reads))
//! and market data built from the published events. A read includes every command
//! acknowledged before it was issued (read-your-writes) and is told the sequence numbers it
//! reflects ([`ReadView`]; 0 before the first command of this run).
//!
//! The runtime reads time from a [`Clock`] and never goes backwards, so the engine itself
//! stays clock-free and a journal of (command, time) replays bit for bit.
//!
//! # Reads
//! The market stage's replica is the matching engine's exact state after the same command:
//! the engine is deterministic, and each command's events are compared with matching's
//! ([`StatsSnapshot::divergences`] counts differences, always 0 unless there is a bug).

#![warn(clippy::too_many_lines)]

mod account_feed;
mod acks;
mod clock;
mod feed;
mod handle;
mod market_stage;
mod matching;
mod output;
mod sequencer;
mod stats;

pub use account_feed::{AccountChange, AccountUpdate, BalanceMove, BalanceMoves};
pub use clock::{Clock, ManualClock, OffsetClock};
pub use feed::{BookUpdate, FeedBatch};
pub use handle::{
    ADMISSION_PATIENCE, AckReply, MarketReply, Outcome, Read, ReadView, RuntimeError, RuntimeHandle,
};
pub use output::{CommandEvents, DropReason, MatchedCommand, Published, Subscription};
pub use stats::{CHECKPOINTS_KEPT, Histogram, RuntimeStats, StatsSnapshot};

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

use matchbook_core::Engine;
use matchbook_market::MarketData;
use matchbook_store::journal::CommandLog;
use matchbook_store::snapshot::SnapshotSink;

use market_stage::MarketStage;
use matching::{Outputs, run_matching};
use sequencer::{Sequencer, SequencerStart, SnapshotRule};

/// Default number of commands in flight (and of reads queued).
pub const DEFAULT_QUEUE_CAPACITY: usize = 65_536;

/// When the runtime snapshots its state, and where the copies go.
#[derive(Clone)]
pub struct SnapshotPlan {
    /// After this many journalled commands (0: only when asked and at the stop).
    pub every: u64,
    /// Also when the runtime stops (if anything was journalled since the last one).
    pub on_stop: bool,
    /// Receives the copied state (a `matchbook_store::SnapshotWriter`'s sink).
    pub sink: SnapshotSink,
    /// Sequence number of the last command in the state the runtime starts from (0 for a
    /// fresh one): a snapshot asked for before any new command is of that state.
    pub resumes_after: u64,
}

impl std::fmt::Debug for SnapshotPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotPlan")
            .field("every", &self.every)
            .field("on_stop", &self.on_stop)
            .field("resumes_after", &self.resumes_after)
            .finish()
    }
}

/// The stage threads.
struct Stages {
    sequencer: JoinHandle<()>,
    matching: JoinHandle<Engine>,
    acks: JoinHandle<()>,
    market: JoinHandle<MarketData>,
}

/// The running stages.
pub struct Runtime {
    handle: RuntimeHandle,
    stages: Option<Stages>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("handle", &self.handle)
            .finish()
    }
}

fn spawn<T: Send + 'static>(
    name: &str,
    run: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<JoinHandle<T>> {
    std::thread::Builder::new().name(name.into()).spawn(run)
}

impl Runtime {
    /// Starts the stages on `engine` and `market`, with no log: commands are numbered
    /// from 1 and nothing is durable. `capacity` bounds the commands in flight and the
    /// reads queued.
    pub fn start(
        engine: Engine,
        market: MarketData,
        clock: Arc<dyn Clock>,
        capacity: usize,
    ) -> std::io::Result<Self> {
        let start = SequencerStart {
            time: engine.now(),
            log: None,
            next_seq: Some(1),
            following: false,
        };
        Self::start_inner(engine, market, clock, capacity, start, None)
    }

    /// As [`Runtime::start`], every command appended to `log` and its batch committed
    /// before matching sees it (write-ahead, group commit): nothing unlogged is ever
    /// applied or answered, and if the log fails the runtime stops. With a `snapshots`
    /// plan, the state after a snapshot point is copied by the market stage from its
    /// replica and the log starts a new segment there.
    pub fn start_durable(
        engine: Engine,
        market: MarketData,
        clock: Arc<dyn Clock>,
        capacity: usize,
        log: Box<dyn CommandLog>,
        snapshots: Option<SnapshotPlan>,
    ) -> std::io::Result<Self> {
        let start = SequencerStart {
            time: engine.now(),
            log: Some(log),
            next_seq: None,
            following: false,
        };
        Self::start_inner(engine, market, clock, capacity, start, snapshots)
    }

    /// Starts the stages as a follower of a replicated log another node writes, on the
    /// state after command `next_seq - 1` (a local snapshot's, or 0): it applies the
    /// commands handed to [`RuntimeHandle::replicate`], which must follow on from there,
    /// refuses commands of its own with [`RuntimeError::NotLeader`], and serves reads,
    /// subscriptions and snapshots as any runtime does. [`RuntimeHandle::lead`] makes it
    /// write a log of its own; a log that says another writer leads makes it follow again.
    pub fn start_follower(
        engine: Engine,
        market: MarketData,
        clock: Arc<dyn Clock>,
        capacity: usize,
        next_seq: u64,
        snapshots: Option<SnapshotPlan>,
    ) -> std::io::Result<Self> {
        let start = SequencerStart {
            time: engine.now(),
            log: None,
            next_seq: Some(next_seq.max(1)),
            following: true,
        };
        Self::start_inner(engine, market, clock, capacity, start, snapshots)
    }

    fn start_inner(
        engine: Engine,
        market: MarketData,
        clock: Arc<dyn Clock>,
        capacity: usize,
        start: SequencerStart,
        plan: Option<SnapshotPlan>,
    ) -> std::io::Result<Self> {
        let capacity = capacity.max(1);
        let stats = Arc::new(RuntimeStats::default());
        let (requests, ingress) = crossbeam_channel::bounded(capacity);
        let (reads, read_inbox) = crossbeam_channel::bounded(capacity);
        let (to_matching, matching_inbox) = crossbeam_channel::unbounded();
        let (to_acks, acks_inbox) = crossbeam_channel::unbounded();
        let (to_market, market_inbox) = crossbeam_channel::unbounded();
        let rule = plan.as_ref().map(|p| SnapshotRule {
            every: p.every,
            on_stop: p.on_stop,
        });
        let planned = plan.as_ref().map_or(0, |p| p.resumes_after);
        let resumes_after = planned.max(start.next_seq.map_or(0, |next| next - 1));
        stats.resume_after(resumes_after);
        let sink = plan.map(|p| p.sink);
        // Spawned from the end of the pipeline back: if a spawn fails, the senders held by
        // the closures not yet started are dropped and the stages already running stop.
        let (returns, spares) = output::returns();
        let replica = engine.clone();
        let market_stats = stats.clone();
        let market = spawn("matchbook-market", move || {
            let stage = MarketStage::new(replica, market, sink, &market_stats);
            (stage.resuming_after(resumes_after)).run(&market_inbox, &read_inbox)
        })?;
        let acks_stats = stats.clone();
        let acks = spawn("matchbook-acks", move || {
            acks::run_acks(&acks_inbox, &acks_stats)
        })?;
        let outputs = Outputs {
            acks: to_acks,
            market: to_market,
            subscribers: Vec::new(),
            spares,
            returns,
        };
        let matching_stats = stats.clone();
        let matching = spawn("matchbook-matching", move || {
            run_matching(engine, &matching_inbox, outputs, &matching_stats)
        })?;
        let sequencer = Sequencer::new(clock, start, rule, stats.clone());
        let sequencer = spawn("matchbook-sequencer", move || {
            sequencer.run(&ingress, &to_matching)
        })?;
        Ok(Self {
            handle: RuntimeHandle {
                requests,
                reads,
                stats,
                limit: capacity as u64,
            },
            stages: Some(Stages {
                sequencer,
                matching,
                acks,
                market,
            }),
        })
    }

    /// A handle for one more caller.
    pub fn handle(&self) -> RuntimeHandle {
        self.handle.clone()
    }

    /// Stops after every request queued so far has been applied and answered, and hands the
    /// state back: the matching engine and market data. Requests queued later are dropped
    /// (their replies are never called).
    pub fn shutdown(mut self) -> Result<(Engine, MarketData), RuntimeError> {
        self.stop()
    }

    fn stop(&mut self) -> Result<(Engine, MarketData), RuntimeError> {
        let Some(stages) = self.stages.take() else {
            return Err(RuntimeError::Stopped);
        };
        // A blocking send: the stop must not be lost to a momentarily full queue.
        self.handle.stats.stopping.store(true, Ordering::Release);
        let _ = self.handle.requests.send(handle::Request::Stop);
        let sequenced = stages.sequencer.join();
        let engine = stages.matching.join();
        let acked = stages.acks.join();
        let market = stages.market.join();
        match (sequenced, engine, acked, market) {
            (Ok(()), Ok(engine), Ok(()), Ok(market)) => Ok((engine, market)),
            _ => Err(RuntimeError::Failed),
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

#[cfg(test)]
mod tests;
