//! The threaded runtime: the engine on a thread of its own, reached by any number of caller
//! threads through a bounded lock-free queue (crossbeam), with market data on a second
//! thread fed by the first. Used by the REST adapter and the C ABI.
//!
//! ```text
//! callers --Request--> [engine thread: stamp time, Engine::apply] --events--> [market-data thread:
//!                                                                              MarketData::on_events, reply]
//! ```
//!
//! A command's reply is sent by the market-data thread after it took in the command's
//! events, so a caller that got its reply and then reads history sees its own command. Reads
//! are closures run on the thread that owns the state they read, between two commands: no
//! lock is taken anywhere and the matching thread never waits for a reader or for market
//! data. The runtime reads time from a [`Clock`] and never goes backwards, so the engine
//! itself stays clock-free and a journal of (command, time) replays bit for bit.

mod clock;
mod journal_stage;
mod market_stage;

pub use clock::{Clock, ManualClock, OffsetClock};
use journal_stage::{Durable, Sealed, SnapshotState, run_journal};
use market_stage::{MarketStage, run_market};

use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, TrySendError};

use matchbook_core::Command;
use matchbook_core::EngineError;
use matchbook_core::EventRecord;
use matchbook_core::Timestamp;
use matchbook_core::{Applied, Engine};
use matchbook_market::MarketData;
use matchbook_store::journal::{CommandLog, CommitJob};
use matchbook_store::snapshot::SnapshotSink;

/// Default number of requests the ingress queue holds.
pub const DEFAULT_QUEUE_CAPACITY: usize = 65_536;

/// What a command produced: the engine's answer and every event it emitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The engine's result.
    pub result: Result<Applied, EngineError>,
    /// Events of this command (including expiries that ran before it), in order.
    pub events: Vec<EventRecord>,
    /// The time the command was applied at.
    pub time: Timestamp,
}

/// Why the runtime could not take or answer a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RuntimeError {
    /// The ingress queue is full; try again later.
    #[error("engine queue is full")]
    Busy,
    /// The runtime stopped (or is stopping) and takes no more requests.
    #[error("engine is stopped")]
    Stopped,
    /// An engine or market-data thread panicked.
    #[error("engine thread failed")]
    Failed,
}

/// Completes a command: called once, where market data lives, with market data already
/// holding the command's events (so a reply can read history without another hop).
pub type CommandReply = Box<dyn FnOnce(Outcome, &MarketData) + Send>;
/// A read of engine state, run on the engine thread.
pub type EngineRead = Box<dyn FnOnce(&Engine) + Send>;
/// A read of market data, run on the market-data thread.
pub type MarketRead = Box<dyn FnOnce(&MarketData) + Send>;

enum Request {
    Apply {
        command: Command,
        reply: CommandReply,
    },
    ReadEngine(EngineRead),
    ReadMarket(MarketRead),
    Snapshot,
    Stop,
}

enum MarketWork {
    Events {
        result: Result<Applied, EngineError>,
        events: Vec<EventRecord>,
        time: Timestamp,
        reply: CommandReply,
    },
    Read(MarketRead),
    /// The engine as of journal record `seq`; market data adds its own copy and hands both
    /// to the sink.
    Snapshot {
        seq: u64,
        engine: Box<Engine>,
        sink: SnapshotSink,
    },
    Stop,
}

/// When the runtime snapshots its state, and where the copies go.
#[derive(Clone)]
pub struct SnapshotPlan {
    /// After this many journalled commands (0: only when asked and at the stop).
    pub every: u64,
    /// Also when the runtime stops (if anything was journalled since the last one).
    pub on_stop: bool,
    /// Receives the copied state (a [`matchbook_store::SnapshotWriter`]'s sink).
    pub sink: SnapshotSink,
}

impl std::fmt::Debug for SnapshotPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotPlan")
            .field("every", &self.every)
            .field("on_stop", &self.on_stop)
            .finish()
    }
}

/// A cheap, cloneable way in: every caller thread holds one.
#[derive(Clone)]
pub struct RuntimeHandle {
    requests: Sender<Request>,
}

impl std::fmt::Debug for RuntimeHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeHandle")
            .field("queued", &self.requests.len())
            .finish()
    }
}

impl RuntimeHandle {
    fn enqueue(&self, request: Request) -> Result<(), RuntimeError> {
        self.requests.try_send(request).map_err(|e| match e {
            TrySendError::Full(_) => RuntimeError::Busy,
            TrySendError::Disconnected(_) => RuntimeError::Stopped,
        })
    }

