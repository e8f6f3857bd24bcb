//! Durable engines for Python: `NativeEngine.open` puts an engine on a data directory
//! (journal segments and snapshots, recovered on open, pinned to its definition), after
//! which every command is journalled and committed before the call returns; batches commit
//! once. `NativeEngine.load` reads a server's data directory into an engine in memory.

use std::path::Path;

use matchbook::journal::SyncPolicy;
use matchbook::store::StoreOptions;
use pyo3::prelude::*;

use crate::engine::Core;
use crate::engine::{Inner, NativeEngine};
use crate::errors::{invalid, recorded, storage};
use crate::ints::int;

/// How a data directory is kept, from the keyword arguments every durable host takes.
pub(crate) fn store_options(
    snapshot_every: u64,
    keep_snapshots: usize,
    fsync: bool,
) -> StoreOptions {
    StoreOptions {
        sync: if fsync {
            SyncPolicy::EveryBatch
        } else {
            SyncPolicy::Never
        },
        snapshot_every,
        keep_snapshots,
    }
}

#[pymethods]
impl NativeEngine {
    /// An engine on the data directory `path`: a new directory starts from the definition
    /// (holders provisioned at `start_time_ns`), an existing one is recovered and must have
    /// been written under the same definition, start time and market-data choice.
    #[staticmethod]
    #[pyo3(signature = (path, definition, format = "toml", start_time_ns = 0, market_data = true, keep_events = true, snapshot_every = 100_000, keep_snapshots = 2, fsync = true))]
    #[allow(
        clippy::too_many_arguments,
        reason = "keyword arguments of one Python call"
    )]
    fn open(
        py: Python<'_>,
        path: &str,
        definition: &str,
        format: &str,
        #[pyo3(from_py_with = int::<i64>)] start_time_ns: i64,
        market_data: bool,
        keep_events: bool,
        #[pyo3(from_py_with = int::<u64>)] snapshot_every: u64,
        #[pyo3(from_py_with = int::<usize>)] keep_snapshots: usize,
        fsync: bool,
    ) -> PyResult<Self> {
        if keep_snapshots == 0 {
            return Err(invalid(py, "keep_snapshots: at least 1"));
        }
        let (mut native, exchange) = Inner::build(
            py,
            definition,
            format,
            start_time_ns,
            market_data,
            keep_events,
        )?;
        let dir = Path::new(path);
        let starting_point = exchange.starting_point(start_time_ns, market_data);
        let legacy = exchange.fingerprint(start_time_ns, market_data);
        let options = store_options(snapshot_every, keep_snapshots, fsync);
        let core = &mut native.core;
        py.detach(|| core.open_on(dir, options, &starting_point, &legacy))
            .map_err(|e| storage(py, &e))?;
        Ok(native.into())
    }

    /// An engine in memory holding the state of the server data directory `path` (its
    /// newest snapshot and journal, under the definition the server recorded there), read
    /// without writing to it: the server may be running. Holders and accounts keep the
    /// names of the definition.
    #[staticmethod]
    #[pyo3(signature = (path, market_data = true, keep_events = true))]
    fn load(py: Python<'_>, path: &str, market_data: bool, keep_events: bool) -> PyResult<Self> {
        let dir = Path::new(path);
        let read = py
            .detach(|| matchbook::recorded::load_recorded(dir))
            .map_err(|e| recorded(py, &e))?;
        // Built, then given the state read: the holders provisioned here name the accounts
        // the server provisioned the same way when the directory was new.
        let (mut native, _) =
            Inner::build(py, &read.definition, "json", 0, market_data, keep_events)?;
        let market = market_data.then_some(read.loaded.market);
        native.core = Core::in_memory(read.loaded.engine, market, keep_events);
        Ok(native.into())
    }

    /// Writes a snapshot now (and prunes what it makes unnecessary); returns its path.
    fn snapshot(&self, py: Python<'_>) -> PyResult<String> {
        let mut this = self.lock(py)?;
        let snapshot = this
            .core
            .snapshot()
            .ok_or_else(|| invalid(py, "engine has no data directory (use Engine.open)"))?;
        snapshot
            .map(|path| path.display().to_string())
            .map_err(|e| storage(py, &e))
    }

    /// The data directory, or None for an engine kept in memory only.
    fn data_dir(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let guard = self.lock(py)?;
        Ok(guard.core.data_dir().map(|d| d.display().to_string()))
    }

    /// An independent engine in memory with this one's state now (a durable engine's copy
    /// is not durable; no events wait in it).
    fn copy(&self, py: Python<'_>) -> PyResult<Self> {
        let this = self.lock(py)?;
        this.engine(py)?;
        let copy = Inner {
            core: this.core.copy_in_memory(),
            reference: this.reference.clone(),
            directory: this.directory.clone(),
            origin: this.origin.clone(),
        };
        Ok(copy.into())
    }

    /// Whether the engine keeps market data (history, candles, tickers).
    fn has_market_data(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.lock(py)?.core.market.is_some())
    }

    /// Snapshots a durable engine and releases its data directory (nothing for one in
    /// memory).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let mut this = self.lock(py)?;
        this.core.close().map_err(|e| storage(py, &e))
    }
}
