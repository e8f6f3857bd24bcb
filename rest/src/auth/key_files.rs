//! What the key files share (the key file, the revoked keys' file, the JSON-lines
//! appends): their error, whole-text reads and atomic writes, digests in hex, and the
//! store's locks taken even if poisoned.

use std::path::{Path, PathBuf};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use matchbook::store::write_file_atomically;

/// Why the key file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    /// Reading or writing failed.
    #[error("key file {path}: {source}")]
    Io {
        /// File.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The file is not a list of key records.
    #[error(
        "key file {path} is damaged ({source}); the server will not start without its keys: \
         restore the file from a backup, or move it away to start with no API keys and issue \
         new ones through the admin listener"
    )]
    Format {
        /// File.
        path: PathBuf,
        /// Cause.
        source: serde_json::Error,
    },
    /// A digest that is not 64 hex digits.
    #[error("key digest {0:?} is not 64 hex digits")]
    BadDigest(String),
    /// The revoked keys' file is not a list of digests.
    #[error(
        "revoked keys file {path} is damaged ({reason}); the server will not start without \
         it, since the keys it names would be accepted again: restore it from a backup"
    )]
    RevokedDamaged {
        /// File.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// `bytes` as lowercase hex digits, two a byte.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The `N` bytes `text` spells in hex digits (exactly `2 * N` of them).
pub(crate) fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// `lock` read even if poisoned: no code panics while holding the store's locks, so what
/// they guard is always whole, and giving up would drop keys or lift rate limits.
pub(crate) fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

/// `lock` written even if poisoned (see [`read`]).
pub(crate) fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

/// The text of a key file.
pub(crate) fn read_text(path: &Path) -> Result<String, KeyFileError> {
    std::fs::read_to_string(path).map_err(|source| KeyFileError::Io {
        path: path.to_owned(),
        source,
    })
}

/// Writes `text` to a temporary file, then renames it over `path`.
pub(crate) fn write_text_atomically(path: &Path, text: &str) -> Result<(), KeyFileError> {
    write_file_atomically(path, text.as_bytes()).map_err(|source| KeyFileError::Io {
        path: path.to_owned(),
        source,
    })
}
