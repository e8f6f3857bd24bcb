//! Columns of orders in one call: the loop runs in Rust with the GIL released, each order
//! answered by a status code (0 = accepted) and its handle, so a million orders cost one
//! Python call.

use matchbook::{
    AccountId, Command, InstrumentId, NewOrder, Price, Qty, Side, TimeInForce, Timestamp,
};

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::engine::{Core, NativeEngine};
use crate::errors::invalid;

/// One column set of limit orders; every column has the same length (checked by the
/// caller).
pub(crate) struct OrderColumns<'a> {
    pub time: &'a [i64],
    pub account: &'a [u32],
    pub instrument: &'a [u16],
    pub side: &'a [u8],
    pub price: &'a [i64],
    pub amount: &'a [i64],
    pub tif: &'a [u8],
}

/// What each order got: status code (0 accepted, else the engine's error code or 9003
/// for a bad side or time-in-force code), order number and slot (0 when refused, set for a
/// fill-or-kill or post-only order accepted and ended at once).
#[derive(Default)]
pub(crate) struct Answers {
    pub status: Vec<u16>,
    pub order_id: Vec<u64>,
    pub slot: Vec<u32>,
}

const TIFS: [TimeInForce; 5] = [
    TimeInForce::GoodTillCancelled,
    TimeInForce::ImmediateOrCancelled,
    TimeInForce::FillOrKill,
    TimeInForce::PostOnly,
    TimeInForce::GoodTillTime,
];

/// Applies every order in column order; a durable engine commits once at the end. Stops
/// at a data-directory failure.
pub(crate) fn place(
    core: &mut Core,
    c: &OrderColumns<'_>,
) -> Result<Answers, matchbook::store::StoreError> {
    let n = c.time.len();
    let mut answers = Answers {
        status: Vec::with_capacity(n),
        order_id: Vec::with_capacity(n),
        slot: Vec::with_capacity(n),
    };
    for i in 0..n {
        let side = match c.side[i] {
            0 => Some(Side::Buy),
            1 => Some(Side::Sell),
            _ => None,
        };
        let tif = TIFS.get(usize::from(c.tif[i])).copied();
        // Time never goes backwards: an earlier time is refused like a bad side.
        let in_order = c.time[i] >= core.engine.now().0;
        let (Some(side), Some(tif), true) = (side, tif, in_order) else {
            answers.status.push(crate::errors::INVALID_ARGUMENT);
            answers.order_id.push(0);
            answers.slot.push(0);
            continue;
        };
        let order = NewOrder::limit(
            AccountId(c.account[i]),
            InstrumentId(c.instrument[i]),
            side,
            Price(c.price[i]),
            Qty(c.amount[i]),
        )
        .with_tif(tif);
        match core.apply_uncommitted(&Command::PlaceOrder(order), Timestamp(c.time[i]))? {
            Ok(applied) => {
                // A fill-or-kill or post-only order the book refused was accepted and ended
                // at once: its refusal's code, with the order's handle.
                let handle = applied.order.unwrap_or_default();
                answers
                    .status
                    .push(applied.rejected.map_or(0, |e| e.code()));
                answers.order_id.push(handle.id);
                answers.slot.push(handle.slot);
            }
            Err(e) => {
                answers.status.push(e.code());
                answers.order_id.push(0);
                answers.slot.push(0);
            }
        }
    }
    core.commit()?;
    Ok(answers)
}

fn column<'a, T: numpy::Element>(
    py: Python<'_>,
    array: &'a PyReadonlyArray1<'_, T>,
    name: &str,
) -> PyResult<&'a [T]> {
    array
        .as_slice()
        .map_err(|_| invalid(py, format!("{name}: a contiguous 1-d array")))
}

#[pymethods]
impl NativeEngine {
    /// Limit orders as numpy columns (`side` 0 buy / 1 sell; `tif` 0 GTC, 1 IOC, 2 FOK,
    /// 3 post-only; prices in ticks, amounts in lots), applied in order with the GIL
    /// released. Returns columns `status` (0 or the error code), `order_id`, `slot`.
    #[allow(clippy::too_many_arguments, reason = "one numpy column each")]
    fn submit_orders<'py>(
        &self,
        py: Python<'py>,
        time_ns: PyReadonlyArray1<'py, i64>,
        account: PyReadonlyArray1<'py, u32>,
        instrument: PyReadonlyArray1<'py, u16>,
        side: PyReadonlyArray1<'py, u8>,
        price: PyReadonlyArray1<'py, i64>,
        amount: PyReadonlyArray1<'py, i64>,
        tif: PyReadonlyArray1<'py, u8>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut this = self.lock(py)?;
        let columns = OrderColumns {
            time: column(py, &time_ns, "time_ns")?,
            account: column(py, &account, "account")?,
            instrument: column(py, &instrument, "instrument")?,
            side: column(py, &side, "side")?,
            price: column(py, &price, "price")?,
            amount: column(py, &amount, "amount")?,
            tif: column(py, &tif, "tif")?,
        };
        let n = columns.time.len();
        let lengths = [
            columns.account.len(),
            columns.instrument.len(),
            columns.side.len(),
            columns.price.len(),
            columns.amount.len(),
            columns.tif.len(),
        ];
        if lengths.iter().any(|&l| l != n) {
            return Err(invalid(
                py,
                format!("columns of different lengths: {n} times, {lengths:?}"),
            ));
        }
        let core = &mut this.core;
        let answers = py
            .detach(|| place(core, &columns))
            .map_err(|e| crate::errors::storage(py, &e))?;
        let d = PyDict::new(py);
        d.set_item("status", PyArray1::from_vec(py, answers.status))?;
        d.set_item("order_id", PyArray1::from_vec(py, answers.order_id))?;
        d.set_item("slot", PyArray1::from_vec(py, answers.slot))?;
        Ok(d)
    }
}
