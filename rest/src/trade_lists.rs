//! An order's or a futures position's trades as answers carry them: the first
//! [`EMBEDDED_TRADES`] inside an order record, and pages of the whole list with a cursor on
//! the routes that list one. A list is as long as its fills (a resting order can take
//! hundreds of thousands), so no answer copies or encodes all of it at once.

use matchbook::TradeId;
use matchbook::market::MarketData;
use matchbook::market::query::QueryError;
use matchbook::market::trades::TradeRecord;

use crate::error::ApiError;

/// Trades an order record carries in an answer (the oldest; the order's own filled amount,
/// fees and average price cover all of them). The order's trades route pages the rest.
pub const EMBEDDED_TRADES: usize = 100;

/// The trades an order record carries: its first [`EMBEDDED_TRADES`] that history holds.
pub fn embedded(md: &MarketData, ids: &[TradeId]) -> Vec<TradeRecord> {
    page(md, ids, 0, EMBEDDED_TRADES).0
}

/// A page of `ids` (oldest first) from index `start`, at most `size`: the records history
/// still holds, and where the next page starts when more follow. History forgets the
/// oldest trades first, so the ones it no longer holds are a prefix, passed over.
pub fn page(
    md: &MarketData,
    ids: &[TradeId],
    start: usize,
    size: usize,
) -> (Vec<TradeRecord>, Option<usize>) {
    let held = ids.partition_point(|id| id.0 < md.trades().first_retained());
    let start = start.max(held);
    let rest = ids.get(start..).unwrap_or_default();
    let records = (rest.iter().take(size))
        .filter_map(|&id| md.trades().get(id).copied())
        .collect();
    let next = (size > 0 && rest.len() > size).then_some(start + size);
    (records, next)
}

/// A cursor position for the page starting at `next` of the list of `owner` (an order or
/// position number), so a cursor of one list is refused for another.
pub fn cursor_position(owner: u64, next: usize) -> u128 {
    (u128::from(owner) << 64) | next as u128
}

/// Where the page a cursor names starts, if the cursor belongs to `owner`'s list.
pub fn start_of(position: u128, owner: u64) -> Result<usize, ApiError> {
    let invalid = || ApiError::Query(QueryError::InvalidCursor);
    if (position >> 64) as u64 != owner {
        return Err(invalid());
    }
    usize::try_from(position as u64).map_err(|_| invalid())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_positions_name_their_list() {
        let at = cursor_position(7, 300);
        assert_eq!(start_of(at, 7).ok(), Some(300));
        assert!(start_of(at, 8).is_err(), "another order's list");
    }
}
