//! Engine events as Python dicts: `seq`, `time`, `type` (the event's name) and its fields,
//! prices in ticks and amounts in lots of the instrument, funds in balance units.

use matchbook::{Event, EventRecord};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::values::pack;

/// The variant name of an event (`"Trade"`, `"OrderCancelled"`...).
fn name(event: &Event) -> String {
    let debug = format!("{event:?}");
    debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// One event as a dict.
pub(crate) fn to_dict<'py>(py: Python<'py>, record: &EventRecord) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("seq", record.seq)?;
    d.set_item("time", record.time.0)?;
    d.set_item("type", name(&record.event))?;
    order_fields(&d, &record.event)?;
    Ok(d)
}

/// The fields of an order's event (entry, fill, booking, amend, end) into `d`; any other
/// event's through [`other_fields`].
fn order_fields(d: &Bound<'_, PyDict>, event: &Event) -> PyResult<()> {
    match event {
        Event::OrderAccepted(a) => {
            d.set_item("order", pack(a.order))?;
            d.set_item("order_id", a.order.id)?;
            d.set_item("account", a.account.0)?;
            d.set_item("instrument", a.instrument.0)?;
            d.set_item("side", a.side.as_str())?;
            d.set_item("order_type", a.order_type.as_str())?;
            d.set_item("price", a.price.map(|p| p.0))?;
            d.set_item("amount", a.amount.0)?;
        }
        Event::Trade(t) => {
            d.set_item("trade", t.id.0)?;
            d.set_item("instrument", t.instrument.0)?;
            d.set_item("price", t.price.0)?;
            d.set_item("amount", t.amount.0)?;
            d.set_item("taker_side", t.taker_side.as_str())?;
            d.set_item("taker_account", t.taker_account.0)?;
            d.set_item("maker_account", t.maker_account.0)?;
            d.set_item("taker_order", pack(t.taker))?;
            d.set_item("maker_order", pack(t.maker))?;
            d.set_item("taker_fee", t.taker_fee)?;
            d.set_item("maker_fee", t.maker_fee)?;
        }
        Event::OrderBooked {
            order,
            instrument,
            side,
            price,
            remaining,
        } => {
            d.set_item("order", pack(*order))?;
            d.set_item("instrument", instrument.0)?;
            d.set_item("side", side.as_str())?;
            d.set_item("price", price.0)?;
            d.set_item("remaining", remaining.0)?;
        }
        Event::OrderAmended {
            order,
            account,
            price,
            amount,
            remaining,
            ..
        } => {
            d.set_item("order", pack(*order))?;
            d.set_item("account", account.0)?;
            d.set_item("price", price.map(|p| p.0))?;
            d.set_item("amount", amount.0)?;
            d.set_item("remaining", remaining.0)?;
        }
        Event::OrderCancelled {
            order,
            account,
            instrument,
            remaining,
            reason,
        } => {
            d.set_item("order", pack(*order))?;
            d.set_item("account", account.0)?;
            d.set_item("instrument", instrument.0)?;
            d.set_item("remaining", remaining.0)?;
            d.set_item("reason", format!("{reason:?}"))?;
        }
        other => other_fields(d, other)?,
    }
    Ok(())
}

/// The fields of a balance, refusal, top-of-book, position or funding event into `d`; of
/// any other, its debug text as `detail`.
fn other_fields(d: &Bound<'_, PyDict>, event: &Event) -> PyResult<()> {
    match event {
        Event::BalanceChanged {
            account,
            currency,
            available,
            locked,
        } => {
            d.set_item("account", account.0)?;
            d.set_item("currency", currency.0)?;
            d.set_item("available", *available)?;
            d.set_item("locked", *locked)?;
        }
        Event::Rejected { account, error, .. } => {
            d.set_item("account", account.map(|a| a.0))?;
            d.set_item("code", error.code())?;
            d.set_item("error", error.as_str())?;
        }
        Event::TopOfBook {
            instrument,
            bid,
            ask,
        } => {
            d.set_item("instrument", instrument.0)?;
            d.set_item("bid", bid.map(|p| p.0))?;
            d.set_item("ask", ask.map(|p| p.0))?;
        }
        Event::PositionChanged {
            account,
            instrument,
            position_id,
            size,
            entry_price,
            realised,
        } => {
            d.set_item("account", account.0)?;
            d.set_item("instrument", instrument.0)?;
            d.set_item("position_id", *position_id)?;
            d.set_item("size", *size)?;
            d.set_item("entry_price", entry_price.0)?;
            d.set_item("realised", *realised)?;
        }
        Event::FundingPaid {
            account,
            instrument,
            rate,
            payment,
            ..
        } => {
            d.set_item("account", account.0)?;
            d.set_item("instrument", instrument.0)?;
            d.set_item("rate", *rate)?;
            d.set_item("payment", *payment)?;
        }
        other => d.set_item("detail", format!("{other:?}"))?,
    }
    Ok(())
}
