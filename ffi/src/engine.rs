//! `mb_engine`: the single-threaded handle (the fastest path: commands applied in the
//! caller's thread, no queue, no lock). Create, free, submit, poll events, and every query.

use matchbook::market::MarketData;
use matchbook::store::Host;
use matchbook::{Engine, Timestamp};

use crate::boundary::{OneUser, arg, enter_one_user, fail, guard, out};
use crate::command::{MbCommand, MbResult, status_of, status_of_rejected, to_command};
use crate::config::MbConfig;
use crate::query::{
    MbBalance, MbBookOrder, MbCandle, MbLevel, MbOrder, MbPosition, MbTicker, MbTop, Reader,
};
use crate::query_exports as exports;
use crate::refdata::MbRefData;
use crate::status::MbStatus;
use crate::types::{MbOrderRef, MbUuid};

// Defined beside `mb_event`; named here too, with the engine's other exports.
pub use crate::event::{mb_engine_clear_events, mb_engine_poll_events};

/// An engine owned by one thread at a time, with its market data and the events not yet
/// polled.
pub struct MbEngine {
    /// The engine, its market data and pending events, in memory or on a data directory.
    pub(crate) host: Host,
    pub(crate) refdata: MbRefData,
    /// Set when a call panicked while using the engine; held while a call is inside it.
    user: OneUser,
}

impl MbEngine {
    /// An independent engine in memory with this one's state, market data and reference
    /// data now (not durable, whatever this one is; no events wait in it).
    pub(crate) fn copy(&self) -> Result<Self, MbStatus> {
        self.readable()?;
        Ok(Self {
            host: self.host.copy_in_memory(),
            refdata: self.refdata.clone(),
            user: OneUser::new(self.user.checked()),
        })
    }

    /// Builds the engine of `config` and provisions its holders at its start time.
    pub(crate) fn build(config: &MbConfig) -> Result<Self, MbStatus> {
        let mut engine = config.engine()?;
        let mut sink = Vec::new();
        let directory = matchbook_config::provision_engine(
            &mut engine,
            &config.exchange.holders,
            Timestamp(config.start_time_ns),
            &mut sink,
        )
        .map_err(|e| fail(MbStatus::InvalidConfig, e.to_string()))?;
        let mut market =
            (config.market_data).then(|| config.new_market(engine.instruments().len()));
        if let Some(m) = market.as_mut() {
            m.on_events(&sink);
        }
        let refdata = MbRefData::of(&engine, directory);
        Ok(Self {
            host: Host::in_memory(engine, market, !config.drop_events),
            refdata,
            user: OneUser::new(!config.unchecked_threads),
        })
    }

    /// Applies one command at `time_ns`, keeping its events for polling and market data;
    /// returns its result and the status to report (see [`status_of`]).
    pub(crate) fn submit(
        &mut self,
        command: &MbCommand,
        time_ns: i64,
    ) -> Result<(MbResult, Result<(), MbStatus>), MbStatus> {
        self.submit_command(&to_command(command)?, time_ns)
    }

    /// [`MbEngine::submit`] of a command already translated.
    pub(crate) fn submit_command(
        &mut self,
        command: &matchbook::Command,
        time_ns: i64,
    ) -> Result<(MbResult, Result<(), MbStatus>), MbStatus> {
        let applied = self.apply(command, time_ns)?;
        Ok((
            MbResult::of(applied, self.host.engine.now()),
            status_of(&applied),
        ))
    }

    /// Applies an engine command: events kept for polling and fed to market data; on a
    /// durable engine, journalled and committed first.
    fn apply(
        &mut self,
        command: &matchbook::Command,
        time_ns: i64,
    ) -> Result<matchbook::Applied, MbStatus> {
        self.apply_with(command, time_ns, |applied| *applied)
    }

    /// As [`MbEngine::apply`], handing `read` the result where it lies: the fast paths
    /// take the one or two fields they return instead of moving the whole result up
    /// through every layer.
    #[inline]
    fn apply_with<R>(
        &mut self,
        command: &matchbook::Command,
        time_ns: i64,
        read: impl FnOnce(&matchbook::Applied) -> R,
    ) -> Result<R, MbStatus> {
        let now = self.host.engine.now();
        if time_ns < now.0 {
            return Err(fail(
                MbStatus::InvalidArgument,
                format!("time_ns {time_ns} is before the engine's time {}", now.0),
            ));
        }
        let answer = self
            .host
            .apply_with(command, Timestamp(time_ns), |result| match result {
                Ok(applied) => Ok(read(applied)),
                Err(e) => Err(refused(*e)),
            });
        answer.unwrap_or_else(|e| Err(fail(MbStatus::Storage, e.to_string())))
    }
}

