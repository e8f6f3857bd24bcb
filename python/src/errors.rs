//! Errors into Python: every engine error and every bad argument becomes an instance of a
//! class of `matchbook.errors`, picked there (once) from the stable numeric code, its
//! message naming what the refused command was about.

use matchbook::{Command, EngineError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyAny;

/// `matchbook.errors.error_for`, looked up once: refusals are frequent in a backtest.
static ERROR_FOR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Code of an argument the engine never saw (bad decimal, unknown code, bad enum text):
/// the C ABI's `INVALID_ARGUMENT`.
pub(crate) const INVALID_ARGUMENT: u16 = 9003;

/// Builds `matchbook.errors.error_for(code, name, message)`.
pub(crate) fn raise(py: Python<'_>, code: u16, name: &str, message: &str) -> PyErr {
    let made = ERROR_FOR
        .import(py, "matchbook.errors", "error_for")
        .and_then(|f| f.call1((code, name, message)));
    match made {
        Ok(exception) => PyErr::from_value(exception),
        Err(e) => e,
    }
}

/// An engine refusal.
pub(crate) fn engine(py: Python<'_>, e: EngineError) -> PyErr {
    raise(py, e.code(), e.as_str(), &e.to_string())
}

/// An engine refusal naming what it refers to: `unknown instrument: "BTCX_EUR"`.
pub(crate) fn engine_about(py: Python<'_>, e: EngineError, about: impl AsRef<str>) -> PyErr {
    raise(
        py,
        e.code(),
        e.as_str(),
        &format!("{e}: {}", about.as_ref()),
    )
}

/// Code of a data-directory failure: the C ABI's `STORAGE`.
pub(crate) const STORAGE: u16 = 9009;

/// A data-directory failure.
pub(crate) fn storage(py: Python<'_>, e: &matchbook::store::StoreError) -> PyErr {
    raise(py, STORAGE, "STORAGE", &e.to_string())
}

/// A server's data directory that could not be read (`Engine.load`).
pub(crate) fn recorded(py: Python<'_>, e: &matchbook::recorded::RecordedError) -> PyErr {
    raise(py, STORAGE, "STORAGE", &e.to_string())
}

/// A bad argument.
pub(crate) fn invalid(py: Python<'_>, message: impl AsRef<str>) -> PyErr {
    raise(py, INVALID_ARGUMENT, "INVALID_ARGUMENT", message.as_ref())
}

/// What a refused command was about, for its error message: the order and its account,
/// the account and instrument of a new order, the account, or the command itself.
pub(crate) fn subject(
    reference: &matchbook::reference::ReferenceData,
    command: &Command,
) -> String {
    match command {
        Command::CancelOrder { account, order } | Command::AmendOrder { account, order, .. } => {
            format!("order {} of account {}", order.id, account.0)
        }
        Command::PlaceOrder(o) => {
            let code = (reference.market_of(o.instrument)).map_or("?", |m| m.code.as_str());
            format!("order of account {} on {code}", o.account.0)
        }
        other => other
            .account()
            .map_or_else(|| format!("{other:?}"), |a| format!("account {}", a.0)),
    }
}
