//! Order history and trades by order, read from market data for both handles: every
//! retained order of an account (open or ended) page by page, one record by number, and the
//! trades of one order. The `mb_engine_*` / `mb_session_*` exports are at the end.

use matchbook::market::MarketData;
use matchbook::market::orders::{OrderFilter, OrderRecord};
use matchbook::market::trades::TradeRecord;
use matchbook::{AccountId, OrderStatus};

use crate::boundary::{fail, fill, guard, out};
use crate::engine::MbEngine;
use crate::query::Reader;
use crate::query_exports::QueryHandle;
use crate::runtime::MbSession;
use crate::status::MbStatus;
use crate::types::{MbOrderRef, MbOrderType, MbSide, MbTimeInForce, MbUuid};

/// How an order stands, as the public exchange names it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbOrderStatus {
    /// Resting, or a stop waiting for its trigger.
    Open = 0,
    /// Filled completely.
    FilledFully = 1,
    /// Partly filled, then cancelled.
    FilledClosed = 2,
    /// Ended without a fill.
    Cancelled = 3,
    /// Refused by the book for its time in force (`reason` says why).
    FilledRejected = 4,
}

/// An order as history keeps it, open or ended.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MbOrderRecord {
    /// Handle (its `id` is the order number history pages by).
    pub order: MbOrderRef,
    /// Owner.
    pub account: u32,
    /// Instrument index.
    pub instrument: u16,
    /// An `mb_side`.
    pub side: u32,
    /// An `mb_order_type`.
    pub order_type: u32,
    /// An `mb_time_in_force`.
    pub time_in_force: u32,
    /// An `mb_order_status`.
    pub status: u32,
    /// Beside `MB_ORDER_STATUS_FILLED_REJECTED`, the refusal
    /// (`MB_STATUS_INSUFFICIENT_LIQUIDITY`, `MB_STATUS_POST_ONLY_WOULD_TAKE`); else 0.
    pub reason: i32,
    /// Limit price in ticks (0 = none).
    pub price: i64,
    /// Stop trigger in ticks (0 = none).
    pub trigger_price: i64,
    /// Amount in lots.
    pub amount: i64,
    /// Filled lots.
    pub filled: i64,
    /// Average fill price in ticks, rounded down (0 = nothing filled).
    pub average_price: i64,
    /// Fees paid, in balance units of the currency the order receives (the quote
    /// currency on a future).
    pub total_fee: i64,
    /// Accepted.
    pub created_ns: i64,
    /// Last change.
    pub updated_ns: i64,
    /// Client order id (zero = none).
    pub client_id: MbUuid,
}

impl From<&OrderRecord> for MbOrderRecord {
    fn from(r: &OrderRecord) -> Self {
        let a = &r.accepted;
        let status = match r.status {
            OrderStatus::Open => MbOrderStatus::Open,
            OrderStatus::FilledFully => MbOrderStatus::FilledFully,
            OrderStatus::Cancelled if r.filled.0 > 0 => MbOrderStatus::FilledClosed,
            OrderStatus::Cancelled => MbOrderStatus::Cancelled,
            OrderStatus::FilledRejected | OrderStatus::Rejected(_) => MbOrderStatus::FilledRejected,
        };
        let reason = match r.status {
            OrderStatus::FilledRejected => MbStatus::InsufficientLiquidity as i32,
            OrderStatus::Rejected(e) => MbStatus::from(e) as i32,
            _ => 0,
        };
        Self {
            order: a.order.into(),
            account: a.account.0,
            instrument: a.instrument.0,
            side: MbSide::from(a.side) as u32,
            order_type: MbOrderType::from(a.order_type) as u32,
            time_in_force: MbTimeInForce::from(a.time_in_force) as u32,
            status: status as u32,
            reason,
            price: a.price.map_or(0, |p| p.0),
            trigger_price: a.trigger_price.map_or(0, |p| p.0),
            amount: a.amount.0,
            filled: r.filled.0,
            average_price: r.average_price().map_or(0, |p| p.0),
            total_fee: r.total_fee,
            created_ns: r.created.0,
            updated_ns: r.updated.0,
            client_id: MbUuid::of(a.client_id),
        }
    }
}

/// One trade, both sides.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MbTrade {
    /// Trade number.
    pub trade: u64,
    /// Time.
    pub time_ns: i64,
    /// Instrument index.
    pub instrument: u16,
    /// The taker's `mb_side`.
    pub taker_side: u32,
    /// Price in ticks.
    pub price: i64,
    /// Amount in lots.
    pub amount: i64,
    /// The resting order.
    pub maker_order: MbOrderRef,
    /// Its account.
    pub maker_account: u32,
    /// The incoming order.
    pub taker_order: MbOrderRef,
    /// Its account.
    pub taker_account: u32,
    /// Fee of the maker, balance units of what it received.
    pub maker_fee: i64,
    /// Fee of the taker, balance units of what it received.
    pub taker_fee: i64,
}

impl From<&TradeRecord> for MbTrade {
    fn from(t: &TradeRecord) -> Self {
        let x = &t.trade;
        Self {
            trade: x.id.0,
            time_ns: t.time.0,
            instrument: x.instrument.0,
            taker_side: MbSide::from(x.taker_side) as u32,
            price: x.price.0,
            amount: x.amount.0,
            maker_order: x.maker.into(),
            maker_account: x.maker_account.0,
            taker_order: x.taker.into(),
            taker_account: x.taker_account.0,
            maker_fee: x.maker_fee,
            taker_fee: x.taker_fee,
        }
    }
}

