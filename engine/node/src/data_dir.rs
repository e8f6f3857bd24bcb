//! A node's data directory: made, pinned to the engine configuration (refusing one written
//! under another), its definition recorded for readers, and its state recovered: from the
//! newest snapshot and the local journal, or, on a replicated log, from the newest
//! snapshot alone (the group's log supplies the rest).

use std::path::Path;
use std::sync::Arc;

use matchbook::market::MarketData;
use matchbook::runtime::{Clock, OffsetClock};
use matchbook::store::journal::{CommandLog, Recovered};
use matchbook::store::{self, Recovery, RecoveryReport, StoreOptions};
use matchbook::{Engine, EngineConfig};
use matchbook_config::Exchange;

use crate::NodeError;

/// The recovered state and its log: the local journal, or `None` on a replicated log (the
/// node follows the group's log until it leads).
pub(crate) type StartState = Recovery<Option<Box<dyn CommandLog>>>;

/// What the directory is pinned to and records.
pub(crate) struct Pinning<'a> {
    pub(crate) engine: &'a EngineConfig,
    pub(crate) definition: &'a Exchange,
    /// A file written beside the pin at the directory's first use (name, text), such as
    /// the server's copy of its configuration file.
    pub(crate) copy: Option<&'a (String, String)>,
}

/// Makes `dir` (a file of its name, no permission: [`NodeError::DataDir`]).
pub(crate) fn make(dir: &Path) -> Result<(), NodeError> {
    std::fs::create_dir_all(dir).map_err(|source| NodeError::DataDir {
        path: dir.to_owned(),
        source,
    })
}

/// Refuses a data directory whose journal was written under another engine configuration
/// (replaying it would give another state); records the configuration, the copy and the
/// definition on first use.
pub(crate) fn pin(dir: &Path, pinning: &Pinning<'_>) -> Result<(), NodeError> {
    let first_use = !dir.join(store::CONFIG_PIN).exists();
    // The copy first, whole or not at all: a crash between the two writes then leaves a
    // directory that is still on its first use, not a pin without the file it pins.
    if first_use && let Some((name, text)) = pinning.copy {
        store::write_file_atomically(&dir.join(name), text.as_bytes())?;
    }
    store::pin_config(dir, pinning.engine, &format!("{:?}", pinning.engine))?;
    record_definition(dir, pinning)
}

/// Records the definition of the pinned configuration beside the pin, once, for readers of
/// the directory (Python's `Engine.load`, C's `mb_engine_load`) to build it again. Not
/// written for a configuration its definition does not build (one an embedding program
/// changed in code): a reader would build another.
fn record_definition(dir: &Path, pinning: &Pinning<'_>) -> Result<(), NodeError> {
    let path = dir.join(matchbook_config::RECORDED_DEFINITION);
    if path.exists() {
        return Ok(());
    }
    let Ok(built) = pinning.definition.engine_config() else {
        return Ok(());
    };
    if store::pin_of(&built)? != store::pin_of(pinning.engine)? {
        return Ok(());
    }
    let text = serde_json::to_string_pretty(pinning.definition)
        .map_err(|e| NodeError::Io(std::io::Error::other(e)))?;
    store::write_file_atomically(&path, text.as_bytes())?;
    Ok(())
}

/// Recovers the state in `dir`: from the newest snapshot and the local journal, or, when
/// `replicated`, from the newest snapshot alone. What was skipped or cut off is logged.
pub(crate) fn recover(
    dir: &Path,
    options: StoreOptions,
    replicated: bool,
    fresh: impl FnOnce() -> (Engine, MarketData),
) -> Result<StartState, NodeError> {
    let started = std::time::Instant::now();
    let recovered = if replicated {
        let none = |_| {
            let log: Option<Box<dyn CommandLog>> = None;
            let rest = Recovered {
                entries: Vec::new(),
                truncated: 0,
            };
            Ok((log, rest))
        };
        store::recover_with(dir, fresh, none)?
    } else {
        let r = store::recover(dir, options, fresh)?;
        Recovery {
            engine: r.engine,
            market: r.market,
            journal: Some(Box::new(r.journal) as Box<dyn CommandLog>),
            report: r.report,
            lock: r.lock,
            check: r.check,
        }
    };
    log_recovery(&recovered.report, started);
    Ok(recovered)
}

fn log_recovery(report: &RecoveryReport, started: std::time::Instant) {
    for (path, reason) in &report.skipped_snapshots {
        tracing::warn!(path = %path.display(), reason, "snapshot skipped");
    }
    if report.truncated > 0 {
        tracing::warn!(
            bytes = report.truncated,
            "journal ended in a torn record; it was cut off"
        );
    }
    if report.resumed() {
        tracing::info!(
            snapshot = report.snapshot_seq,
            replayed = report.replayed,
            millis = started.elapsed().as_millis() as u64,
            "state recovered from the data directory"
        );
    }
}

/// The node's clock, never behind the journal: an operator's clock advance survives a
/// restart.
pub(crate) fn clock_not_behind(engine: &Engine) -> Arc<OffsetClock> {
    let clock = Arc::new(OffsetClock::default());
    let behind = engine.now().0 - clock.now().0;
    if behind > 0 {
        // The journal's times are inside the horizon, so this advance is too.
        let _ = clock.advance(behind);
    }
    clock
}
