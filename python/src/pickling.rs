//! Pickling an engine (`pickle`, and so `multiprocessing` under the spawn and forkserver
//! start methods): its definition, start time and choices travel with its state as a
//! snapshot encodes it, and the unpickled engine is one in memory whose state passed the
//! snapshot load check against a fresh engine of that definition.

use matchbook::snapshot::{Snapshot, SnapshotError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::engine::{Inner, NativeEngine};
use crate::errors::invalid;
use crate::ints::int;

/// What an engine was built from: enough to build it again.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    /// The exchange definition's text.
    pub(crate) definition: String,
    /// Its format, `toml` or `json`.
    pub(crate) format: String,
    /// When its holders were provisioned.
    pub(crate) start_time_ns: i64,
}

/// The arguments `_restore` takes back: the origin, market data and events kept, the state.
type Pickled<'py> = (String, String, i64, bool, bool, Bound<'py, PyBytes>);

#[pymethods]
impl NativeEngine {
    /// How `pickle` rebuilds the engine: `_restore` with its origin and encoded state (a
    /// durable engine comes back in memory; no events wait in it).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, Pickled<'py>)> {
        let this = self.lock(py)?;
        let engine = this.engine(py)?;
        let market = this.core.market.as_ref();
        let snapshot = Snapshot::capture(0, engine, market)
            .map_err(|e| invalid(py, format!("engine state not encodable: {e}")))?;
        let restore = py.get_type::<Self>().getattr("_restore")?;
        let origin = &this.origin;
        let state = PyBytes::new(py, &snapshot.to_bytes());
        Ok((
            restore,
            (
                origin.definition.clone(),
                origin.format.clone(),
                origin.start_time_ns,
                market.is_some(),
                this.core.keeps_events(),
                state,
            ),
        ))
    }

    /// An engine of `definition` holding the pickled `state` (checked as a snapshot is).
    #[staticmethod]
    fn _restore(
        py: Python<'_>,
        definition: &str,
        format: &str,
        #[pyo3(from_py_with = int::<i64>)] start_time_ns: i64,
        market_data: bool,
        keep_events: bool,
        state: &[u8],
    ) -> PyResult<Self> {
        let (mut native, _) = Inner::build(
            py,
            definition,
            format,
            start_time_ns,
            market_data,
            keep_events,
        )?;
        let damaged = |e: SnapshotError| invalid(py, format!("pickled engine state: {e}"));
        let snapshot = Snapshot::from_bytes(state).map_err(damaged)?;
        let engine = snapshot.engine(&native.core.engine).map_err(damaged)?;
        let market = snapshot
            .market(engine.instruments().len())
            .map_err(damaged)?;
        if market.is_some() != market_data {
            return Err(invalid(
                py,
                "pickled engine state: market data does not match",
            ));
        }
        native.core.engine = engine;
        native.core.market = market;
        Ok(native.into())
    }
}