/// The status of a command the engine refused, its message kept for `mb_last_error`. Out
/// of line: the answer's happy path is inlined into every fast path and stays short.
#[cold]
fn refused(error: matchbook::EngineError) -> MbStatus {
    fail(MbStatus::from(error), error.to_string())
}

impl MbEngine {
    /// `MB_STATUS_STORAGE` after a failed journal write: memory may then hold commands the
    /// journal does not, so nothing of it is shown until the directory is reopened.
    pub(crate) fn readable(&self) -> Result<(), MbStatus> {
        (self.host.readable()).map_err(|e| fail(MbStatus::Storage, e.to_string()))
    }
}

impl Reader for MbEngine {
    fn engine<R: Send + 'static>(
        &self,
        read: impl FnOnce(&Engine) -> R + Send + 'static,
    ) -> Result<R, MbStatus> {
        self.readable()?;
        Ok(read(&self.host.engine))
    }

    fn market<R: Send + 'static>(
        &self,
        read: impl FnOnce(&MarketData, Timestamp) -> R + Send + 'static,
    ) -> Result<R, MbStatus> {
        self.readable()?;
        let market = self.host.market.as_ref().ok_or_else(|| {
            fail(
                MbStatus::MarketDataOff,
                "engine created without market data",
            )
        })?;
        Ok(read(market, self.host.engine.now()))
    }
}

#[inline]
pub(crate) fn engine_mut<'a>(engine: *mut MbEngine) -> Result<&'a mut MbEngine, MbStatus> {
    enter_one_user(engine, std::mem::offset_of!(MbEngine, user), "engine")?;
    out(engine, "engine")
}

#[inline]
pub(crate) fn engine_ref<'a>(engine: *const MbEngine) -> Result<&'a MbEngine, MbStatus> {
    enter_one_user(engine, std::mem::offset_of!(MbEngine, user), "engine")?;
    arg(engine, "engine")
}

impl exports::QueryHandle for MbEngine {
    fn resolve<'a>(ptr: *const Self) -> Result<&'a Self, MbStatus> {
        engine_ref(ptr)
    }
}

/// Builds an engine into the caller's out-parameter (checked first: nothing is built for
/// nowhere).
pub(crate) fn publish(
    out_engine: *mut *mut MbEngine,
    build: impl FnOnce() -> Result<MbEngine, MbStatus>,
) -> Result<(), MbStatus> {
    let slot = out(out_engine, "out_engine")?;
    *slot = Box::into_raw(Box::new(build()?));
    Ok(())
}

/// Creates a single-threaded engine from a definition (the definition stays the
/// caller's); its holders are provisioned at the definition's start time.
///
/// # Safety
/// `config` from `mb_config_*`; `out_engine` writable.
///
/// Threads: any thread, while no thread changes the definition.
/// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_new(
    config: *const MbConfig,
    out_engine: *mut *mut MbEngine,
) -> MbStatus {
    guard(|| publish(out_engine, || MbEngine::build(arg(config, "config")?)))
}

/// Creates a single-threaded engine with the embedded demo markets and no holders.
///
/// # Safety
/// `out_engine` NULL or writable.
///
/// Threads: any thread, concurrently.
/// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_new_demo(out_engine: *mut *mut MbEngine) -> MbStatus {
    guard(|| {
        let config = MbConfig {
            market_data: true,
            ..MbConfig::default()
        };
        publish(out_engine, || MbEngine::build(&config))
    })
}

/// Frees an engine (NULL is ignored).
///
/// # Safety
/// `engine` NULL or a handle from `mb_engine_new*` not freed before.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: frees the handle (NULL is ignored); do not use it after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_free(engine: *mut MbEngine) {
    // SAFETY: forwarded contract.
    unsafe { crate::boundary::release(engine) };
}

