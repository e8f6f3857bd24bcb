//! Digests of revoked API keys, kept in a file beside the key file: a revocation outlives
//! a restart, for a key the configuration still declares too, and a revoked key is told
//! apart from an unknown one (401 `APIKEY_REVOKED`, the public exchange's code). The file
//! holds one digest a line ([`crate::auth::json_lines`]): a revocation is one append.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::RwLock;

use crate::auth::json_lines;
use crate::auth::key_files::{KeyFileError, hex, read, unhex, write};

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
        if let Some(path) = &file {
            let damaged = |reason: String| KeyFileError::RevokedDamaged {
                path: path.clone(),
                reason,
            };
            let listed: Vec<String> = json_lines::load(path).map_err(|e| match e {
                KeyFileError::Format { source, .. } => damaged(source.to_string()),
                other => other,
            })?;
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

    /// Records `digest` as revoked, in the file first: if that append fails, nothing
    /// changed. Recording it again changes nothing.
    pub(crate) fn add(&self, digest: [u8; 32]) -> Result<(), KeyFileError> {
        let mut digests = write(&self.digests);
        if digests.contains(&digest) {
            return Ok(());
        }
        if let Some(path) = &self.file {
            let every = || digests.iter().chain([&digest]).map(|d| hex(d)).collect();
            json_lines::append(path, &[hex(&digest)], every)?;
        }
        digests.insert(digest);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::keys::tests::scratch_dir;

    fn scratch(name: &str) -> PathBuf {
        scratch_dir(&format!("revoked-{name}")).join(REVOKED_KEYS)
    }

    #[test]
    fn revocations_survive_a_reopen_and_a_failed_write_records_nothing() {
        let file = scratch("reopen");
        let revoked = RevokedKeys::open(Some(file.clone())).expect("open");
        // A directory stands where the file goes: the first append fails.
        std::fs::create_dir(&file).expect("in the way");
        assert!(revoked.add([9; 32]).is_err());
        assert!(!revoked.contains(&[9; 32]));
        std::fs::remove_dir(&file).expect("cleared");
        revoked.add([7; 32]).expect("recorded");
        revoked.add([7; 32]).expect("again");
        let lines = std::fs::read_to_string(&file).expect("read");
        assert_eq!(lines.lines().count(), 1, "{lines}");
        let reopened = RevokedKeys::open(Some(file.clone())).expect("reopen");
        assert!(reopened.contains(&[7; 32]) && !reopened.contains(&[9; 32]));
        for damage in ["\"abc\"\n", "[\"abc\"]", "{}\n"] {
            std::fs::write(&file, damage).expect("damaged");
            let refused = RevokedKeys::open(Some(file.clone()));
            assert!(
                matches!(refused, Err(KeyFileError::RevokedDamaged { .. })),
                "{damage}: {refused:?}"
            );
        }
        let _ = std::fs::remove_dir_all(file.parent().expect("dir"));
    }

    /// The list an earlier release wrote is read and rewritten as lines, so that later
    /// revocations append to it; a line cut short by a crash is dropped.
    #[test]
    fn a_list_of_an_earlier_release_is_read_and_a_torn_line_dropped() {
        let file = scratch("list");
        let listed = vec![hex(&[1; 32]), hex(&[2; 32])];
        std::fs::write(&file, serde_json::to_string_pretty(&listed).expect("json")).expect("list");
        let revoked = RevokedKeys::open(Some(file.clone())).expect("open");
        assert!(revoked.contains(&[1; 32]) && revoked.contains(&[2; 32]));
        revoked.add([3; 32]).expect("appended");
        let text = std::fs::read_to_string(&file).expect("read");
        assert_eq!(text.lines().count(), 3, "{text}");
        std::fs::write(&file, format!("{text}\"{}", &hex(&[4; 32])[..10])).expect("torn");
        let reopened = RevokedKeys::open(Some(file.clone())).expect("reopen");
        assert!(reopened.contains(&[3; 32]) && !reopened.contains(&[4; 32]));
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            text,
            "repaired"
        );
        let _ = std::fs::remove_dir_all(file.parent().expect("dir"));
    }
}
