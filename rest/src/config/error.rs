//! Why a configuration was refused, and reading an address.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Why a configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// The file could not be read.
    #[error("config {path}: {source}")]
    Read {
        /// File.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// Not valid TOML of this shape.
    #[error("config {path}: {source}")]
    Parse {
        /// File.
        path: PathBuf,
        /// Cause.
        source: Box<toml::de::Error>,
    },
    /// A value that does not fit (address, decimal, type, state).
    #[error("config: {0}")]
    Invalid(String),
    /// Larger than an exchange definition may be (`bounds::MAX_DEFINITION_BYTES`): not read.
    #[error("config {path}: {source}")]
    TooLarge {
        /// File.
        path: PathBuf,
        /// The bound it passes.
        source: matchbook_config::bounds::BoundError,
    },
}

/// A listener address; refused with its text.
pub(super) fn address(text: &str) -> Result<SocketAddr, ConfigFileError> {
    text.parse()
        .map_err(|_| ConfigFileError::Invalid(format!("bad address {text:?}")))
}
