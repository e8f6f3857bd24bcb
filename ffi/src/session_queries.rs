//! The read exports of `mb_session`: each runs its query of [`crate::query`] on the
//! runtime's market stage (never the matching thread) through the shared bodies of
//! [`crate::query_exports`], with the session as the handle.

use crate::query::{
    MbBalance, MbBookOrder, MbCandle, MbLevel, MbOrder, MbPosition, MbTicker, MbTop,
};
use crate::query_exports as exports;
use crate::runtime::MbSession;
use crate::status::MbStatus;
use crate::types::{MbOrderRef, MbUuid};

/// As `mb_engine_balances`, through the runtime's market stage (never the matching thread).
///
/// # Safety
/// As `mb_engine_balances`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_balances(
    session: *const MbSession,
    account: u32,
    buf: *mut MbBalance,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    exports::balances(session, account, buf, capacity, len_out)
}

/// As `mb_engine_open_orders`, through the runtime's market stage (never the matching thread).
///
/// # Safety
/// As `mb_engine_open_orders`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_open_orders(
    session: *const MbSession,
    account: u32,
    buf: *mut MbOrder,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    exports::open_orders(session, account, buf, capacity, len_out)
}

/// As `mb_engine_order`, through the runtime's market stage (never the matching thread).
///
/// # Safety
/// As `mb_engine_order`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_order(
    session: *const MbSession,
    account: u32,
    order: MbOrderRef,
    order_out: *mut MbOrder,
) -> MbStatus {
    exports::order(session, account, order, order_out)
}

/// As `mb_engine_order_by_client_id`, through the runtime's market stage (never the
/// matching thread).
///
/// # Safety
/// As `mb_engine_order_by_client_id`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_order_by_client_id(
    session: *const MbSession,
    account: u32,
    client_id: MbUuid,
    order_out: *mut MbOrder,
) -> MbStatus {
    exports::order_by_client_id(session, account, client_id, order_out)
}

/// As `mb_engine_book_top`, through the runtime's market stage (never the matching thread).
///
/// # Safety
/// As `mb_engine_book_top`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_book_top(
    session: *const MbSession,
    instrument: u16,
    top_out: *mut MbTop,
) -> MbStatus {
    exports::book_top(session, instrument, top_out)
}

/// As `mb_engine_book_levels`, through the runtime's market stage (never the matching thread).
///
/// # Safety
/// As `mb_engine_book_levels`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "a flat C signature")]
pub unsafe extern "C" fn mb_session_book_levels(
    session: *const MbSession,
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
        session,
        instrument,
        depth,
        (bids, bids_capacity, bids_len),
        (asks, asks_capacity, asks_len),
    )
}

/// As `mb_engine_book_orders`, through the runtime's market stage (never the matching thread).
///
/// # Safety
/// As `mb_engine_book_orders`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "a flat C signature")]
pub unsafe extern "C" fn mb_session_book_orders(
    session: *const MbSession,
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
        session,
        instrument,
        depth,
        (bids, bids_capacity, bids_len),
        (asks, asks_capacity, asks_len),
    )
}

/// As `mb_engine_candles`, through the market-data thread.
///
/// # Safety
/// As `mb_engine_candles`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "a flat C signature")]
pub unsafe extern "C" fn mb_session_candles(
    session: *const MbSession,
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
    exports::candles(session, query, buf, capacity, len_out)
}

/// As `mb_engine_ticker`, at the runtime's clock.
///
/// # Safety
/// As `mb_engine_ticker`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_ticker(
    session: *const MbSession,
    instrument: u16,
    ticker_out: *mut MbTicker,
) -> MbStatus {
    exports::ticker(session, instrument, ticker_out)
}

/// As `mb_engine_positions`, through the runtime's market stage (never the matching thread).
///
/// # Safety
/// As `mb_engine_positions`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_positions(
    session: *const MbSession,
    account: u32,
    buf: *mut MbPosition,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    exports::positions(session, account, buf, capacity, len_out)
}

/// As `mb_engine_state_hash`, through the runtime's market stage (never the matching thread).
///
/// # Safety
/// `session` live; `hash_out` writable.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_state_hash(
    session: *const MbSession,
    hash_out: *mut u64,
) -> MbStatus {
    exports::state_hash(session, hash_out)
}
