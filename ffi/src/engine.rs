//! The single-threaded engine handle and its exports: create and free, holders and
//! deposits, order entry in fixed point, cancel, balances, and event polling.

use std::ffi::c_char;

use matchbook::{
    AccountId, Command, Engine, EventRecord, InstrumentId, NewOrder, OrderRef, Price, Qty, Side,
    TimeInForce, Timestamp,
};

use crate::boundary::{clear, fail, guard, text};
use crate::event::MbEvent;
use crate::status::MbStatus;

/// An engine owned by one thread at a time, with the events not yet polled.
pub struct MbEngine {
    engine: Engine,
    pending: Vec<EventRecord>,
}

/// An order handle: its number and slab slot.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbOrderRef {
    /// Order number.
    pub id: u64,
    /// Slab slot.
    pub slot: u32,
}

/// Buy or sell.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbSide {
    /// Buy.
    Buy = 0,
    /// Sell.
    Sell = 1,
}

/// Time in force of a limit order.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbTimeInForce {
    /// Good till cancelled.
    GoodTillCancelled = 0,
    /// Immediate or cancel.
    ImmediateOrCancelled = 1,
    /// Fill or kill.
    FillOrKill = 2,
    /// Post only.
    PostOnly = 3,
}

fn engine_mut<'a>(engine: *mut MbEngine) -> Result<&'a mut MbEngine, MbStatus> {
    // SAFETY: a non-NULL handle comes from mb_engine_new_demo and is used by one thread at
    // a time per the header's contract.
    unsafe { engine.as_mut() }.ok_or_else(|| fail(MbStatus::NullArgument, "engine is NULL"))
}

fn out<'a, T>(ptr: *mut T, what: &str) -> Result<&'a mut T, MbStatus> {
    // SAFETY: a non-NULL out-parameter points to writable memory per the contract.
    unsafe { ptr.as_mut() }.ok_or_else(|| fail(MbStatus::NullArgument, format!("{what} is NULL")))
}

impl MbEngine {
    fn apply(&mut self, command: &Command, time_ns: i64) -> Result<matchbook::Applied, MbStatus> {
        self.engine
            .apply(command, Timestamp(time_ns), &mut self.pending)
            .map_err(|e| fail(MbStatus::from(e), e.to_string()))
    }
}

/// Creates an engine with the embedded demo currencies and markets.
///
/// # Safety
/// `out` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_new_demo(out_engine: *mut *mut MbEngine) -> MbStatus {
    clear();
    guard(|| {
        let slot = out(out_engine, "out_engine")?;
        let engine = Engine::new(matchbook::demo::config())
            .map_err(|e| fail(MbStatus::InvalidArgument, e.to_string()))?;
        *slot = Box::into_raw(Box::new(MbEngine {
            engine,
            pending: Vec::with_capacity(1024),
        }));
        Ok(())
    })
}

/// Frees an engine (NULL is ignored).
///
/// # Safety
/// `engine` must be NULL or a handle from `mb_engine_new_demo` not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_free(engine: *mut MbEngine) {
    if !engine.is_null() {
        // SAFETY: created by Box::into_raw in mb_engine_new_demo, freed once per contract.
        let _ = std::panic::catch_unwind(|| drop(unsafe { Box::from_raw(engine) }));
    }
}

/// Creates a holder with its main account; writes the account id.
///
/// # Safety
/// `engine` a live handle; `account_out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_create_holder(
    engine: *mut MbEngine,
    time_ns: i64,
    account_out: *mut u32,
) -> MbStatus {
    clear();
    guard(|| {
        let e = engine_mut(engine)?;
        let slot = out(account_out, "account_out")?;
        let applied = e.apply(&Command::CreateHolder, time_ns)?;
        *slot = applied.account.map_or(0, |a| a.0);
        Ok(())
    })
}

/// Credits `amount` (a decimal string, e.g. "1.5") of `currency` (a code) to an account.
///
/// # Safety
/// `engine` a live handle; the strings NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_deposit(
    engine: *mut MbEngine,
    time_ns: i64,
    account: u32,
    currency: *const c_char,
    amount: *const c_char,
) -> MbStatus {
    clear();
    guard(|| {
        let e = engine_mut(engine)?;
        // SAFETY: the caller passes NUL-terminated strings valid for the call.
        let (code, amount) = unsafe { (text(currency, "currency")?, text(amount, "amount")?) };
        let id = e.engine.currency_by_code(code).ok_or_else(|| {
            fail(
                MbStatus::UnknownCurrency,
                format!("unknown currency {code}"),
            )
        })?;
        let scale = e.engine.balance_scale(id).map_err(MbStatus::from)?;
        let units = matchbook::fixed::parse_scaled(amount, scale).map_err(|err| {
            fail(
                MbStatus::InvalidArgument,
                format!("amount {amount:?}: {err}"),
            )
        })?;
        e.apply(
            &Command::Deposit {
                account: AccountId(account),
                currency: id,
                amount: units,
            },
            time_ns,
        )?;
        Ok(())
    })
}

