//! Digests of revoked API keys, kept in a file beside the key file: a revocation outlives
//! a restart, for a key the configuration still declares too, and a revoked key is told
//! apart from an unknown one (401 `APIKEY_REVOKED`, the public exchange's code).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::RwLock;

use crate::keys::{KeyFileError, hex, read, read_text, unhex, write, write_atomically};

/// Name of the revoked keys' file, beside the key file (`keys.` files are the data
/// directory's own: `--keys-out` may not name one).
pub const REVOKED_KEYS: &str = "keys.revoked.json";

/// The digests of revoked keys, and the file that keeps them (none: in memory only).
#[derive(Debug, Default)]
pub(crate) struct RevokedKeys {
    digests: RwLock<HashSet<[u8; 32]>>,
    file: Option<PathBuf>,
}

impl RevokedKeys {
    /// The digests `file` holds (none when it does not exist yet).
    pub(crate) fn open(file: Option<PathBuf>) -> Result<Self, KeyFileError> {
        let mut digests = HashSet::new();
        if let Some(path) = file.as_ref().filter(|path| path.exists()) {
            let text = read_text(path)?;
            let damaged = |reason: String| KeyFileError::RevokedDamaged {
                path: path.clone(),
                reason,
            };
            let listed: Vec<String> =
                serde_json::from_str(&text).map_err(|e| damaged(e.to_string()))?;
            for digest in listed {
                let bytes = unhex(&digest).ok_or_else(|| damaged(format!("{digest:?}")))?;
                digests.insert(bytes);
            }
        }
        Ok(Self {
            digests: RwLock::new(digests),
            file,
        })
    }

    /// Whether the key with `digest` was revoked.
    pub(crate) fn contains(&self, digest: &[u8; 32]) -> bool {
        read(&self.digests).contains(digest)
    }

    /// Records `digest` as revoked, in the file first: if that write fails, nothing
    /// changed. Recording it again changes nothing.
    pub(crate) fn add(&self, digest: [u8; 32]) -> Result<(), KeyFileError> {
        let mut digests = write(&self.digests);
        if digests.contains(&digest) {
            return Ok(());
        }
        if let Some(path) = &self.file {
            let mut listed: Vec<String> = digests.iter().map(|d| hex(d)).collect();
            listed.push(hex(&digest));
            listed.sort();
            write_atomically(path, &listed)?;
        }
        digests.insert(digest);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revocations_survive_a_reopen_and_a_failed_write_records_nothing() {
        let dir = std::env::temp_dir().join(format!("mb-revoked-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join(REVOKED_KEYS);
        let revoked = RevokedKeys::open(Some(file.clone())).expect("open");
        revoked.add([7; 32]).expect("recorded");
        revoked.add([7; 32]).expect("again");
        std::fs::create_dir(dir.join(format!("{REVOKED_KEYS}.tmp"))).expect("in the way");
        assert!(revoked.add([9; 32]).is_err());
        assert!(revoked.contains(&[7; 32]) && !revoked.contains(&[9; 32]));
        let reopened = RevokedKeys::open(Some(file.clone())).expect("reopen");
        assert!(reopened.contains(&[7; 32]) && !reopened.contains(&[9; 32]));
        std::fs::write(&file, "[\"abc\"]").expect("damaged");
        assert!(matches!(
            RevokedKeys::open(Some(file)),
            Err(KeyFileError::RevokedDamaged { .. })
        ));
        let _ = std::fs::remove_dir_all(dir);
    }
}
