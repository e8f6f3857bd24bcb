//! `mb_runtime` and `mb_session`: the thread-safe handle. The engine runs on its own thread
//! behind the runtime's bounded lock-free queue; every producer thread opens an
//! `mb_session` (its own reply slot and event list, so producers share nothing and take no
//! lock) and submits commands or queries through it, waiting for each answer.

use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use matchbook::market::MarketData;
use matchbook::runtime::{
    Clock, DEFAULT_QUEUE_CAPACITY, ManualClock, OffsetClock, Outcome, Runtime, RuntimeHandle,
};
use matchbook::{Engine, EventRecord, Timestamp};

use crate::boundary::{OneUser, Poison, arg, enter_one_user, fail, guard, out};
use crate::command::{MbCommand, MbResult, status_of, to_command};
use crate::config::MbConfig;
use crate::event::MbEvent;
use crate::query::Reader;
use crate::query_exports as exports;
use crate::refdata::MbRefData;
use crate::status::MbStatus;

// The session's read exports live in their own file; the runtime's API is one module.
pub use crate::session_queries::*;

/// How a thread-safe engine runs.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbRuntimeOptions {
    /// Requests the ingress queue holds (0: 65,536). A full queue answers
    /// `MB_STATUS_BUSY`.
    pub queue_capacity: usize,
    /// Nonzero: time stands still at `start_time_ns` until `mb_runtime_set_time` (for
    /// replays and tests); zero: the system clock.
    pub manual_clock: u8,
    /// Start time of a manual clock.
    pub start_time_ns: i64,
    /// Ignored (kept for ABI compatibility): market data and every read now always run on
    /// a stage of their own, never on the matching thread.
    pub market_data_thread: u8,
}

/// What keeps the engine's threads running: a runtime in memory, or a node on a data
/// directory (`mb_node_open`).
enum Owner {
    Runtime(Runtime),
    Node(Box<matchbook_node::Node>),
}

/// The engine on its own thread.
pub struct MbRuntime {
    owner: Owner,
    manual: Option<Arc<ManualClock>>,
    clock: Arc<dyn Clock>,
    refdata: MbRefData,
    /// Set when a call panicked while using the runtime.
    poison: Poison,
}

/// An outcome, and the sender to use for the next command. The session keeps no sender of
/// its own while a command is out: if the runtime drops the reply uncalled (it stopped),
/// the channel has no sender left and the wait ends instead of hanging.
struct Reply {
    outcome: Outcome,
    next: Sender<Reply>,
}

/// One producer's way into an `mb_runtime`: used by one thread at a time.
pub struct MbSession {
    handle: RuntimeHandle,
    clock: Arc<dyn Clock>,
    sender: Option<Sender<Reply>>,
    receiver: Receiver<Reply>,
    keep_events: bool,
    pending: Vec<EventRecord>,
    /// The accounts it follows (`mb_session_follow`), if any.
    pub(crate) follow: Option<crate::follow::Follow>,
    /// Its market feed (`mb_session_subscribe_market`), if any.
    pub(crate) market: Option<crate::market_feed::MarketFeed>,
    /// Its account feed (`mb_session_subscribe_accounts`), if any.
    pub(crate) accounts: Option<crate::account_feed::AccountFeed>,
    /// Set when a call panicked while using the session; held while a call is inside it.
    user: OneUser,
}

impl MbRuntime {
    fn build(config: &MbConfig, options: MbRuntimeOptions) -> Result<Self, MbStatus> {
        let engine = config.engine()?;
        let mut refdata = MbRefData::of(&engine, Default::default());
        let manual = (options.manual_clock != 0)
            .then(|| Arc::new(ManualClock::at(Timestamp(options.start_time_ns))));
        let clock: Arc<dyn Clock> = match &manual {
            Some(m) => m.clone(),
            None => Arc::new(OffsetClock::default()),
        };
        let instruments = engine.instruments().len();
        let market = if config.market_data {
            config.new_market(instruments)
        } else {
            MarketData::off(instruments)
        };
        let capacity = match options.queue_capacity {
            0 => DEFAULT_QUEUE_CAPACITY,
            n => n,
        };
        let runtime = Runtime::start(engine, market, clock.clone(), capacity)
            .map_err(|e| fail(MbStatus::Stopped, format!("engine thread: {e}")))?;
        let handle = runtime.handle();
        let directory = matchbook_config::provision(
            &config.exchange.holders,
            |code| refdata.currency(code),
            |command| match handle.apply_blocking(command) {
                Ok(outcome) => outcome.result.map_err(MbStatus::from),
                Err(e) => Err(MbStatus::from(e)),
            },
        )
        .map_err(|e| fail(MbStatus::InvalidConfig, e.to_string()))?;
        refdata.set_directory(directory);
        Ok(Self {
            owner: Owner::Runtime(runtime),
            manual,
            clock,
            refdata,
            poison: Poison::default(),
        })
    }
}

