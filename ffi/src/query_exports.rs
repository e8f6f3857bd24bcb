//! The bodies of the query exports, written once for both handles: `mb_engine_*` and
//! `mb_session_*` are one-line wrappers that name the C function (cbindgen reads them, with
//! their documentation) and call these with their handle. Each checks the handle, runs the
//! query of [`crate::query`] and writes the caller's buffers, inside [`guard`].

use crate::boundary::{fail, fill, fill_pair, guard, out};
use crate::query::{self, MbBalance, MbBookOrder, MbCandle, MbLevel, MbOrder, MbPosition};
use crate::query::{MbTicker, MbTop, Reader};
use crate::status::MbStatus;
use crate::types::{MbOrderRef, MbUuid};

/// A C handle queries can run on: checked (NULL, poisoned) into a reader.
pub(crate) trait QueryHandle: Reader + Sized {
    /// The handle behind `ptr`, or why it cannot be used.
    fn resolve<'a>(ptr: *const Self) -> Result<&'a Self, MbStatus>;
}

/// Writes one value into the caller's out-parameter.
fn one<T>(slot: *mut T, what: &str, value: impl FnOnce() -> Result<T, MbStatus>) -> MbStatus {
    guard(|| {
        let slot = out(slot, what)?;
        *slot = value()?;
        Ok(())
    })
}

/// A list into the caller's buffer.
fn list<T: Copy>(
    buf: *mut T,
    capacity: usize,
    len_out: *mut usize,
    items: impl FnOnce() -> Result<Vec<T>, MbStatus>,
) -> MbStatus {
    guard(|| fill(&items()?, buf, capacity, len_out))
}

/// Two lists (bids, asks) into the caller's two buffers, both or neither.
fn sides<T: Copy>(
    bids: (*mut T, usize, *mut usize),
    asks: (*mut T, usize, *mut usize),
    items: impl FnOnce() -> Result<(Vec<T>, Vec<T>), MbStatus>,
) -> MbStatus {
    guard(|| {
        let (b, a) = items()?;
        fill_pair((&b, bids.0, bids.1, bids.2), (&a, asks.0, asks.1, asks.2))
    })
}

pub(crate) fn balances<H: QueryHandle>(
    handle: *const H,
    account: u32,
    buf: *mut MbBalance,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    list(buf, capacity, len_out, || {
        query::balances(H::resolve(handle)?, account)
    })
}

pub(crate) fn open_orders<H: QueryHandle>(
    handle: *const H,
    account: u32,
    buf: *mut MbOrder,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    list(buf, capacity, len_out, || {
        query::open_orders(H::resolve(handle)?, account)
    })
}

pub(crate) fn order<H: QueryHandle>(
    handle: *const H,
    account: u32,
    order: MbOrderRef,
    order_out: *mut MbOrder,
) -> MbStatus {
    one(order_out, "order_out", || {
        query::order(H::resolve(handle)?, account, order, None)
    })
}

pub(crate) fn order_by_client_id<H: QueryHandle>(
    handle: *const H,
    account: u32,
    client_id: MbUuid,
    order_out: *mut MbOrder,
) -> MbStatus {
    one(order_out, "order_out", || {
        let id = client_id
            .to_engine()
            .ok_or_else(|| fail(MbStatus::InvalidArgument, "client_id is zero"))?;
        let any = MbOrderRef::default();
        query::order(H::resolve(handle)?, account, any, Some(id))
    })
}

pub(crate) fn book_top<H: QueryHandle>(
    handle: *const H,
    instrument: u16,
    top_out: *mut MbTop,
) -> MbStatus {
    one(top_out, "top_out", || {
        query::top(H::resolve(handle)?, instrument)
    })
}

pub(crate) fn book_levels<H: QueryHandle>(
    handle: *const H,
    instrument: u16,
    depth: usize,
    bids: (*mut MbLevel, usize, *mut usize),
    asks: (*mut MbLevel, usize, *mut usize),
) -> MbStatus {
    sides(bids, asks, || {
        query::levels(H::resolve(handle)?, instrument, depth)
    })
}

pub(crate) fn book_orders<H: QueryHandle>(
    handle: *const H,
    instrument: u16,
    depth: usize,
    bids: (*mut MbBookOrder, usize, *mut usize),
    asks: (*mut MbBookOrder, usize, *mut usize),
) -> MbStatus {
    sides(bids, asks, || {
        query::book_orders(H::resolve(handle)?, instrument, depth)
    })
}

/// A candle query: instrument, `mb_candle_unit`, period, from and to (ns).
pub(crate) type CandleQuery = (u16, u32, u32, i64, i64);

pub(crate) fn candles<H: QueryHandle>(
    handle: *const H,
    (instrument, unit, period, from_ns, to_ns): CandleQuery,
    buf: *mut MbCandle,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    list(buf, capacity, len_out, || {
        let reader = H::resolve(handle)?;
        query::candles(reader, instrument, unit, period, from_ns, to_ns)
    })
}

pub(crate) fn ticker<H: QueryHandle>(
    handle: *const H,
    instrument: u16,
    ticker_out: *mut MbTicker,
) -> MbStatus {
    one(ticker_out, "ticker_out", || {
        query::ticker(H::resolve(handle)?, instrument)
    })
}

pub(crate) fn positions<H: QueryHandle>(
    handle: *const H,
    account: u32,
    buf: *mut MbPosition,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    list(buf, capacity, len_out, || {
        query::positions(H::resolve(handle)?, account)
    })
}

pub(crate) fn state_hash<H: QueryHandle>(handle: *const H, hash_out: *mut u64) -> MbStatus {
    one(hash_out, "hash_out", || {
        query::state_hash(H::resolve(handle)?)
    })
}