    /// Queues a command; `reply` is called with its outcome once market data has it. Never
    /// blocks: a full queue is [`RuntimeError::Busy`]. If the runtime stops before the
    /// command is applied, `reply` is dropped uncalled.
    pub fn submit(
        &self,
        command: Command,
        reply: impl FnOnce(Outcome) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        self.submit_with_market(command, move |outcome, _| reply(outcome))
    }

    /// As [`RuntimeHandle::submit`], and `reply` also reads market data as it stands right
    /// after the command (one hop where a submit plus a read would take two).
    pub fn submit_with_market(
        &self,
        command: Command,
        reply: impl FnOnce(Outcome, &MarketData) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        self.enqueue(Request::Apply {
            command,
            reply: Box::new(reply),
        })
    }

    /// Runs `read` on the engine thread between two commands.
    pub fn read_engine(
        &self,
        read: impl FnOnce(&Engine) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        self.enqueue(Request::ReadEngine(Box::new(read)))
    }

    /// Runs `read` on the market-data thread, after the events of every command queued
    /// before it.
    pub fn read_market(
        &self,
        read: impl FnOnce(&MarketData) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        self.enqueue(Request::ReadMarket(Box::new(read)))
    }

    /// Submits a command and waits for its outcome (for threads that may block).
    pub fn apply_blocking(&self, command: Command) -> Result<Outcome, RuntimeError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.submit(command, move |outcome| {
            let _ = tx.send(outcome);
        })?;
        rx.recv().map_err(|_| RuntimeError::Stopped)
    }

    /// Reads engine state and waits for the answer.
    pub fn engine_blocking<R: Send + 'static>(
        &self,
        read: impl FnOnce(&Engine) -> R + Send + 'static,
    ) -> Result<R, RuntimeError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.read_engine(move |engine| {
            let _ = tx.send(read(engine));
        })?;
        rx.recv().map_err(|_| RuntimeError::Stopped)
    }

    /// Reads market data and waits for the answer.
    pub fn market_blocking<R: Send + 'static>(
        &self,
        read: impl FnOnce(&MarketData) -> R + Send + 'static,
    ) -> Result<R, RuntimeError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.read_market(move |market| {
            let _ = tx.send(read(market));
        })?;
        rx.recv().map_err(|_| RuntimeError::Stopped)
    }

    /// Asks for a snapshot after the commands queued so far (a durable runtime with a
    /// snapshot plan only; otherwise nothing happens).
    pub fn request_snapshot(&self) -> Result<(), RuntimeError> {
        self.enqueue(Request::Snapshot)
    }

    /// Requests queued and not yet taken by the engine thread.
    pub fn queued(&self) -> usize {
        self.requests.len()
    }
}

/// Where market data is kept up to date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MarketDataPlacement {
    /// On a thread of its own, fed by the engine thread: the matching thread never spends
    /// time on history, candles or tickers. Best when cores are free.
    #[default]
    OwnThread,
    /// On the engine thread, right after each command: one thread hand-off fewer per
    /// request, which wins when callers and both threads share two cores.
    EngineThread,
}

/// The running engine and market-data threads.
pub struct Runtime {
    handle: RuntimeHandle,
    engine_thread: Option<JoinHandle<(Engine, Option<MarketData>)>>,
    market_thread: Option<JoinHandle<MarketData>>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("handle", &self.handle)
            .finish()
    }
}

impl Runtime {
    /// Moves `engine` and `market` onto their threads (market data on its own thread).
    /// `capacity` bounds the ingress queue.
    pub fn start(
        engine: Engine,
        market: MarketData,
        clock: Arc<dyn Clock>,
        capacity: usize,
    ) -> std::io::Result<Self> {
        Self::start_with(
            engine,
            market,
            clock,
            capacity,
            MarketDataPlacement::OwnThread,
        )
    }

    /// As [`Runtime::start`], with market data where `placement` says.
    pub fn start_with(
        engine: Engine,
        market: MarketData,
        clock: Arc<dyn Clock>,
        capacity: usize,
        placement: MarketDataPlacement,
    ) -> std::io::Result<Self> {
        Self::start_inner(engine, market, clock, capacity, placement, None)
    }

