//! An order entry from `place_order`'s Python arguments: every text parsed at the
//! instrument's scales, the trigger-order extensions (reference, trail, limit offset)
//! included. Whether the fields suit the order type is the engine's check.

use matchbook::reference::ReferenceData;
use matchbook::{AccountId, NewOrder, Price, Qty, Timestamp, Trail, TriggerRef};
use pyo3::prelude::*;

use crate::errors;
use crate::ints::int;
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
    reference: &ReferenceData,
    args: &OrderArgs<'_>,
) -> PyResult<NewOrder> {
    let id = crate::engine::instrument_of(py, reference, args.instrument)?;
    let (ps, qs) = values::scales(py, reference, id)?;
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
    let trigger_ref: TriggerRef = values::spelled(py, args.trigger_reference)?;
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

#[pymethods]
impl crate::engine::NativeEngine {
    /// Places a one-cancels-the-other exit pair on one side: a limit at `price` and a stop
    /// triggered at `stop_trigger` (a stop-limit at `stop_limit`, else a stop-market);
    /// returns both handles.
    #[pyo3(signature = (time_ns, account, instrument, side, amount, price, stop_trigger, stop_limit = None))]
    #[allow(clippy::too_many_arguments, reason = "mirrors the Python signature")]
    fn place_oco(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        instrument: &str,
        side: &str,
        amount: &str,
        price: &str,
        stop_trigger: &str,
        stop_limit: Option<&str>,
    ) -> PyResult<(u128, u128)> {
        let mut this = self.lock(py)?;
        let limit = OrderArgs::simple(account, instrument, side, amount, Some(price), "LIMIT");
        let first = new_order(py, &this.reference, &limit)?;
        let stop_type = if stop_limit.is_some() {
            "STOP"
        } else {
            "STOP_MARKET"
        };
        let stop = OrderArgs {
            trigger_price: Some(stop_trigger),
            ..OrderArgs::simple(account, instrument, side, amount, stop_limit, stop_type)
        };
        let second = Box::new(new_order(py, &this.reference, &stop)?);
        let applied = this.run(py, matchbook::Command::PlaceOco { first, second }, time_ns)?;
        let handle = |o: Option<matchbook::OrderRef>| o.map_or(0, crate::values::pack);
        Ok((handle(applied.order), handle(applied.linked)))
    }

    /// Places a bracket: an entry (a limit at `price`, or a market order without one) whose
    /// exits, once it is done, are a take-profit limit at `take_profit` and a stop-loss
    /// triggered at `stop_loss` (a stop-limit at `stop_limit`) for what it filled; returns
    /// the entry's handle.
    #[pyo3(signature = (time_ns, account, instrument, side, amount, price, take_profit, stop_loss, stop_limit = None, time_in_force = "GOOD_TILL_CANCELLED"))]
    #[allow(clippy::too_many_arguments, reason = "mirrors the Python signature")]
    fn place_bracket(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        instrument: &str,
        side: &str,
        amount: &str,
        price: Option<&str>,
        take_profit: &str,
        stop_loss: &str,
        stop_limit: Option<&str>,
        time_in_force: &str,
    ) -> PyResult<u128> {
        let mut this = self.lock(py)?;
        let kind = if price.is_some() { "LIMIT" } else { "MARKET" };
        let args = OrderArgs {
            time_in_force,
            ..OrderArgs::simple(account, instrument, side, amount, price, kind)
        };
        let entry = new_order(py, &this.reference, &args)?;
        let (ps, _) = values::scales(py, &this.reference, entry.instrument)?;
        let at = |text: &str, what: &str| values::fixed(py, text, ps, what).map(Price);
        let exits = matchbook::BracketExits {
            take_profit: at(take_profit, "take profit")?,
            stop_loss: at(stop_loss, "stop loss")?,
            stop_limit: stop_limit.map(|p| at(p, "stop limit")).transpose()?,
        };
        let applied = this.run(
            py,
            matchbook::Command::PlaceBracket { entry, exits },
            time_ns,
        )?;
        Ok(applied.order.map_or(0, crate::values::pack))
    }
}

impl<'a> OrderArgs<'a> {
    /// A good-till-cancelled order of `order_type` with nothing else set.
    fn simple(
        account: u32,
        instrument: &'a str,
        side: &'a str,
        amount: &'a str,
        price: Option<&'a str>,
        order_type: &'a str,
    ) -> Self {
        Self {
            account,
            instrument,
            side,
            amount,
            price,
            order_type,
            time_in_force: "GOOD_TILL_CANCELLED",
            trigger_price: None,
            expire_at_ns: None,
            client_id: None,
            stp: None,
            reduce_only: false,
            trigger_reference: "LAST_PRICE",
            trailing_offset: None,
            trailing_offset_bps: None,
            limit_offset: None,
            display: None,
        }
    }
}
