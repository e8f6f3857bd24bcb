//! The live order as format-6 snapshots wrote it (serde, field by field, the optional
//! fields as `Option`s), read into the engine's [`Order`], whose layout has since moved
//! on. Only reading: newer formats go through [`crate::image::OrderImage`].

use crate::fixed::{Notional, Price, Qty};
use crate::ids::{AccountId, InstrumentId, Timestamp, Uuid};
use crate::order::{LiveState, Order, OrderType, Side, StpMode, TimeInForce, TriggerRef};

/// An order exactly as format 6 serialized it.
#[derive(serde::Deserialize)]
pub struct LegacyOrder {
    prev: u32,
    next: u32,
    level: u32,
    account: AccountId,
    id: u64,
    slot: u32,
    instrument: InstrumentId,
    side: Side,
    order_type: OrderType,
    time_in_force: TimeInForce,
    stp: StpMode,
    state: LiveState,
    reduce_only: bool,
    price: Price,
    amount: Qty,
    filled: Qty,
    filled_notional: Notional,
    trigger_price: Price,
    reserved: i64,
    created: Timestamp,
    updated: Timestamp,
    sequence: u64,
    expire_at: Option<Timestamp>,
    client_id: Option<Uuid>,
    client_older: u32,
    client_newer: u32,
    #[allow(
        dead_code,
        reason = "format 6's account chains are rebuilt from order numbers"
    )]
    account_older: u32,
    #[allow(
        dead_code,
        reason = "format 6's account chains are rebuilt from order numbers"
    )]
    account_newer: u32,
}

impl From<LegacyOrder> for Order {
    fn from(o: LegacyOrder) -> Self {
        let mut order = Order {
            prev: o.prev,
            next: o.next,
            level: o.level,
            account: o.account,
            id: o.id,
            slot: o.slot,
            instrument: o.instrument,
            side: o.side,
            order_type: o.order_type,
            time_in_force: o.time_in_force,
            stp: o.stp,
            state: o.state,
            reduce_only: o.reduce_only,
            // Format 6 had no other reference price, icebergs or extras.
            trigger_ref: TriggerRef::LastPrice,
            iceberg: false,
            extras: 0,
            price: o.price,
            amount: o.amount,
            filled: o.filled,
            filled_notional: o.filled_notional,
            trigger_price: o.trigger_price,
            reserved: o.reserved,
            created: o.created,
            updated: o.updated,
            sequence: o.sequence,
            expire_at: Timestamp::default(),
            shown: Qty(0),
            client_id: Uuid::default(),
            client_older: o.client_older,
            client_newer: o.client_newer,
        };
        order.set_client_id(o.client_id);
        order.set_expire_at(o.expire_at);
        order
    }
}