    /// As [`Runtime::start_with`], every command appended to `log` and the batch
    /// committed before any of its results is answered (write-ahead, group commit). If the
    /// log fails, the runtime stops: nothing unlogged is ever acknowledged. With a
    /// `snapshots` plan, the state is copied at snapshot points (the engine on its thread,
    /// market data on its own, both right after the same journal record) and the log
    /// starts a new segment there.
    pub fn start_durable(
        engine: Engine,
        market: MarketData,
        clock: Arc<dyn Clock>,
        capacity: usize,
        placement: MarketDataPlacement,
        log: Box<dyn CommandLog>,
        snapshots: Option<SnapshotPlan>,
    ) -> std::io::Result<Self> {
        Self::start_inner(
            engine,
            market,
            clock,
            capacity,
            placement,
            Some((log, snapshots)),
        )
    }

    fn start_inner(
        engine: Engine,
        market: MarketData,
        clock: Arc<dyn Clock>,
        capacity: usize,
        placement: MarketDataPlacement,
        log: Option<(Box<dyn CommandLog>, Option<SnapshotPlan>)>,
    ) -> std::io::Result<Self> {
        let (requests, inbox) = crossbeam_channel::bounded(capacity.max(1));
        let (stage, market_thread) = match placement {
            MarketDataPlacement::EngineThread => (MarketStage::Inline(Box::new(market)), None),
            MarketDataPlacement::OwnThread => {
                let (to_market, market_inbox) = crossbeam_channel::bounded(capacity.max(1));
                let thread = std::thread::Builder::new()
                    .name("matchbook-market".into())
                    .spawn(move || run_market(market, &market_inbox))?;
                (MarketStage::Thread(to_market), Some(thread))
            }
        };
        let engine_thread = std::thread::Builder::new()
            .name("matchbook-engine".into())
            .spawn(move || run_engine(engine, &*clock, &inbox, stage, log))?;
        Ok(Self {
            handle: RuntimeHandle { requests },
            engine_thread: Some(engine_thread),
            market_thread,
        })
    }

    /// A handle for one more caller.
    pub fn handle(&self) -> RuntimeHandle {
        self.handle.clone()
    }

    /// Stops after every request queued so far has been applied and answered, and hands the
    /// state back. Requests queued later are dropped (their replies are never called).
    pub fn shutdown(mut self) -> Result<(Engine, MarketData), RuntimeError> {
        self.stop()
    }

