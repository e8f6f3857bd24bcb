//! A server's data directory read into memory, as a notebook or a C program studies the
//! exchange (or a copy of its directory): the definition the server recorded there
//! ([`matchbook_config::RECORDED_DEFINITION`]), checked against the directory's pin, and
//! the state its snapshots and journal hold, read without writing anything, so the server
//! may still be running.

use std::path::{Path, PathBuf};

use matchbook_config::{DefinitionError, Exchange, RECORDED_DEFINITION};
use matchbook_core::{ConfigError, Engine};
use matchbook_market::{MarketData, MarketDataConfig};
use matchbook_store::{CONFIG_PIN, Loaded, StoreError};

/// Why a server's data directory could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordedError {
    /// The directory is a data directory without a recorded definition (written by the C
    /// or Python bindings, or by a server of an earlier version that has not started on it
    /// since).
    #[error(
        "{0} records no exchange definition ({RECORDED_DEFINITION}): a matchbook-rest \
         server writes it when it starts on the directory; directories of the C and Python \
         bindings are opened with their definition instead"
    )]
    NoDefinition(PathBuf),
    /// The recorded definition is unreadable or builds no valid configuration.
    #[error("{path}: {reason}")]
    Definition {
        /// The definition file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The directory's state could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a server's data directory holds.
#[derive(Debug)]
pub struct Recorded {
    /// The definition the server's configuration was built from.
    pub exchange: Exchange,
    /// Its text, as recorded (JSON).
    pub definition: String,
    /// The state: engine, market data, and what was read.
    pub loaded: Loaded,
}

/// Reads the server data directory `dir` (see the module docs); changes nothing in it.
pub fn load_recorded(dir: &Path) -> Result<Recorded, RecordedError> {
    let path = dir.join(RECORDED_DEFINITION);
    let definition = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(if dir.join(CONFIG_PIN).exists() {
                RecordedError::NoDefinition(dir.to_owned())
            } else {
                StoreError::NotADataDirectory(dir.to_owned()).into()
            });
        }
        Err(source) => return Err(StoreError::Io { path, source }.into()),
    };
    let invalid = |reason: String| RecordedError::Definition {
        path: path.clone(),
        reason,
    };
    let exchange = Exchange::from_json(&definition).map_err(|e| invalid(e.to_string()))?;
    let config = exchange
        .engine_config()
        .map_err(|e: DefinitionError| invalid(e.to_string()))?;
    let engine = Engine::new(config.clone()).map_err(|e: ConfigError| invalid(e.to_string()))?;
    let market = MarketData::new(engine.instruments().len(), MarketDataConfig::default());
    let loaded = matchbook_store::load(dir, &config, move || (engine, market))?;
    Ok(Recorded {
        exchange,
        definition,
        loaded,
    })
}
