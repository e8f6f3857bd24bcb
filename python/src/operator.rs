//! The operator's commands on markets: an instrument's trading state, a futures
//! instrument's index price, and the liquidation of an account's futures positions.

use matchbook::{AccountId, Command, Price};
use pyo3::prelude::*;

use crate::engine::{NativeEngine, instrument_of};
use crate::ints::int;
use crate::values;

#[pymethods]
impl NativeEngine {
    /// Changes an instrument's state (admin).
    fn set_instrument_state(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        instrument: &str,
        state: &str,
    ) -> PyResult<()> {
        let mut this = self.lock(py)?;
        let id = instrument_of(py, &this.reference, instrument)?;
        let state = values::instrument_state(py, state)?;
        this.run(
            py,
            Command::SetInstrumentState {
                instrument: id,
                state,
            },
            time_ns,
        )
        .map(drop)
    }

    /// Sets a futures instrument's index price (admin).
    fn set_index_price(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        instrument: &str,
        price: &str,
    ) -> PyResult<()> {
        let mut this = self.lock(py)?;
        let id = instrument_of(py, &this.reference, instrument)?;
        let (ps, _) = values::scales(py, &this.reference, id)?;
        let price = Price(values::fixed(py, price, ps, "price")?);
        this.run(
            py,
            Command::SetIndexPrice {
                instrument: id,
                price,
            },
            time_ns,
        )
        .map(drop)
    }

    /// Closes an account's futures positions against the book (admin).
    fn liquidate(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
    ) -> PyResult<()> {
        self.command(
            py,
            time_ns,
            Command::Liquidate {
                account: AccountId(account),
            },
        )
    }
}
