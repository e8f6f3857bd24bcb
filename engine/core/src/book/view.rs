//! Read-only views of a book: L1 (best bid and ask), L2 (aggregated by price, with the number
//! of orders) and L3 (every order with its id), each limited to a number of price levels.

use crate::fixed::{Price, Qty};
use crate::ids::{AccountId, OrderRef};

/// One aggregated price level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LevelView {
    /// Price.
    pub price: Price,
    /// Total remaining amount at this price.
    pub amount: Qty,
    /// Orders at this price.
    pub number_of_orders: u32,
}

/// One resting order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderView {
    /// Price.
    pub price: Price,
    /// Remaining amount.
    pub amount: Qty,
    /// Order handle.
    pub order: OrderRef,
    /// Owner (for the engine's own consumers; public views drop it).
    pub account: AccountId,
}

/// Both sides of a view, best first, with the book's sequence number.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BookView<T> {
    /// Bids, highest first.
    pub bids: Vec<T>,
    /// Asks, lowest first.
    pub asks: Vec<T>,
    /// Book sequence: how many commands changed the book (streams number their book
    /// updates with it).
    pub sequence: u64,
}