/// The engine's reference data (codes, scales, configured accounts); valid until the
/// engine is freed. NULL for a NULL engine.
///
/// # Safety
/// `engine` NULL or live.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrowed from the handle until it is freed; never free it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_refdata(engine: *const MbEngine) -> *const MbRefData {
    // SAFETY: NULL or live per the contract.
    unsafe { engine.as_ref() }.map_or(std::ptr::null(), |e| &e.refdata)
}

/// Applies `command` at `time_ns` (nanoseconds since the epoch; never before the time of
/// the previous command: an earlier time is refused with `MB_STATUS_INVALID_ARGUMENT` and
/// changes nothing, equal times are fine) and writes what it produced into `*result`
/// (may be NULL). A refusal returns its status and also leaves a `REJECTED` event to
/// poll. A fill-or-kill order that cannot fill, or a post-only order that would take, is
/// accepted and ended at once:
/// the call returns `MB_STATUS_INSUFFICIENT_LIQUIDITY` or `MB_STATUS_POST_ONLY_WOULD_TAKE`
/// and `*result` still names the order (its history record holds the rejection).
///
/// # Safety
/// `engine` live; `command` valid; `result` NULL or writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_submit(
    engine: *mut MbEngine,
    time_ns: i64,
    command: *const MbCommand,
    result: *mut MbResult,
) -> MbStatus {
    guard(|| {
        let e = engine_mut(engine)?;
        let command = arg(command, "command")?;
        let (outcome, status) = e.submit(command, time_ns)?;
        // SAFETY: NULL or writable per the contract.
        if let Some(slot) = unsafe { result.as_mut() } {
            *slot = outcome;
        }
        status
    })
}

/// The fast path for the hottest command: a limit order straight from its fields (no
/// `mb_command` to build and read), `side` an `mb_side`, `tif` an `mb_time_in_force`.
/// Writes the order's handle, also when it returns `MB_STATUS_INSUFFICIENT_LIQUIDITY` or
/// `MB_STATUS_POST_ONLY_WOULD_TAKE` (the order was accepted and ended at once).
///
/// # Safety
/// `engine` live; `order_out` NULL or writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "a flat C signature")]
pub unsafe extern "C" fn mb_engine_place_limit(
    engine: *mut MbEngine,
    time_ns: i64,
    account: u32,
    instrument: u16,
    side: u32,
    price_ticks: i64,
    amount_lots: i64,
    tif: u32,
    order_out: *mut MbOrderRef,
) -> MbStatus {
    guard(|| {
        let e = engine_mut(engine)?;
        let side = crate::types::MbSide::from_raw(side)
            .ok_or_else(|| fail(MbStatus::InvalidArgument, format!("side {side}")))?;
        let tif = crate::types::MbTimeInForce::from_raw(tif)
            .ok_or_else(|| fail(MbStatus::InvalidArgument, format!("time in force {tif}")))?;
        let order = matchbook::NewOrder::limit(
            matchbook::AccountId(account),
            matchbook::InstrumentId(instrument),
            side.into(),
            matchbook::Price(price_ticks),
            matchbook::Qty(amount_lots),
        )
        .with_tif(tif.into());
        let (placed, rejected) =
            e.apply_with(&matchbook::Command::PlaceOrder(order), time_ns, |applied| {
                (applied.order, applied.rejected)
            })?;
        // SAFETY: NULL or writable per the contract.
        if let Some(slot) = unsafe { order_out.as_mut() } {
            *slot = placed.map(MbOrderRef::from).unwrap_or_default();
        }
        status_of_rejected(rejected)
    })
}

/// The fast path for cancels: one open order of `account` by handle.
///
/// # Safety
/// `engine` live.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_cancel(
    engine: *mut MbEngine,
    time_ns: i64,
    account: u32,
    order: MbOrderRef,
) -> MbStatus {
    guard(|| {
        let e = engine_mut(engine)?;
        let command = matchbook::Command::CancelOrder {
            account: matchbook::AccountId(account),
            order: order.into(),
        };
        e.apply_with(&command, time_ns, |_| ())
    })
}

/// Every currency balance of an account, by currency index.
///
/// # Safety
/// `engine` live; `buf` NULL or `capacity` writable elements; `len_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_balances(
    engine: *const MbEngine,
    account: u32,
    buf: *mut MbBalance,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    exports::balances(engine, account, buf, capacity, len_out)
}

