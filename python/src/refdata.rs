//! The reference-data half of `NativeEngine`: instruments with their futures terms,
//! currencies, and the configured holders' accounts by name.

use matchbook::{CurrencyId, EngineError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::engine::NativeEngine;
use crate::errors;

/// A future's terms as a dict (decimal text), `None` for a spot instrument.
fn futures_terms<'py>(
    py: Python<'py>,
    terms: Option<&matchbook::FuturesTerms>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(f) = terms else {
        return Ok(None);
    };
    let d = PyDict::new(py);
    d.set_item(
        "initial_margin_percentage",
        f.initial_margin_percentage.to_string(),
    )?;
    d.set_item(
        "maintenance_margin_percentage",
        f.maintenance_margin_percentage.to_string(),
    )?;
    d.set_item("funding_period", f.funding_period)?;
    d.set_item("contract_expiry_date", f.contract_expiry_date.as_deref())?;
    Ok(Some(d))
}

#[pymethods]
impl NativeEngine {
    /// Every instrument: code, index, base, quote, type, state and precisions.
    fn instruments<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let this = self.lock(py)?;
        let list = PyList::empty(py);
        for (i, inst) in this.core.engine.instruments().iter().enumerate() {
            let d = PyDict::new(py);
            d.set_item("code", inst.code())?;
            d.set_item("index", i)?;
            d.set_item("base", &inst.spec.base)?;
            d.set_item("quote", &inst.spec.quote)?;
            d.set_item("type", inst.spec.kind.as_str())?;
            d.set_item("state", inst.state.as_str())?;
            d.set_item("amount_precision", inst.spec.amount_precision)?;
            d.set_item("market_precision", inst.spec.market_precision)?;
            d.set_item("min_size", &inst.spec.min_size)?;
            d.set_item("min_price", &inst.spec.min_price)?;
            d.set_item("max_price", &inst.spec.max_price)?;
            d.set_item("futures", futures_terms(py, inst.spec.futures.as_ref())?)?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// Every currency: code, index, precision and balance scale.
    fn currencies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let this = self.lock(py)?;
        let list = PyList::empty(py);
        for (i, c) in this.core.engine.currencies().iter().enumerate() {
            let d = PyDict::new(py);
            d.set_item("code", &c.code)?;
            d.set_item("index", i)?;
            d.set_item("precision", c.precision)?;
            d.set_item(
                "scale",
                this.core
                    .engine
                    .balance_scale(CurrencyId(i as u16))
                    .unwrap_or(0),
            )?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// (holder id, account id) of a configured holder's account.
    fn account(&self, py: Python<'_>, holder: &str, name: &str) -> PyResult<(u32, u32)> {
        let this = self.lock(py)?;
        let entry = this.directory.get(holder).ok_or_else(|| {
            errors::engine_about(py, EngineError::UnknownHolder, format!("{holder:?}"))
        })?;
        let account = entry.accounts.get(name).ok_or_else(|| {
            errors::engine_about(
                py,
                EngineError::UnknownAccount,
                format!("{name:?} of {holder:?}"),
            )
        })?;
        Ok((entry.holder.0, account.0))
    }
}
