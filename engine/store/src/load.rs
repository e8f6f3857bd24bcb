//! Reading a data directory without writing to it: the state its newest usable snapshot and
//! the journal after it hold, for a copy to study or branch from (a notebook or a C program
//! on an exchange's directory), while the engine that owns the directory may still run.
//! Nothing is created, locked, cut off or re-pinned.

use std::path::Path;

use serde::Serialize;

use crate::journal::read_journal;
use crate::{RecoveryReport, Resumed, StoreError, check_pin, no_start, resume};
use matchbook_core::Engine;
use matchbook_market::MarketData;

/// The state a data directory holds, read into memory.
#[derive(Debug)]
pub struct Loaded {
    /// The engine as the journalled commands left it.
    pub engine: Engine,
    /// Market data as those commands' events built it.
    pub market: MarketData,
    /// What was read: the snapshot, the records replayed after it, snapshots skipped, and
    /// in `truncated` the bytes of a record still being written, left out (not cut off).
    pub report: RecoveryReport,
}

/// Reads the state of the data directory `dir`, pinned to `pinned_to` (the configuration
/// the engine `fresh()` builds), changing nothing in it: the newest snapshot that loads and
/// checks, then every intact journal record after it. The engine that owns the directory
/// may be running: a record it is writing is left out; a snapshot or segment it prunes
/// meanwhile makes this fail (with the file), and a second call then reads the newer ones.
pub fn load<T: Serialize + ?Sized>(
    dir: &Path,
    pinned_to: &T,
    fresh: impl FnOnce() -> (Engine, MarketData),
) -> Result<Loaded, StoreError> {
    check_pin(dir, pinned_to)?;
    let mut resumed = resume(dir, fresh)?;
    let recovered =
        read_journal(dir, resumed.after).map_err(|e| no_start(e, &mut resumed.report))?;
    resumed.replay(&recovered);
    let Resumed {
        engine,
        market,
        report,
        ..
    } = resumed;
    Ok(Loaded {
        engine,
        market,
        report,
    })
}

#[cfg(test)]
mod tests;
