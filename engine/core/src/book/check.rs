//! Structural check of a decoded book against the order store: ladders, levels, FIFO links
//! and stop queues must describe each other exactly, because matching follows them without
//! bounds checks of its own.

use std::collections::BTreeSet;

use super::{Book, Level, key, triggers};
use crate::fixed::Price;
use crate::ids::InstrumentId;
use crate::order::{LiveState, NIL, OrderStore, Side, TriggerRef};

/// How many orders a checked book holds.
pub(crate) struct BookCounts {
    /// Orders resting in the levels.
    pub(crate) resting: usize,
    /// Stop orders waiting for their trigger.
    pub(crate) stops: usize,
}

impl Book {
    /// Checks that every ladder entry names a distinct level of this book at its price,
    /// that every level is on a ladder, that each level's FIFO links run head to tail
    /// through resting orders of this instrument, side and price with the level's count and
    /// total, and that each stop entry names a waiting stop order with its trigger and
    /// number. Prices must lie in `price_range`.
    pub(crate) fn check(
        &self,
        orders: &OrderStore,
        held_at: &triggers::HeldPositions,
        instrument: InstrumentId,
        price_range: (Price, Price),
    ) -> Result<BookCounts, String> {
        let mut listed = BTreeSet::new();
        let mut resting = 0usize;
        for side in [Side::Buy, Side::Sell] {
            for (k, level_index) in self.ladder(side).checked_entries()? {
                let level = self
                    .levels
                    .get(level_index as usize)
                    .ok_or("a ladder names a missing level")?;
                if !listed.insert(level_index) {
                    return Err("a level is on the ladders twice".into());
                }
                if key(side, level.price) != k
                    || level.price < price_range.0
                    || level.price > price_range.1
                {
                    return Err("a level's price disagrees with its ladder key".into());
                }
                let at = (instrument, side, level_index);
                resting += check_queue(orders, level, at)? as usize;
            }
        }
        if listed.len() != self.levels.len() {
            return Err("a level is on no ladder".into());
        }
        let stops = self.check_held(orders, held_at, instrument)?;
        Ok(BookCounts { resting, stops })
    }

    /// Checks each held trigger queue against its orders; how many they hold.
    fn check_held(
        &self,
        orders: &OrderStore,
        held_at: &triggers::HeldPositions,
        instrument: InstrumentId,
    ) -> Result<usize, String> {
        let mut stops = 0usize;
        for reference in [TriggerRef::LastPrice, TriggerRef::MarkPrice] {
            self.held(reference).check(held_at)?;
            for (rising, (trigger_key, id), slot) in self.held(reference).held() {
                let order = orders
                    .get(slot as usize)
                    .ok_or("a held trigger names a missing order")?;
                if order.state != LiveState::PendingTrigger
                    || order.instrument != instrument
                    || order.order_type.fires_rising(order.side) != rising
                    || order.trigger_ref != reference
                    || order.id != id
                    || triggers::trigger_key(rising, order.trigger_price) != trigger_key
                {
                    return Err("a held trigger disagrees with its order".into());
                }
                stops += 1;
            }
        }
        Ok(stops)
    }

    /// Clears the bid ladder's bitset (integrity tests corrupt it).
    #[cfg(test)]
    pub(crate) fn clear_bid_bits_for_test(&mut self) {
        self.ladder_mut(Side::Buy).clear_bits_for_test();
    }
}

/// Walks the FIFO of `level`, at index `level_index` of `instrument`'s `side`: every order
/// resting in it in place, agreeing with the level's count, tail and totals. Its count.
fn check_queue(
    orders: &OrderStore,
    level: &Level,
    (instrument, side, level_index): (InstrumentId, Side, u32),
) -> Result<u32, String> {
    let (mut slot, mut prev, mut count, mut total) = (level.head, NIL, 0u32, 0i64);
    let mut hidden = 0i64;
    while slot != NIL {
        let order = orders
            .get(slot as usize)
            .ok_or("a level links to a missing order")?;
        // The head's `prev` is not kept (see `Order::prev`); every other order
        // names the one before it, and the walk never comes back to the head.
        let in_place = match prev {
            NIL => true,
            _ => slot != level.head && order.prev == prev,
        };
        if order.state != LiveState::Resting
            || order.instrument != instrument
            || order.side != side
            || order.level != level_index
            || !in_place
            || order.price != level.price
        {
            return Err("a level links to an order that is not resting in it".into());
        }
        count += 1;
        let visible = order.visible().0;
        if visible > order.remaining().0 || visible <= 0 {
            return Err("an iceberg shows more than it has".into());
        }
        total = total
            .checked_add(visible)
            .ok_or("a level's total overflows")?;
        hidden += order.remaining().0 - visible;
        (prev, slot) = (slot, order.next);
    }
    if count == 0
        || level.count != count
        || level.tail != prev
        || level.total.0 != total
        || level.hidden.0 != hidden
    {
        return Err("a level's count, tail or total disagrees with its orders".into());
    }
    Ok(count)
}
