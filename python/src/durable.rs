//! Durable engines for Python: `NativeEngine.open` puts an engine on a data directory
//! (journal segments and snapshots, recovered on open, pinned to its definition), after
//! which every command is journalled and committed before the call returns; batches commit
//! once.

use std::path::Path;

use matchbook::journal::SyncPolicy;
use matchbook::market::MarketData;
use matchbook::store::{DurableEngine, StoreOptions, pin_config};
use pyo3::prelude::*;

use crate::engine::NativeEngine;
use crate::errors::{invalid, storage};

impl Drop for NativeEngine {
    /// A durable engine snapshots what was journalled since its last snapshot when it is
    /// collected, so the next open replays nothing (best effort: the journal holds
    /// everything either way).
    fn drop(&mut self) {
        let core = &mut self.core;
        if let Some(durable) = core.durable.as_mut()
            && durable.commands_since_snapshot() > 0
        {
            let _ = durable.snapshot(&core.engine, core.market.as_ref());
        }
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
        start_time_ns: i64,
        market_data: bool,
        keep_events: bool,
        snapshot_every: u64,
        keep_snapshots: usize,
        fsync: bool,
    ) -> PyResult<Self> {
        if keep_snapshots == 0 {
            return Err(invalid(py, "keep_snapshots: at least 1"));
        }
        let (mut native, exchange) = Self::build(
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
        pin_config(dir, &starting_point, &legacy).map_err(|e| storage(py, &e))?;
        let options = StoreOptions {
            sync: if fsync {
                SyncPolicy::EveryBatch
            } else {
                SyncPolicy::Never
            },
            snapshot_every,
            keep_snapshots,
        };
        let core = &mut native.core;
        let (engine, market) = (core.engine.clone(), core.market.take());
        let (durable, engine, market, _) = py
            .detach(|| {
                DurableEngine::open(dir, options, move || {
                    let market = market.unwrap_or_else(|| {
                        MarketData::new(engine.instruments().len(), Default::default())
                    });
                    (engine, market)
                })
            })
            .map_err(|e| storage(py, &e))?;
        core.engine = engine;
        core.market = market_data.then_some(market);
        core.durable = Some(durable);
        Ok(native)
    }

    /// Writes a snapshot now (and prunes what it makes unnecessary); returns its path.
    fn snapshot(&mut self, py: Python<'_>) -> PyResult<String> {
        let core = &mut self.core;
        let durable = core
            .durable
            .as_mut()
            .ok_or_else(|| invalid(py, "engine has no data directory (use Engine.open)"))?;
        durable
            .snapshot(&core.engine, core.market.as_ref())
            .map(|path| path.display().to_string())
            .map_err(|e| storage(py, &e))
    }

    /// The data directory, or None for an engine kept in memory only.
    fn data_dir(&self) -> Option<String> {
        self.core
            .durable
            .as_ref()
            .map(|d| d.dir().display().to_string())
    }
}
