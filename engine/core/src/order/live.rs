//! The live order record: its cache-line layout (what matching touches in the first
//! line), its accessors, and the blank record a vacant slot of the order store holds.

use super::{LiveState, OrderType, Side, StpMode, TimeInForce, TriggerRef};
use crate::fixed::{Notional, Price, Qty};
use crate::ids::{AccountId, InstrumentId, OrderRef, Timestamp, Uuid};

/// Sentinel for "no slot" in the intrusive links.
pub(crate) const NIL: u32 = u32::MAX;

/// A live order as the engine keeps it.
///
/// The layout is fixed (`repr(C)`, 64-byte aligned) so that everything matching, amending
/// and unlinking touch sits in the first cache line; fields are read through accessors.
/// Optional values past the first line are a plain value plus a bit in
/// [`Order::extras`], so learning whether one is set reads the first line only; the
/// store's vacancy mark (id 0, see `crate::store`) is in the first line too, so finding an
/// order by slot reads that line only.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(from = "crate::persist::legacy_order::LegacyOrder")]
#[repr(C, align(64))]
pub struct Order {
    /// The order ahead in its level; meaningless for the level's head, which is never
    /// asked for it (the level names its head), so ending the head writes nothing into
    /// its successor's record.
    pub(crate) prev: u32,
    pub(crate) next: u32,
    pub(crate) level: u32,
    pub(crate) account: AccountId,
    pub(crate) id: u64,
    pub(crate) slot: u32,
    pub(crate) instrument: InstrumentId,
    pub(crate) side: Side,
    pub(crate) order_type: OrderType,
    pub(crate) time_in_force: TimeInForce,
    pub(crate) stp: StpMode,
    pub(crate) state: LiveState,
    /// Futures: fills never take the position past flat (capped at match time).
    pub(crate) reduce_only: bool,
    /// What a held trigger order watches.
    pub(crate) trigger_ref: TriggerRef,
    /// Rests as an iceberg (its shown part is `shown`): a flag in the first line, so book
    /// operations on plain orders never read the second.
    pub(crate) iceberg: bool,
    /// Which optional fields past the first line are set ([`Order::HAS_CLIENT_ID`],
    /// [`Order::EXPIRES`]): ending an order without them reads no other line.
    pub(crate) extras: u8,
    /// Limit price; `Price(0)` for a market order without a protection price.
    pub(crate) price: Price,
    pub(crate) amount: Qty,
    pub(crate) filled: Qty,
    // Second cache line: read on fills and by views.
    pub(crate) filled_notional: Notional,
    /// Trigger; `Price(0)` when none. A trailing order's moves as it ratchets.
    pub(crate) trigger_price: Price,
    /// Balance units still reserved (quote for a buy, base for a sell); 0 with balances off.
    pub(crate) reserved: i64,
    pub(crate) created: Timestamp,
    pub(crate) updated: Timestamp,
    pub(crate) sequence: u64,
    /// Meaningful when [`Order::EXPIRES`] is set.
    pub(crate) expire_at: Timestamp,
    /// An iceberg's shown part still to fill (0: not an iceberg).
    pub(crate) shown: Qty,
    /// Meaningful when [`Order::HAS_CLIENT_ID`] is set.
    pub(crate) client_id: Uuid,
    pub(crate) client_older: u32,
    pub(crate) client_newer: u32,
}

fn non_zero(price: Price) -> Option<Price> {
    (price.0 != 0).then_some(price)
}

impl Order {
    /// [`Order::extras`] bit: the order carries a client id.
    pub(crate) const HAS_CLIENT_ID: u8 = 1;
    /// [`Order::extras`] bit: the order expires (good till time).
    pub(crate) const EXPIRES: u8 = 2;

    /// The [`Order::extras`] bits of an order with or without a client id and an expiry.
    pub(crate) const fn extras_for(client_id: bool, expires: bool) -> u8 {
        (if client_id { Self::HAS_CLIENT_ID } else { 0 })
            | (if expires { Self::EXPIRES } else { 0 })
    }

    /// Sets (or clears) the client id.
    pub(crate) fn set_client_id(&mut self, client_id: Option<Uuid>) {
        self.client_id = client_id.unwrap_or_default();
        self.set_extra(Self::HAS_CLIENT_ID, client_id.is_some());
    }

    /// Sets (or clears) the expiry.
    pub(crate) fn set_expire_at(&mut self, at: Option<Timestamp>) {
        self.expire_at = at.unwrap_or_default();
        self.set_extra(Self::EXPIRES, at.is_some());
    }

    fn set_extra(&mut self, bit: u8, on: bool) {
        self.extras = if on {
            self.extras | bit
        } else {
            self.extras & !bit
        };
    }

