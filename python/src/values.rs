//! Text and numbers at the Python edge: wire spellings of enumerations, decimal strings
//! at an instrument's or currency's scale, and the packed integer order handle.

use matchbook::fixed::{format_scaled, parse_scaled};
use matchbook::reference::{MarketRef, ReferenceData};
use matchbook::wire_name::WireName;
use matchbook::{
    AccountKind, EngineError, InstrumentId, InstrumentState, OrderRef, OrderType, Side, StpMode,
    TimeInForce, Uuid,
};
use pyo3::prelude::*;

use crate::errors::invalid;

/// An order handle as one Python int: `slot << 64 | id` (the slot makes lookups O(1)).
pub(crate) fn pack(order: OrderRef) -> u128 {
    (u128::from(order.slot) << 64) | u128::from(order.id)
}

/// The order handle of a packed int, or `None` for an int wider than a handle.
pub(crate) fn unpack(handle: u128) -> Option<OrderRef> {
    Some(OrderRef {
        id: handle as u64,
        slot: u32::try_from(handle >> 64).ok()?,
    })
}

/// A value of `T` by its wire spelling (the core's, [`WireName`]).
pub(crate) fn spelled<T: WireName>(py: Python<'_>, text: &str) -> PyResult<T> {
    T::from_wire(text).ok_or_else(|| {
        let known = T::wire_names().join(", ");
        invalid(py, format!("{} {text:?}: one of {known}", T::WHAT))
    })
}

pub(crate) fn side(py: Python<'_>, text: &str) -> PyResult<Side> {
    spelled(py, text)
}

pub(crate) fn order_type(py: Python<'_>, text: &str) -> PyResult<OrderType> {
    spelled(py, text)
}

pub(crate) fn time_in_force(py: Python<'_>, text: &str) -> PyResult<TimeInForce> {
    spelled(py, text)
}

pub(crate) fn stp(py: Python<'_>, text: &str) -> PyResult<StpMode> {
    spelled(py, text)
}

pub(crate) fn account_kind(py: Python<'_>, text: &str) -> PyResult<AccountKind> {
    AccountKind::parse(text).ok_or_else(|| {
        invalid(
            py,
            format!("account kind {text:?}: regular, instant-trade or blp"),
        )
    })
}

pub(crate) fn instrument_state(py: Python<'_>, text: &str) -> PyResult<InstrumentState> {
    InstrumentState::parse(text).ok_or_else(|| {
        invalid(
            py,
            format!("instrument state {text:?}: ACTIVE, POST_ONLY, SUSPENDED or CLOSED"),
        )
    })
}

/// A client order id: a UUID string.
pub(crate) fn uuid(py: Python<'_>, text: &str) -> PyResult<Uuid> {
    let hex: String = text.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 {
        return Err(invalid(py, format!("client id {text:?}: a UUID")));
    }
    u128::from_str_radix(&hex, 16)
        .map(Uuid)
        .map_err(|_| invalid(py, format!("client id {text:?}: a UUID")))
}

/// A UUID in its 8-4-4-4-12 form.
pub(crate) fn uuid_text(id: Uuid) -> String {
    let h = format!("{:032x}", id.0);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// A market of the reference data, or the engine's `UNKNOWN_INSTRUMENT`.
pub(crate) fn market<'a>(
    py: Python<'_>,
    reference: &'a ReferenceData,
    instrument: InstrumentId,
) -> PyResult<&'a MarketRef> {
    (reference.market_of(instrument))
        .ok_or_else(|| crate::errors::engine(py, EngineError::UnknownInstrument))
}

/// Scales of one instrument: (market precision, amount precision).
pub(crate) fn scales(
    py: Python<'_>,
    reference: &ReferenceData,
    instrument: InstrumentId,
) -> PyResult<(u8, u8)> {
    let m = market(py, reference, instrument)?;
    Ok((m.market_precision, m.amount_precision))
}

/// A fee of `side` on `instrument`, in balance units, as decimal text at its currency's
/// balance scale, with that currency's code.
pub(crate) fn fee(
    py: Python<'_>,
    reference: &ReferenceData,
    instrument: InstrumentId,
    side: Side,
    units: i64,
) -> PyResult<(String, String)> {
    let currency = market(py, reference, instrument)?.fee_currency(side);
    let code = reference.currency_code(currency).to_owned();
    Ok((text(units, reference.scale(currency)), code))
}

/// A decimal string at `scale` decimals as fixed point. Zeros at the end of the fraction
/// are dropped first, so an amount is refused for its value being finer than the
/// instrument allows, never for how it was spelled (`0.00000050` at 7 decimals is fine).
pub(crate) fn fixed(py: Python<'_>, text: &str, scale: u8, what: &str) -> PyResult<i64> {
    let significant = match text.split_once('.') {
        Some((whole, fraction)) if !whole.is_empty() && !fraction.is_empty() => {
            let kept = fraction.trim_end_matches('0');
            &text[..whole.len() + usize::from(!kept.is_empty()) + kept.len()]
        }
        _ => text,
    };
    parse_scaled(significant, scale)
        .map_err(|e| invalid(py, format!("{what} {text:?}: {}", e.with_bound(scale))))
}

/// Fixed point at `scale` decimals as a decimal string.
pub(crate) fn text(value: i64, scale: u8) -> String {
    format_scaled(i128::from(value), scale)
}

/// A wide fixed-point value as a decimal string.
pub(crate) fn wide_text(value: i128, scale: u8) -> String {
    format_scaled(value, scale)
}
