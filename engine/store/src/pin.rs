//! The configuration pin: a data directory remembers a fingerprint of the configuration its
//! journal was written under, since replaying the journal under another one (other
//! instruments, fees or opening holders) would build another state.

use std::path::Path;

use super::{StoreError, io_error};
use matchbook_core::StateHasher;

/// File holding the fingerprint.
pub const CONFIG_PIN: &str = "config.pin";

/// Records `fingerprint` (any text that changes when the configuration does) in a new
/// directory, or checks it against the one recorded.
pub fn pin_config(dir: &Path, fingerprint: &str) -> Result<(), StoreError> {
    std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    let mut hasher = StateHasher::default();
    hasher.bytes(fingerprint.as_bytes());
    let digest = format!("{:016x}", hasher.finish());
    let path = dir.join(CONFIG_PIN);
    match std::fs::read_to_string(&path) {
        Ok(pinned) if pinned.trim() == digest => Ok(()),
        Ok(_) => Err(StoreError::ConfigChanged(dir.to_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::write(&path, digest).map_err(io_error(&path))
        }
        Err(e) => Err(StoreError::Io { path, source: e }),
    }
}