    /// Handle (order number and slot).
    #[inline]
    pub fn handle(&self) -> OrderRef {
        OrderRef {
            id: self.id,
            slot: self.slot,
        }
    }
    /// Owner.
    pub fn account(&self) -> AccountId {
        self.account
    }
    /// Market.
    pub fn instrument(&self) -> InstrumentId {
        self.instrument
    }
    /// Side.
    pub fn side(&self) -> Side {
        self.side
    }
    /// Type.
    pub fn order_type(&self) -> OrderType {
        self.order_type
    }
    /// Time in force.
    pub fn time_in_force(&self) -> TimeInForce {
        self.time_in_force
    }
    /// Effective self-trade prevention mode.
    pub fn stp(&self) -> StpMode {
        self.stp
    }
    /// Where it is.
    pub fn state(&self) -> LiveState {
        self.state
    }
    /// Limit price (protection price of a market order, if any).
    pub fn price(&self) -> Option<Price> {
        non_zero(self.price)
    }
    /// Trigger price (a trailing order's current one).
    pub fn trigger_price(&self) -> Option<Price> {
        non_zero(self.trigger_price)
    }
    /// The price a trigger order watches.
    pub fn trigger_ref(&self) -> TriggerRef {
        self.trigger_ref
    }
    /// Total amount (an amend may change it).
    pub fn amount(&self) -> Qty {
        self.amount
    }
    /// Amount filled so far.
    pub fn filled(&self) -> Qty {
        self.filled
    }
    /// Sum of price x amount over fills (average price = this / filled).
    pub fn filled_notional(&self) -> Notional {
        self.filled_notional
    }
    /// Caller's tracking id.
    pub fn client_id(&self) -> Option<Uuid> {
        (self.extras & Self::HAS_CLIENT_ID != 0).then_some(self.client_id)
    }
    /// Expiry of a good-till-time order.
    pub fn expire_at(&self) -> Option<Timestamp> {
        (self.extras & Self::EXPIRES != 0).then_some(self.expire_at)
    }
    /// Time of acceptance.
    pub fn created(&self) -> Timestamp {
        self.created
    }
    /// Time of the last change.
    pub fn updated(&self) -> Timestamp {
        self.updated
    }
    /// Sequence number of its acceptance event.
    pub fn sequence(&self) -> u64 {
        self.sequence
    }
    /// Balance units this order still holds locked.
    pub fn reserved(&self) -> i64 {
        self.reserved
    }
    /// Amount still to fill.
    #[inline]
    pub fn remaining(&self) -> Qty {
        Qty(self.amount.0 - self.filled.0)
    }
    /// What the book shows of it: an iceberg's shown part, else all that remains.
    #[inline]
    pub fn visible(&self) -> Qty {
        if self.iceberg {
            self.shown
        } else {
            self.remaining()
        }
    }
    /// Whether it is an iceberg resting with a hidden reserve or a shown part.
    #[inline]
    pub fn is_iceberg(&self) -> bool {
        self.iceberg
    }
    /// The price bound used while matching: the limit, or no bound for a bare market order.
    #[inline]
    pub(crate) fn match_limit(&self) -> Price {
        match (self.price.0, self.side) {
            (0, Side::Buy) => Price(i64::MAX),
            (0, Side::Sell) => Price(i64::MIN),
            _ => self.price,
        }
    }
}

/// A vacant slot's record is blank with id 0 (order ids start at 1); `next` links the
/// free list.
impl crate::store::StoreRecord for Order {
    fn vacancy(next: u32) -> Self {
        Self {
            next,
            ..<Self as crate::persist::slab_image::Filler>::filler()
        }
    }
    #[inline]
    fn is_vacant(&self) -> bool {
        self.id == 0
    }
    #[inline]
    fn next_vacant(&self) -> u32 {
        self.next
    }
    #[inline]
    fn vacate(&mut self, next: u32) {
        self.id = 0;
        self.next = next;
    }
}

impl crate::persist::slab_image::Filler for Order {
    fn filler() -> Self {
        Self {
            prev: NIL,
            next: NIL,
            level: NIL,
            account: AccountId(0),
            id: 0,
            slot: NIL,
            instrument: InstrumentId(0),
            side: Side::Buy,
            order_type: OrderType::Limit,
            time_in_force: TimeInForce::GoodTillCancelled,
            stp: StpMode::None,
            state: LiveState::Resting,
            reduce_only: false,
            trigger_ref: TriggerRef::LastPrice,
            iceberg: false,
            extras: 0,
            price: Price(0),
            amount: Qty(0),
            filled: Qty(0),
            filled_notional: Notional(0),
            trigger_price: Price(0),
            reserved: 0,
            created: Timestamp(0),
            updated: Timestamp(0),
            sequence: 0,
            expire_at: Timestamp(0),
            shown: Qty(0),
            client_id: Uuid(0),
            client_older: NIL,
            client_newer: NIL,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn matching_reads_one_line_and_the_vacancy_mark_lives_there() {
        assert_eq!(size_of::<Order>(), 192);
        assert_eq!(
            offset_of!(Order, filled),
            56,
            "price, amount, filled in line one"
        );
        assert_eq!(
            offset_of!(Order, filled_notional),
            64,
            "line two starts here"
        );
        assert!(
            offset_of!(Order, id) < 64,
            "the store reads the id for vacancy"
        );
        assert!(offset_of!(Order, extras) < 64);
    }

    #[test]
    fn optional_fields_read_back_as_set() {
        let mut order = <Order as crate::persist::slab_image::Filler>::filler();
        assert_eq!((order.client_id(), order.expire_at()), (None, None));
        order.set_client_id(Some(Uuid(0)));
        order.set_expire_at(Some(Timestamp(5)));
        assert_eq!(order.client_id(), Some(Uuid(0)), "a zero id is still an id");
        assert_eq!(order.expire_at(), Some(Timestamp(5)));
        order.set_client_id(None);
        assert_eq!(
            (order.client_id(), order.expire_at()),
            (None, Some(Timestamp(5)))
        );
        order.set_expire_at(None);
        assert_eq!(order.extras, 0);
    }
}
