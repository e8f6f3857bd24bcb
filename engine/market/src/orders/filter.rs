//! What an order-history query asks for (which orders, which window, which page) and
//! what a page of it holds.

use matchbook_core::{InstrumentId, Timestamp};

use super::OrderRecord;

/// Which orders an order-history query returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderFilter {
    /// Window on the last activity time (used for inactive orders).
    pub from: Timestamp,
    /// Window end.
    pub to: Timestamp,
    /// Only this instrument.
    pub instrument: Option<InstrumentId>,
    /// Include every ended order: cancelled and rejected ones, and filled ones as
    /// `with_just_filled_inactive` does (the public exchange's rule).
    pub with_cancelled_and_rejected: bool,
    /// Include ended orders that filled, fully or partly before they were cancelled.
    pub with_just_filled_inactive: bool,
    /// Page size.
    pub max_page_size: usize,
    /// Resume below this order number.
    pub cursor: Option<u64>,
}

impl OrderFilter {
    /// Every retained order of an account, open or ended, whenever it was active: at most
    /// `limit` below order number `before` (`None`: from the newest). What the bindings
    /// page an account's history with.
    pub fn every(limit: usize, before: Option<u64>) -> Self {
        Self {
            from: Timestamp(i64::MIN),
            to: Timestamp(i64::MAX),
            instrument: None,
            with_cancelled_and_rejected: true,
            with_just_filled_inactive: true,
            max_page_size: limit,
            cursor: before,
        }
    }
}

/// A page of orders, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderPage<'a> {
    /// Orders.
    pub orders: Vec<&'a OrderRecord>,
    /// Number of the last order returned when more may follow.
    pub cursor: Option<u64>,
}