impl MbRuntime {
    /// The thread-safe handle of a node: its reference data and the holders it provisioned
    /// or recovered, on the node's clock.
    pub(crate) fn of_node(node: matchbook_node::Node) -> Result<Self, MbStatus> {
        let handle = node.handle();
        let mut refdata = handle
            .engine_blocking(|e| MbRefData::of(e, Default::default()))
            .map_err(|e| fail(MbStatus::from(e), e.to_string()))?;
        refdata.set_directory(node.directory().clone());
        Ok(Self {
            clock: node.clock().clone(),
            owner: Owner::Node(Box::new(node)),
            manual: None,
            refdata,
            poison: Poison::default(),
        })
    }

    fn handle(&self) -> RuntimeHandle {
        match &self.owner {
            Owner::Runtime(runtime) => runtime.handle(),
            Owner::Node(node) => node.handle(),
        }
    }
}

impl MbSession {
    fn submit(
        &mut self,
        command: &MbCommand,
    ) -> Result<(MbResult, Result<(), MbStatus>), MbStatus> {
        let command = to_command(command)?;
        let reply = match self.sender.take() {
            Some(sender) => sender,
            None => {
                let (sender, receiver) = crossbeam_channel::bounded(1);
                self.receiver = receiver;
                sender
            }
        };
        let back = reply.clone();
        let queued = self.handle.submit(command, move |outcome| {
            let next = reply.clone();
            let _ = reply.send(Reply { outcome, next });
        });
        if let Err(e) = queued {
            self.sender = Some(back);
            return Err(fail(MbStatus::from(e), e.to_string()));
        }
        drop(back);
        let Reply { outcome, next } = self.wait()?;
        self.sender = Some(next);
        if self.keep_events {
            self.pending.extend_from_slice(&outcome.events);
        }
        outcome
            .result
            .map(|a| (MbResult::of(a, outcome.time), status_of(&a)))
            .map_err(|e| fail(MbStatus::from(e), e.to_string()))
    }
}

/// Polls for a reply this many times, then yields the core this many times, before
/// sleeping on it: a reply usually comes within microseconds, sleeping costs a futex
/// wake-up (tens of microseconds on a VM), and yielding lets an oversubscribed machine
/// run the engine thread instead of the spinning producers.
const SPINS: u32 = 200;
const YIELDS: u32 = 2_000;

impl MbSession {
    /// The runtime this session talks to.
    pub(crate) fn handle(&self) -> &RuntimeHandle {
        &self.handle
    }

    fn wait(&self) -> Result<Reply, MbStatus> {
        for round in 0..SPINS + YIELDS {
            match self.receiver.try_recv() {
                Ok(reply) => return Ok(reply),
                Err(crossbeam_channel::TryRecvError::Empty) if round < SPINS => {
                    std::hint::spin_loop();
                }
                Err(crossbeam_channel::TryRecvError::Empty) => std::thread::yield_now(),
                Err(crossbeam_channel::TryRecvError::Disconnected) => break,
            }
        }
        self.receiver
            .recv()
            .map_err(|_| fail(MbStatus::Stopped, "engine stopped"))
    }
}

impl Reader for MbSession {
    fn engine<R: Send + 'static>(
        &self,
        read: impl FnOnce(&Engine) -> R + Send + 'static,
    ) -> Result<R, MbStatus> {
        self.handle
            .engine_blocking(read)
            .map_err(|e| fail(MbStatus::from(e), e.to_string()))
    }

    fn market<R: Send + 'static>(
        &self,
        read: impl FnOnce(&MarketData, Timestamp) -> R + Send + 'static,
    ) -> Result<R, MbStatus> {
        let now = self.clock.now();
        self.handle
            .market_blocking(move |m| m.is_on().then(|| read(m, now)))
            .map_err(|e| fail(MbStatus::from(e), e.to_string()))?
            .ok_or_else(|| {
                fail(
                    MbStatus::MarketDataOff,
                    "runtime created without market data",
                )
            })
    }
}

#[inline]
pub(crate) fn session_mut<'a>(session: *mut MbSession) -> Result<&'a mut MbSession, MbStatus> {
    enter_one_user(session, std::mem::offset_of!(MbSession, user), "session")?;
    out(session, "session")
}

#[inline]
fn session_ref<'a>(session: *const MbSession) -> Result<&'a MbSession, MbStatus> {
    enter_one_user(session, std::mem::offset_of!(MbSession, user), "session")?;
    arg(session, "session")
}

impl exports::QueryHandle for MbSession {
    fn resolve<'a>(ptr: *const Self) -> Result<&'a Self, MbStatus> {
        session_ref(ptr)
    }
}

pub(crate) fn runtime_ref<'a>(runtime: *const MbRuntime) -> Result<&'a MbRuntime, MbStatus> {
    let r = arg(runtime, "runtime")?;
    r.poison.enter("runtime")?;
    Ok(r)
}

