//! An order entry from `place_order`'s Python arguments: every text parsed at the
//! instrument's scales, the trigger-order extensions (reference, trail, limit offset)
//! included. Whether the fields suit the order type is the engine's check.

use matchbook::{AccountId, Engine, NewOrder, Price, Qty, Timestamp, Trail, TriggerRef};
use pyo3::prelude::*;

use crate::errors;
use crate::values;

/// `place_order`'s arguments, as Python gave them.
pub(crate) struct OrderArgs<'a> {
    pub(crate) account: u32,
    pub(crate) instrument: &'a str,
    pub(crate) side: &'a str,
    pub(crate) amount: &'a str,
    pub(crate) price: Option<&'a str>,
    pub(crate) order_type: &'a str,
    pub(crate) time_in_force: &'a str,
    pub(crate) trigger_price: Option<&'a str>,
    pub(crate) expire_at_ns: Option<i64>,
    pub(crate) client_id: Option<&'a str>,
    pub(crate) stp: Option<&'a str>,
    pub(crate) reduce_only: bool,
    pub(crate) trigger_reference: &'a str,
    pub(crate) trailing_offset: Option<&'a str>,
    pub(crate) trailing_offset_bps: Option<u32>,
    pub(crate) limit_offset: Option<&'a str>,
    pub(crate) display: Option<&'a str>,
}

/// The engine's order entry for `args`.
pub(crate) fn new_order(
    py: Python<'_>,
    engine: &Engine,
    args: &OrderArgs<'_>,
) -> PyResult<NewOrder> {
    let id = crate::engine::instrument_of(py, engine, args.instrument)?;
    let (ps, qs) = values::scales(py, engine, id)?;
    let price_of = |text: Option<&str>, what: &str| {
        text.map(|p| values::fixed(py, p, ps, what).map(Price))
            .transpose()
    };
    let trail = match (
        price_of(args.trailing_offset, "trailing offset")?,
        args.trailing_offset_bps,
    ) {
        (Some(p), None) => Some(Trail::Price(p)),
        (None, Some(bps)) => Some(Trail::Bps(bps)),
        (None, None) => None,
        (Some(_), Some(_)) => {
            return Err(errors::invalid(
                py,
                "give trailing_offset or trailing_offset_bps, not both",
            ));
        }
    };
    let trigger_ref = match args.trigger_reference {
        "LAST_PRICE" => TriggerRef::LastPrice,
        "MARK_PRICE" => TriggerRef::MarkPrice,
        other => {
            return Err(errors::invalid(
                py,
                format!("trigger reference {other:?}: one of LAST_PRICE, MARK_PRICE"),
            ));
        }
    };
    Ok(NewOrder {
        account: AccountId(args.account),
        instrument: id,
        side: values::side(py, args.side)?,
        order_type: values::order_type(py, args.order_type)?,
        time_in_force: values::time_in_force(py, args.time_in_force)?,
        price: price_of(args.price, "price")?,
        trigger_price: price_of(args.trigger_price, "trigger price")?,
        trigger_ref,
        trail,
        limit_offset: price_of(args.limit_offset, "limit offset")?,
        display: args
            .display
            .map(|d| values::fixed(py, d, qs, "display").map(Qty))
            .transpose()?,
        amount: Qty(values::fixed(py, args.amount, qs, "amount")?),
        expire_at: args.expire_at_ns.map(Timestamp),
        client_id: args.client_id.map(|c| values::uuid(py, c)).transpose()?,
        stp: args.stp.map(|s| values::stp(py, s)).transpose()?,
        reduce_only: args.reduce_only,
    })
}