fn not_found(account: u32, order: u64) -> MbStatus {
    fail(
        MbStatus::OrderNotFound,
        format!("no order {order} of account {account} in history"),
    )
}

fn record_of(md: &MarketData, account: u32, order: u64) -> Option<&OrderRecord> {
    md.orders().get(AccountId(account), order)
}

/// A page of `account`'s orders, newest first, below order number `before` (0: from the
/// newest), at most `limit`; and the number to pass as `before` next (0: no more).
fn page(
    r: &impl Reader,
    account: u32,
    before: u64,
    limit: usize,
) -> Result<(Vec<MbOrderRecord>, u64), MbStatus> {
    if limit == 0 {
        return Err(fail(MbStatus::InvalidArgument, "a page of 0 orders"));
    }
    let filter = OrderFilter::every(limit, (before > 0).then_some(before));
    r.market(move |md, _| {
        md.orders().page(AccountId(account), &filter).map(|p| {
            let records = p.orders.iter().map(|r| MbOrderRecord::from(*r)).collect();
            (records, p.cursor.unwrap_or(0))
        })
    })?
    .map_err(|e| fail(MbStatus::InvalidArgument, e.to_string()))
}

fn trades_of(r: &impl Reader, account: u32, order: u64) -> Result<Vec<MbTrade>, MbStatus> {
    r.market(move |md, _| {
        let record = record_of(md, account, order)?;
        Some(
            record
                .trades
                .iter()
                .filter_map(|&id| md.trades().get(id))
                .map(MbTrade::from)
                .collect(),
        )
    })?
    .ok_or_else(|| not_found(account, order))
}

fn history<H: QueryHandle>(
    handle: *const H,
    account: u32,
    before: u64,
    (buf, capacity, len_out): (*mut MbOrderRecord, usize, *mut usize),
    next_out: *mut u64,
) -> MbStatus {
    guard(|| {
        let next = out(next_out, "next_out")?;
        let (records, cursor) = page(H::resolve(handle)?, account, before, capacity)?;
        fill(&records, buf, capacity, len_out)?;
        *next = cursor;
        Ok(())
    })
}

fn one_record<H: QueryHandle>(
    handle: *const H,
    account: u32,
    order: u64,
    record_out: *mut MbOrderRecord,
) -> MbStatus {
    guard(|| {
        let slot = out(record_out, "record_out")?;
        let found = H::resolve(handle)?
            .market(move |md, _| record_of(md, account, order).map(MbOrderRecord::from))?;
        *slot = found.ok_or_else(|| not_found(account, order))?;
        Ok(())
    })
}

fn trades<H: QueryHandle>(
    handle: *const H,
    account: u32,
    order: u64,
    (buf, capacity, len_out): (*mut MbTrade, usize, *mut usize),
) -> MbStatus {
    guard(|| {
        let list = trades_of(H::resolve(handle)?, account, order)?;
        fill(&list, buf, capacity, len_out)
    })
}

/// A page of `account`'s orders, open and ended (as long as history keeps them, at least a
/// day after they ended), newest first: at most `capacity` records below order number
/// `before` (0: from the newest) into `buf`, their count into `*len_out`, and into
/// `*next_out` the `before` of the next page (0: this was the last). A page reads at
/// most 10,000 records, so it can hold fewer than `capacity` (even none) with a next
/// number: go on until 0. Never `MB_STATUS_BUFFER_TOO_SMALL`: `capacity` is the page size
/// (0 is refused).
///
/// # Safety
/// `engine` live; `buf` `capacity` writable elements; `len_out`, `next_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_order_history(
    engine: *const MbEngine,
    account: u32,
    before: u64,
    buf: *mut MbOrderRecord,
    capacity: usize,
    len_out: *mut usize,
    next_out: *mut u64,
) -> MbStatus {
    history(engine, account, before, (buf, capacity, len_out), next_out)
}

/// As `mb_engine_order_history`, through the runtime's market stage.
///
/// # Safety
/// As `mb_engine_order_history`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_order_history(
    session: *const MbSession,
    account: u32,
    before: u64,
    buf: *mut MbOrderRecord,
    capacity: usize,
    len_out: *mut usize,
    next_out: *mut u64,
) -> MbStatus {
    history(session, account, before, (buf, capacity, len_out), next_out)
}

/// One order of `account` by number (`mb_order_ref.id`), open or ended, while history
/// keeps it; `MB_STATUS_ORDER_NOT_FOUND` otherwise.
///
/// # Safety
/// `engine` live; `record_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_order_record(
    engine: *const MbEngine,
    account: u32,
    order: u64,
    record_out: *mut MbOrderRecord,
) -> MbStatus {
    one_record(engine, account, order, record_out)
}

/// As `mb_engine_order_record`, through the runtime's market stage.
///
/// # Safety
/// As `mb_engine_order_record`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_order_record(
    session: *const MbSession,
    account: u32,
    order: u64,
    record_out: *mut MbOrderRecord,
) -> MbStatus {
    one_record(session, account, order, record_out)
}

/// The trades of one order of `account` (by number), oldest first.
///
/// # Safety
/// `engine` live; `buf` NULL or `capacity` writable elements; `len_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_order_trades(
    engine: *const MbEngine,
    account: u32,
    order: u64,
    buf: *mut MbTrade,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    trades(engine, account, order, (buf, capacity, len_out))
}

/// As `mb_engine_order_trades`, through the runtime's market stage.
///
/// # Safety
/// As `mb_engine_order_trades`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_order_trades(
    session: *const MbSession,
    account: u32,
    order: u64,
    buf: *mut MbTrade,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    trades(session, account, order, (buf, capacity, len_out))
}
