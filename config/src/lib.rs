//! # matchbook-config
//!
//! One exchange definition (currencies, instruments, fee groups, holders with their accounts
//! and opening balances) read from TOML or JSON and turned into an [`EngineConfig`] plus the
//! commands that provision the holders. The REST server embeds it in its file; the C and
//! Python bindings take it as a string or build it field by field.
//!
//! ```
//! let exchange = matchbook_config::Exchange::from_toml(r#"
//!     [[holders]]
//!     name = "alice"
//!     [[holders.accounts]]
//!     name = "main"
//!     deposits = { EUR = "1000" }
//! "#).expect("valid");
//! let config = exchange.engine_config().expect("demo markets");
//! assert!(config.instruments.iter().any(|i| i.code == "BTC_EUR"));
//! ```

#![warn(clippy::too_many_lines)]

pub mod bounds;
mod build;
pub mod demo;
pub mod file;
mod provision;

pub use file::{
    AccountConfig, CurrencyConfig, FeeGroupConfig, FeeTierConfig, FuturesConfig, HolderConfig,
    InstrumentConfig,
};
pub use provision::{Directory, HolderEntry, ProvisionError, provision, provision_engine};

use matchbook_core::EngineConfig;
use serde::{Deserialize, Serialize};

/// File in a server's data directory recording the definition its configuration was built
/// from (JSON of [`Exchange`]), for programs that read the directory later (Python's
/// `Engine.load`, C's `mb_engine_load`) to build that configuration again.
pub const RECORDED_DEFINITION: &str = "config.exchange.json";

/// Why a definition was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DefinitionError {
    /// Not valid TOML or JSON of this shape (unknown keys are refused).
    #[error("{0}")]
    Syntax(String),
    /// A value that does not fit (decimal, type, state, account kind).
    #[error("{0}")]
    Invalid(String),
    /// Larger than [`bounds::MAX_DEFINITION_BYTES`], or JSON nested deeper than
    /// [`bounds::MAX_NESTING`]: refused before it is parsed.
    #[error("definition refused unread: {0}")]
    Bound(#[from] bounds::BoundError),
}

/// An exchange definition. Empty reference-data sections take the embedded demo set.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Exchange {
    /// Currencies (empty: the demo set).
    #[serde(default)]
    pub currencies: Vec<CurrencyConfig>,
    /// Instruments (empty: the demo set).
    #[serde(default)]
    pub instruments: Vec<InstrumentConfig>,
    /// Fee groups (empty: the default schedule).
    #[serde(default)]
    pub fee_groups: Vec<FeeGroupConfig>,
    /// Holders created at start, in order (the n-th is holder n).
    #[serde(default)]
    pub holders: Vec<HolderConfig>,
    /// Open orders allowed per holder (default: the engine's).
    #[serde(default)]
    pub max_open_orders: Option<u32>,
}

impl Exchange {
    /// Parses a TOML definition. Its size is bounded here; its nesting by the TOML parser,
    /// which refuses inline arrays, inline tables and dotted keys past its own depth
    /// limit without recursing further (checked by this crate's tests).
    pub fn from_toml(text: &str) -> Result<Self, DefinitionError> {
        bounds::check_size(text.len(), bounds::MAX_DEFINITION_BYTES)?;
        toml::from_str(text).map_err(|e| DefinitionError::Syntax(e.to_string()))
    }

    /// Parses a JSON definition (the same keys as TOML), within [`bounds`].
    pub fn from_json(text: &str) -> Result<Self, DefinitionError> {
        bounds::check_json(text.as_bytes(), bounds::MAX_DEFINITION_BYTES)?;
        serde_json::from_str(text).map_err(|e| DefinitionError::Syntax(e.to_string()))
    }

    /// The engine configuration: given sections replace the demo defaults.
    pub fn engine_config(&self) -> Result<EngineConfig, DefinitionError> {
        build::engine_config(self)
    }

    /// What the state a durable engine starts from depends on: the definition, the time its
    /// holders are provisioned at, and whether market data is kept. A data directory is
    /// pinned to its canonical encoding (`matchbook_store::pin_config`), so the C and
    /// Python bindings open each other's directories and refuse another definition.
    pub fn starting_point(&self, start_time_ns: i64, market_data: bool) -> StartingPoint<'_> {
        StartingPoint {
            exchange: self,
            start_time_ns,
            market_data,
        }
    }

    /// The `Debug` text the first pin format hashed (directories pinned by it still open,
    /// and are re-pinned).
    pub fn fingerprint(&self, start_time_ns: i64, market_data: bool) -> String {
        format!("{self:?} start={start_time_ns} market_data={market_data}")
    }
}

/// See [`Exchange::starting_point`].
#[derive(Debug, Clone, Copy, Serialize)]
pub struct StartingPoint<'a> {
    /// The definition.
    pub exchange: &'a Exchange,
    /// When its holders are provisioned.
    pub start_time_ns: i64,
    /// Whether market data is kept.
    pub market_data: bool,
}