/// Starts a thread-safe engine from a definition (`options` NULL: system clock, default
/// queue); its holders are provisioned before this
/// returns.
///
/// # Safety
/// `config` from `mb_config_*`; `options` NULL or valid; `out_runtime` writable.
///
/// Threads: any thread, while no thread changes the definition.
/// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_runtime_new(
    config: *const MbConfig,
    options: *const MbRuntimeOptions,
    out_runtime: *mut *mut MbRuntime,
) -> MbStatus {
    guard(|| {
        let config = arg(config, "config")?;
        let slot = out(out_runtime, "out_runtime")?;
        // SAFETY: NULL or valid per the contract.
        let options = unsafe { options.as_ref() }
            .copied()
            .unwrap_or(MbRuntimeOptions {
                queue_capacity: 0,
                manual_clock: 0,
                start_time_ns: 0,
                market_data_thread: 0,
            });
        *slot = Box::into_raw(Box::new(MbRuntime::build(config, options)?));
        Ok(())
    })
}

/// Stops the engine thread after every queued request was answered, and frees the
/// runtime (NULL is ignored). Sessions still open answer `MB_STATUS_STOPPED` afterwards
/// and must still be freed.
///
/// # Safety
/// `runtime` NULL or from `mb_runtime_new`, not freed before, not used concurrently.
///
/// Threads: one thread, once no other uses the runtime.
/// Ownership: frees the handle (NULL is ignored); do not use it after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_runtime_free(runtime: *mut MbRuntime) {
    // SAFETY: forwarded contract; dropping the runtime stops its threads after the queue
    // drained.
    unsafe { crate::boundary::release(runtime) };
}

/// The runtime's reference data; valid until the runtime is freed. Safe to use from any
/// thread (it never changes).
///
/// # Safety
/// `runtime` NULL or live.
///
/// Threads: any thread, concurrently.
/// Ownership: borrowed from the handle until it is freed; never free it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_runtime_refdata(runtime: *const MbRuntime) -> *const MbRefData {
    // SAFETY: NULL or live per the contract.
    unsafe { runtime.as_ref() }.map_or(std::ptr::null(), |r| &r.refdata)
}

/// Sets the time of a manual clock (never backwards: an earlier time is refused with
/// `MB_STATUS_INVALID_ARGUMENT`); commands after this see it.
///
/// # Safety
/// `runtime` live (any thread).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_runtime_set_time(runtime: *const MbRuntime, time_ns: i64) -> MbStatus {
    guard(|| {
        let r = runtime_ref(runtime)?;
        let manual = r.manual.as_ref().ok_or_else(|| {
            fail(
                MbStatus::InvalidArgument,
                "the runtime runs on the system clock",
            )
        })?;
        if time_ns < manual.now().0 {
            return Err(fail(MbStatus::InvalidArgument, "time may not go backwards"));
        }
        manual.set(Timestamp(time_ns));
        Ok(())
    })
}

/// Opens a session for one producer thread (`keep_events` nonzero: the events of its
/// commands are kept for `mb_session_poll_events`).
///
/// # Safety
/// `runtime` live; `out_session` writable.
///
/// Threads: any thread, concurrently.
/// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_new(
    runtime: *const MbRuntime,
    keep_events: u8,
    out_session: *mut *mut MbSession,
) -> MbStatus {
    guard(|| {
        let r = runtime_ref(runtime)?;
        let slot = out(out_session, "out_session")?;
        *slot = Box::into_raw(Box::new(MbSession {
            handle: r.handle(),
            clock: r.clock.clone(),
            sender: None,
            receiver: crossbeam_channel::never(),
            keep_events: keep_events != 0,
            pending: Vec::new(),
            follow: None,
            market: None,
            accounts: None,
            user: OneUser::default(),
        }));
        Ok(())
    })
}

/// Frees a session (NULL is ignored).
///
/// # Safety
/// `session` NULL or from `mb_session_new`, not freed before.
///
/// Threads: the one thread using the session at a time.
/// Ownership: frees the handle (NULL is ignored); do not use it after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_free(session: *mut MbSession) {
    // SAFETY: forwarded contract.
    unsafe { crate::boundary::release(session) };
}

/// Queues `command`, waits until the engine applied it (at the runtime's clock) and
/// writes what it produced (`result` may be NULL). Statuses as `mb_engine_submit`: an order
/// accepted and ended at once by its time in force reports its refusal with `*result`
/// naming it.
///
/// # Safety
/// `session` live and used by this thread only; `command` valid; `result` NULL or
/// writable.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_submit(
    session: *mut MbSession,
    command: *const MbCommand,
    result: *mut MbResult,
) -> MbStatus {
    guard(|| {
        let s = session_mut(session)?;
        let (outcome, status) = s.submit(arg(command, "command")?)?;
        // SAFETY: NULL or writable per the contract.
        if let Some(slot) = unsafe { result.as_mut() } {
            *slot = outcome;
        }
        status
    })
}

/// Moves the events of this session's commands since the last poll into `events` (all or
/// nothing, as `mb_engine_poll_events`); `MB_STATUS_EVENTS_OFF` for a session opened with
/// `keep_events` 0.
///
/// # Safety
/// `session` live; `events` NULL or `capacity` writable elements; `len_out` writable.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_poll_events(
    session: *mut MbSession,
    events: *mut MbEvent,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    guard(|| {
        let s = session_mut(session)?;
        if !s.keep_events {
            return Err(fail(
                MbStatus::EventsOff,
                "session opened with keep_events 0",
            ));
        }
        crate::event::drain(&mut s.pending, events, capacity, len_out)
    })
}
