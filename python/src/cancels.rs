//! Cancels: one order by its handle or number, the newest order with a client id, and
//! every order of an account (or those of one instrument, the listed handles, the newest
//! for each listed client id).

use matchbook::{AccountId, CancelScope, Command};
use pyo3::prelude::*;

use crate::engine::{NativeEngine, instrument_of};
use crate::errors::invalid;
use crate::ints::{int, opt_list};
use crate::values;

#[pymethods]
impl NativeEngine {
    /// Cancels one order.
    fn cancel_order(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        #[pyo3(from_py_with = int::<u128>)] order: u128,
    ) -> PyResult<()> {
        let mut this = self.lock(py)?;
        let command = Command::CancelOrder {
            account: AccountId(account),
            order: this.order_ref(py, account, order)?,
        };
        this.run(py, command, time_ns).map(drop)
    }

    /// Cancels the newest open order with `client_id`.
    fn cancel_by_client_id(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        client_id: &str,
    ) -> PyResult<()> {
        let mut this = self.lock(py)?;
        let client_id = values::uuid(py, client_id)?;
        this.run(
            py,
            Command::CancelByClientId {
                account: AccountId(account),
                client_id,
            },
            time_ns,
        )
        .map(drop)
    }

    /// Cancels every open order of the account, or those in `instrument`, or the listed
    /// handles, or the newest open order for each listed client id.
    #[pyo3(signature = (time_ns, account, instrument = None, orders = None, client_ids = None))]
    #[allow(clippy::too_many_arguments, reason = "mirrors the Python signature")]
    fn cancel_all(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        instrument: Option<&str>,
        #[pyo3(from_py_with = opt_list::<u128>)] orders: Option<Vec<u128>>,
        client_ids: Option<Vec<String>>,
    ) -> PyResult<()> {
        let mut this = self.lock(py)?;
        let scope = match (instrument, orders, client_ids) {
            (None, None, None) => CancelScope::All,
            (Some(code), None, None) => {
                CancelScope::Instrument(instrument_of(py, &this.reference, code)?)
            }
            (None, Some(list), None) => CancelScope::Orders(
                list.into_iter()
                    .map(|o| this.order_ref(py, account, o))
                    .collect::<PyResult<_>>()?,
            ),
            (None, None, Some(ids)) => CancelScope::ClientIds(
                ids.iter()
                    .map(|id| values::uuid(py, id))
                    .collect::<PyResult<_>>()?,
            ),
            _ => return Err(invalid(py, "give one of instrument, orders or client_ids")),
        };
        this.run(
            py,
            Command::CancelAll {
                account: AccountId(account),
                scope,
            },
            time_ns,
        )
        .map(drop)
    }
}