    fn stop(&mut self) -> Result<(Engine, MarketData), RuntimeError> {
        let Some(engine_thread) = self.engine_thread.take() else {
            return Err(RuntimeError::Stopped);
        };
        // A blocking send: the stop must not be lost to a momentarily full queue.
        let _ = self.handle.requests.send(Request::Stop);
        let (engine, inline) = engine_thread.join().map_err(|_| RuntimeError::Failed)?;
        let market = match (inline, self.market_thread.take()) {
            (Some(market), _) => market,
            (None, Some(thread)) => thread.join().map_err(|_| RuntimeError::Failed)?,
            (None, None) => return Err(RuntimeError::Failed),
        };
        Ok((engine, market))
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// Most requests taken into one batch (one journal commit).
const MAX_BATCH: usize = 512;

/// Work of a batch that waits for the batch's commit.
enum Deferred {
    Market(MarketWork),
    Engine(EngineRead),
}

/// Runs the deferred work of a durable (or log-free) batch; false when market data is gone.
fn release(engine: &Engine, stage: &mut MarketStage, batch: Vec<Deferred>) -> bool {
    for work in batch {
        match work {
            Deferred::Engine(read) => read(engine),
            Deferred::Market(work) => {
                if !stage.take(work) {
                    return false;
                }
            }
        }
    }
    true
}

fn run_engine(
    mut engine: Engine,
    clock: &dyn Clock,
    inbox: &Receiver<Request>,
    mut stage: MarketStage,
    log: Option<(Box<dyn CommandLog>, Option<SnapshotPlan>)>,
) -> (Engine, Option<MarketData>) {
    let (mut log, plan) = match log {
        Some((log, plan)) => (Some(log), plan),
        None => (None, None),
    };
    let mut snapshots = SnapshotState {
        plan,
        since: 0,
        last_seq: 0,
        requested: false,
    };
    // A recovered engine's time is the last journalled time: never stamp before it.
    let mut last = engine.now();
    // With a log, sealed batches go to a journal thread (write + fsync) while the next
    // batch is applied; their answers are released when they come back durable, in order.
    let (jobs_tx, jobs_rx) = crossbeam_channel::unbounded::<Sealed>();
    let (durable_tx, durable_rx) = crossbeam_channel::unbounded::<Durable>();
    let journal_thread = log.is_some().then(|| {
        std::thread::Builder::new()
            .name("matchbook-journal".into())
            .spawn(move || run_journal(&jobs_rx, &durable_tx))
    });
    let journal_thread = match journal_thread {
        Some(Ok(handle)) => Some(handle),
        Some(Err(_)) => None,
        None => None,
    };
    let pipelined = journal_thread.is_some();
    // Without a journal thread nothing comes back durable: wait on a channel that never
    // delivers (a disconnected one would always be ready).
    let durable_rx = if pipelined {
        durable_rx
    } else {
        crossbeam_channel::never()
    };
    let mut in_flight = 0usize;
    let mut batch: Vec<Deferred> = Vec::with_capacity(MAX_BATCH);
    'serve: loop {
        let first = crossbeam_channel::select! {
            recv(inbox) -> request => match request {
                Ok(request) => request,
                Err(_) => break 'serve,
            },
            recv(durable_rx) -> done => {
                in_flight -= 1;
                let Ok(Ok(done)) = done else { break 'serve };
                if !release(&engine, &mut stage, done) {
                    break 'serve;
                }
                continue 'serve;
            },
        };
        let mut next = Some(first);
        let mut stop = false;
        // Take what is queued (up to a bound) and apply it; the batch is answered once.
        while let Some(request) = next.take() {
            match request {
                Request::Apply { command, reply } => {
                    // Never backwards, so the journal's times replay in order.
                    let time = clock.now().max(last);
                    last = time;
                    if let Some(log) = log.as_mut() {
                        let Ok(seq) = log.append(time, &command) else {
                            break 'serve;
                        };
                        snapshots.journalled(seq);
                    }
                    let mut events = Vec::with_capacity(8);
                    let result = engine.apply(&command, time, &mut events);
                    batch.push(Deferred::Market(MarketWork::Events {
                        result,
                        events,
                        time,
                        reply,
                    }));
                }
                Request::ReadEngine(read) => batch.push(Deferred::Engine(read)),
                Request::ReadMarket(read) => batch.push(Deferred::Market(MarketWork::Read(read))),
                Request::Snapshot => snapshots.requested = true,
                Request::Stop => {
                    stop = true;
                    break;
                }
            }
            if batch.len() < MAX_BATCH {
                next = inbox.try_recv().ok();
            }
        }
        // A snapshot point closes the batch: the copy is released with the batch, once its
        // commands are durable, and the log starts a new segment after them.
        let snapshot = snapshots.due(&engine);
        let rotate = snapshot.is_some();
        batch.extend(snapshot);
        let work = std::mem::replace(&mut batch, Vec::with_capacity(MAX_BATCH));
        match log.as_mut() {
            Some(log) if pipelined => {
                // A batch with nothing to write still waits behind the ones in flight.
                let job: CommitJob = match log.seal() {
                    Ok(Some(job)) => job,
                    Ok(None) => Box::new(|_| Ok(())),
                    Err(_) => break 'serve,
                };
                if jobs_tx.send((job, work)).is_err() {
                    break 'serve;
                }
                in_flight += 1;
                if rotate && log.rotate().is_err() {
                    break 'serve;
                }
            }
            Some(log) => {
                if log.commit().is_err() || !release(&engine, &mut stage, work) {
                    break 'serve;
                }
                if rotate && log.rotate().is_err() {
                    break 'serve;
                }
            }
            None => {
                if !release(&engine, &mut stage, work) {
                    break 'serve;
                }
            }
        }
        if stop {
            // Everything taken before the stop is answered once durable.
            while in_flight > 0 {
                in_flight -= 1;
                let Ok(Ok(done)) = durable_rx.recv() else {
                    break;
                };
                if !release(&engine, &mut stage, done) {
                    break;
                }
            }
            if in_flight == 0 && snapshots.plan.as_ref().is_some_and(|p| p.on_stop) {
                snapshots.requested = true;
                if let Some(Deferred::Market(work)) = snapshots.due(&engine) {
                    stage.take(work);
                }
            }
            break;
        }
    }
    drop(jobs_tx);
    if let Some(handle) = journal_thread {
        let _ = handle.join();
    }
    match stage {
        MarketStage::Inline(market) => (engine, Some(*market)),
        MarketStage::Thread(to_market) => {
            let _ = to_market.send(MarketWork::Stop);
            (engine, None)
        }
    }
}

#[cfg(test)]
mod tests;