/// Places a limit order with price in ticks and amount in lots of the instrument (its
/// market and amount precision); writes the order handle.
///
/// # Safety
/// `engine` a live handle; `instrument` NUL-terminated; `order_out` writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "a flat C signature")]
pub unsafe extern "C" fn mb_place_limit(
    engine: *mut MbEngine,
    time_ns: i64,
    account: u32,
    instrument: *const c_char,
    side: MbSide,
    price_ticks: i64,
    amount_lots: i64,
    tif: MbTimeInForce,
    order_out: *mut MbOrderRef,
) -> MbStatus {
    clear();
    guard(|| {
        let e = engine_mut(engine)?;
        let slot = out(order_out, "order_out")?;
        // SAFETY: NUL-terminated per the contract.
        let code = unsafe { text(instrument, "instrument")? };
        let id: InstrumentId = e.engine.instrument_by_code(code).ok_or_else(|| {
            fail(
                MbStatus::UnknownInstrument,
                format!("unknown instrument {code}"),
            )
        })?;
        let side = match side {
            MbSide::Buy => Side::Buy,
            MbSide::Sell => Side::Sell,
        };
        let tif = match tif {
            MbTimeInForce::GoodTillCancelled => TimeInForce::GoodTillCancelled,
            MbTimeInForce::ImmediateOrCancelled => TimeInForce::ImmediateOrCancelled,
            MbTimeInForce::FillOrKill => TimeInForce::FillOrKill,
            MbTimeInForce::PostOnly => TimeInForce::PostOnly,
        };
        let order = NewOrder::limit(
            AccountId(account),
            id,
            side,
            Price(price_ticks),
            Qty(amount_lots),
        )
        .with_tif(tif);
        let applied = e.apply(&Command::PlaceOrder(order), time_ns)?;
        let handle = applied.order.unwrap_or_default();
        *slot = MbOrderRef {
            id: handle.id,
            slot: handle.slot,
        };
        Ok(())
    })
}

/// Cancels an open order of `account`.
///
/// # Safety
/// `engine` a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_cancel(
    engine: *mut MbEngine,
    time_ns: i64,
    account: u32,
    order: MbOrderRef,
) -> MbStatus {
    clear();
    guard(|| {
        let e = engine_mut(engine)?;
        e.apply(
            &Command::CancelOrder {
                account: AccountId(account),
                order: OrderRef {
                    id: order.id,
                    slot: order.slot,
                },
            },
            time_ns,
        )?;
        Ok(())
    })
}

/// Writes an account's available and locked balance of `currency`, in balance units
/// (`10^-scale`, where `*scale_out` is the currency's balance scale).
///
/// # Safety
/// `engine` a live handle; `currency` NUL-terminated; the out-parameters writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_balance(
    engine: *mut MbEngine,
    account: u32,
    currency: *const c_char,
    available_out: *mut i64,
    locked_out: *mut i64,
    scale_out: *mut u8,
) -> MbStatus {
    clear();
    guard(|| {
        let e = engine_mut(engine)?;
        let (available, locked, scale) = (
            out(available_out, "available_out")?,
            out(locked_out, "locked_out")?,
            out(scale_out, "scale_out")?,
        );
        // SAFETY: NUL-terminated per the contract.
        let code = unsafe { text(currency, "currency")? };
        let id = e.engine.currency_by_code(code).ok_or_else(|| {
            fail(
                MbStatus::UnknownCurrency,
                format!("unknown currency {code}"),
            )
        })?;
        let view = e
            .engine
            .account(AccountId(account))
            .map_err(MbStatus::from)?;
        let b = view.balances[usize::from(id.0)];
        (*available, *locked) = (b.available, b.locked);
        *scale = e.engine.balance_scale(id).map_err(MbStatus::from)?;
        Ok(())
    })
}

/// Moves the events produced since the last poll into `events` (capacity `capacity`) and
/// writes their count. If they do not fit, nothing is moved, `*len_out` is the count
/// needed and the status is `MB_STATUS_BUFFER_TOO_SMALL`.
///
/// # Safety
/// `engine` a live handle; `events` NULL or `capacity` writable elements; `len_out`
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_poll_events(
    engine: *mut MbEngine,
    events: *mut MbEvent,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    clear();
    guard(|| {
        let e = engine_mut(engine)?;
        let len = out(len_out, "len_out")?;
        *len = e.pending.len();
        if e.pending.is_empty() {
            return Ok(());
        }
        if events.is_null() {
            return Err(fail(MbStatus::NullArgument, "events is NULL"));
        }
        if capacity < e.pending.len() {
            return Err(fail(
                MbStatus::BufferTooSmall,
                format!("{} events pending, room for {capacity}", e.pending.len()),
            ));
        }
        for (i, record) in e.pending.iter().enumerate() {
            // SAFETY: `events` has room for `capacity >= pending.len()` elements.
            unsafe { events.add(i).write(MbEvent::from(record)) };
        }
        e.pending.clear();
        Ok(())
    })
}

/// The name of a status (`"INSUFFICIENT_FUNDS"`, `"BUFFER_TOO_SMALL"`...); static storage.
#[unsafe(no_mangle)]
pub extern "C" fn mb_status_str(status: MbStatus) -> *const c_char {
    status.name().as_ptr()
}

/// Copies the calling thread's last error message (NUL-terminated) into `buf`.
///
/// # Safety
/// `buf` NULL or `capacity` writable bytes; `len_out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_last_error(
    buf: *mut c_char,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    // SAFETY: forwarded contract.
    unsafe { crate::boundary::copy_last_error(buf, capacity, len_out) }
}

/// Test hook: panics inside the boundary, to prove a panic becomes `MB_STATUS_PANIC`.
#[unsafe(no_mangle)]
pub extern "C" fn mb_debug_panic() -> MbStatus {
    clear();
    guard(|| panic!("forced by mb_debug_panic"))
}