/// An account's open orders, oldest first.
///
/// # Safety
/// `engine` live; `buf` NULL or `capacity` writable elements; `len_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_open_orders(
    engine: *const MbEngine,
    account: u32,
    buf: *mut MbOrder,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    exports::open_orders(engine, account, buf, capacity, len_out)
}

/// One open order of `account` by handle.
///
/// # Safety
/// `engine` live; `order_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_order(
    engine: *const MbEngine,
    account: u32,
    order: MbOrderRef,
    order_out: *mut MbOrder,
) -> MbStatus {
    exports::order(engine, account, order, order_out)
}

/// The newest open order of `account` with `client_id`.
///
/// # Safety
/// `engine` live; `order_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_order_by_client_id(
    engine: *const MbEngine,
    account: u32,
    client_id: MbUuid,
    order_out: *mut MbOrder,
) -> MbStatus {
    exports::order_by_client_id(engine, account, client_id, order_out)
}

/// L1: best bid and ask of an instrument.
///
/// # Safety
/// `engine` live; `top_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_book_top(
    engine: *const MbEngine,
    instrument: u16,
    top_out: *mut MbTop,
) -> MbStatus {
    exports::book_top(engine, instrument, top_out)
}

/// L2: up to `depth` levels a side, best first, into two buffers.
///
/// # Safety
/// `engine` live; each buffer NULL or its capacity in writable elements; lengths writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "a flat C signature")]
pub unsafe extern "C" fn mb_engine_book_levels(
    engine: *const MbEngine,
    instrument: u16,
    depth: usize,
    bids: *mut MbLevel,
    bids_capacity: usize,
    bids_len: *mut usize,
    asks: *mut MbLevel,
    asks_capacity: usize,
    asks_len: *mut usize,
) -> MbStatus {
    exports::book_levels(
        engine,
        instrument,
        depth,
        (bids, bids_capacity, bids_len),
        (asks, asks_capacity, asks_len),
    )
}

/// L3: every resting order of up to `depth` levels a side, in queue order.
///
/// # Safety
/// `engine` live; each buffer NULL or its capacity in writable elements; lengths writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "a flat C signature")]
pub unsafe extern "C" fn mb_engine_book_orders(
    engine: *const MbEngine,
    instrument: u16,
    depth: usize,
    bids: *mut MbBookOrder,
    bids_capacity: usize,
    bids_len: *mut usize,
    asks: *mut MbBookOrder,
    asks_capacity: usize,
    asks_len: *mut usize,
) -> MbStatus {
    exports::book_orders(
        engine,
        instrument,
        depth,
        (bids, bids_capacity, bids_len),
        (asks, asks_capacity, asks_len),
    )
}

/// Candles of `unit` x `period` (an `mb_candle_unit`; 1/5/15/30 minutes, 1/4 hours, 1
/// day, week, month) from `from_ns` to `to_ns`, newest first; none for a period that
/// begins after the engine's time (`to_ns` later than it is read as it).
///
/// # Safety
/// `engine` live; `buf` NULL or `capacity` writable elements; `len_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "a flat C signature")]
pub unsafe extern "C" fn mb_engine_candles(
    engine: *const MbEngine,
    instrument: u16,
    unit: u32,
    period: u32,
    from_ns: i64,
    to_ns: i64,
    buf: *mut MbCandle,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    let query = (instrument, unit, period, from_ns, to_ns);
    exports::candles(engine, query, buf, capacity, len_out)
}

/// The 24-hour ticker of an instrument at engine time.
///
/// # Safety
/// `engine` live; `ticker_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_ticker(
    engine: *const MbEngine,
    instrument: u16,
    ticker_out: *mut MbTicker,
) -> MbStatus {
    exports::ticker(engine, instrument, ticker_out)
}

/// An account's open futures positions.
///
/// # Safety
/// `engine` live; `buf` NULL or `capacity` writable elements; `len_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_positions(
    engine: *const MbEngine,
    account: u32,
    buf: *mut MbPosition,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    exports::positions(engine, account, buf, capacity, len_out)
}

/// The engine's state hash: two engines with equal hashes hold the same state (orders,
/// balances, positions, sequence). A replay of the same commands at the same times gives
/// the same hash.
///
/// # Safety
/// `engine` live; `hash_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_state_hash(
    engine: *const MbEngine,
    hash_out: *mut u64,
) -> MbStatus {
    exports::state_hash(engine, hash_out)
}
