//! Server configuration: the TOML file (`[server]` limits, addresses and data directory,
//! `[[keys]]` as SHA-256 digests, and the exchange definition of `matchbook-config`:
//! reference data, fee groups, holders) and the embedded demo default used when no file is
//! given.

mod error;
mod file;
mod server;
mod settings;

pub use error::ConfigFileError;
pub use file::FileConfig;
pub use matchbook_config::{
    AccountConfig, CurrencyConfig, Exchange, FeeGroupConfig, HolderConfig, InstrumentConfig,
};
pub use server::ServerSection;
pub use settings::{
    DEFAULT_ADMIN_BIND, DEFAULT_BIND, DEFAULT_BUFFER, DEFAULT_HEARTBEAT, DEFAULT_HISTORY_LIMITS,
    DEFAULT_MAX_BOOK_DEPTH, DEFAULT_PUBLIC_RATE_LIMIT, DEFAULT_RATE_LIMIT, DEFAULT_TICKER_INTERVAL,
    KeyConfig, Settings,
};
