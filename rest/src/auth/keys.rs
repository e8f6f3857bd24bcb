//! API keys: generated at random, stored and persisted only as SHA-256 digests with their
//! holder, account and scopes, compared in constant time, and revoked at once. A key
//! added is appended to the key file in the data directory (`json_lines`), which the next
//! start rewrites without the keys revoked since; keys the configuration file declares
//! live there, never in the key file. Revoked keys' digests are kept apart, each appended
//! ([`crate::auth::revoked_keys`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use matchbook::{AccountId, HolderId};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::auth::json_lines;
pub use crate::auth::key_files::KeyFileError;
use crate::auth::key_files::{hex, read, unhex, write};
use crate::auth::revoked_keys::{REVOKED_KEYS, RevokedKeys};
use crate::net::ratelimit::RateWindow;

/// What a key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Scope {
    /// Create and cancel orders.
    Trade,
    /// Move funds between the holder's accounts.
    SubaccountTransfer,
    /// Read only (any valid key can read).
    ReadOnly,
    /// Web-interface holder permission (accepted for transfers).
    UiHolder,
    /// Web-interface account permission (accepted for transfers).
    UiAccount,
    /// The admin listener's operations; never granted together with trading scopes.
    Admin,
}

/// A key as persisted and configured: its digest and what it is bound to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// Lower-case hex SHA-256 of the key text.
    pub digest: String,
    /// Holder index.
    pub holder: u32,
    /// Account index the key acts on.
    pub account: u32,
    /// Scopes.
    pub scopes: Vec<Scope>,
}

impl KeyRecord {
    /// A new random key for `account` with `scopes`, and its record (the digest only).
    pub fn generate(
        holder: HolderId,
        account: AccountId,
        scopes: Vec<Scope>,
    ) -> Result<(String, Self), KeyFileError> {
        let key = generate_key().map_err(|e| KeyFileError::Io {
            path: PathBuf::from("getrandom"),
            source: std::io::Error::other(e.to_string()),
        })?;
        let record = KeyRecord {
            digest: hex(&digest_of(&key)),
            holder: holder.0,
            account: account.0,
            scopes,
        };
        Ok((key, record))
    }
}

/// A key the server accepts.
#[derive(Debug)]
pub struct ApiKey {
    digest: [u8; 32],
    /// Holder.
    pub holder: HolderId,
    /// Account it acts on.
    pub account: AccountId,
    /// Scopes.
    pub scopes: Vec<Scope>,
    /// Its rate window.
    pub limiter: RateWindow,
    /// Set when the key is revoked: what authenticated with it before (a stream session)
    /// stops acting with it.
    revoked: AtomicBool,
}

impl ApiKey {
    /// The key of `record`, by its digest.
    fn of(record: &KeyRecord) -> Result<([u8; 32], Arc<Self>), KeyFileError> {
        let digest =
            unhex(&record.digest).ok_or_else(|| KeyFileError::BadDigest(record.digest.clone()))?;
        let key = Self {
            digest,
            holder: HolderId(record.holder),
            account: AccountId(record.account),
            scopes: record.scopes.clone(),
            limiter: RateWindow::default(),
            revoked: AtomicBool::new(false),
        };
        Ok((digest, Arc::new(key)))
    }

    /// Whether the key carries any of `wanted`.
    pub fn has_any(&self, wanted: &[Scope]) -> bool {
        self.scopes.iter().any(|s| wanted.contains(s))
    }

    /// Whether the key was revoked since it authenticated.
    pub fn is_revoked(&self) -> bool {
        self.revoked.load(Ordering::Acquire)
    }
}

/// Why a key was not revoked.
#[derive(Debug, thiserror::Error)]
pub enum RevokeError {
    /// No key has the digest.
    #[error("no key has that digest")]
    NotFound,
    /// It is the last `ADMIN` key: revoking it would leave nobody able to use the admin
    /// listener (issue another one first).
    #[error("the last ADMIN key is not revoked")]
    LastAdminKey,
    /// The key file could not be written; nothing changed.
    #[error(transparent)]
    File(#[from] KeyFileError),
}

/// A key just revoked.
#[derive(Debug)]
pub struct Revoked {
    /// The key as it was.
    pub key: Arc<ApiKey>,
    /// Whether the configuration file declares it (it stays revoked; the file should no
    /// longer declare it).
    pub configured: bool,
}

/// The accepted keys and the per-holder rate windows.
#[derive(Debug, Default)]
pub struct KeyStore {
    keys: RwLock<HashMap<[u8; 32], Arc<ApiKey>>>,
    /// What the key file holds: keys issued through the admin listener.
    records: RwLock<Vec<KeyRecord>>,
    /// Digests of the keys the configuration declares (not written to the key file).
    configured: RwLock<HashSet<[u8; 32]>>,
    holder_limits: RwLock<HashMap<HolderId, Arc<RateWindow>>>,
    file: Option<PathBuf>,
    /// Keys revoked: never accepted again, from the key file, the configuration or the
    /// group.
    revoked: RevokedKeys,
}

/// SHA-256 of a key text.
pub fn digest_of(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// A fresh random key text: `mb_` and 48 hex digits (192 bits).
pub fn generate_key() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes)?;
    Ok(format!("mb_{}", hex(&bytes)))
}

impl KeyStore {
    /// A store persisted to `file` (when given), loaded with what it already holds.
    pub fn open(file: Option<PathBuf>) -> Result<Self, KeyFileError> {
        let revoked = file.as_ref().map(|f| f.with_file_name(REVOKED_KEYS));
        let store = Self {
            file,
            revoked: RevokedKeys::open(revoked)?,
            ..Self::default()
        };
        if let Some(path) = &store.file {
            let loaded = json_lines::load(path)?;
            let lines = loaded.len();
            store.insert_all(loaded, false)?;
            store.compact(path, lines);
        }
        Ok(store)
    }

    /// Writes the key file without the revoked keys it still holds (a revocation does not
    /// rewrite it: `lines` were read, fewer kept). A failure only leaves them in the file,
    /// where they are refused all the same.
    fn compact(&self, path: &Path, lines: usize) {
        let stored = read(&self.records);
        if stored.len() == lines {
            return;
        }
        if let Err(problem) = json_lines::rewrite(path, &stored) {
            tracing::warn!(%problem, "revoked keys stay in the key file until its next write");
        }
    }

    /// Whether the store holds no key (a first start).
    pub fn is_empty(&self) -> bool {
        read(&self.records).is_empty() && read(&self.configured).is_empty()
    }

    /// Accepts the keys a configuration file declares. They are not written to the key
    /// file, so one taken out of the configuration is refused from the next start on. A
    /// revoked one stays refused: its digest is returned.
    pub fn insert_configured(&self, records: &[KeyRecord]) -> Result<Vec<String>, KeyFileError> {
        let mut keys = (records.iter())
            .map(ApiKey::of)
            .collect::<Result<Vec<_>, KeyFileError>>()?;
        // Keys change, and are revoked, under the records' lock (see `revoke`).
        let _writing = write(&self.records);
        let mut refused = Vec::new();
        keys.retain(|(digest, _)| {
            let revoked = self.revoked.contains(digest);
            if revoked {
                refused.push(hex(digest));
            }
            !revoked
        });
        write(&self.configured).extend(keys.iter().map(|(digest, _)| *digest));
        write(&self.keys).extend(keys);
        Ok(refused)
    }

    /// Adds a key; with `persist`, the key file is written first, and a key it could not
    /// take is not kept.
    pub fn insert(&self, record: KeyRecord, persist: bool) -> Result<(), KeyFileError> {
        self.insert_all(vec![record], persist)
    }

    /// Adds keys together (but revoked ones): with `persist`, one write of the key file
    /// holds them all first, so either every one is kept or none is. The file is written
    /// under the records' lock, so two keys created at once cannot write their lists in
    /// the other order and drop one.
    pub fn insert_all(&self, records: Vec<KeyRecord>, persist: bool) -> Result<(), KeyFileError> {
        let parsed = (records.into_iter())
            .map(|record| ApiKey::of(&record).map(|key| (record, key)))
            .collect::<Result<Vec<_>, KeyFileError>>()?;
        // Checked under the lock a revocation holds: a key revoked meanwhile is not added.
        let mut stored = write(&self.records);
        let (kept, keys): (Vec<KeyRecord>, Vec<_>) = (parsed.into_iter())
            .filter(|(_, (digest, _))| !self.revoked.contains(digest))
            .unzip();
        if let (Some(path), true) = (&self.file, persist) {
            json_lines::append(path, &kept, || {
                stored.iter().chain(&kept).cloned().collect()
            })?;
        }
        stored.extend(kept);
        drop(stored);
        write(&self.keys).extend(keys);
        Ok(())
    }

    /// Creates and stores a new key for `account` with `scopes`; its text and its record.
    pub fn create(
        &self,
        holder: HolderId,
        account: AccountId,
        scopes: Vec<Scope>,
    ) -> Result<(String, KeyRecord), KeyFileError> {
        let (key, record) = KeyRecord::generate(holder, account, scopes)?;
        self.insert(record.clone(), true)?;
        Ok((key, record))
    }

    /// The key with `digest` as [`KeyStore::revoke`] would revoke it, changing nothing:
    /// `NotFound`, or `LastAdminKey` for the last `ADMIN` key.
    pub fn revocable(&self, digest: &[u8; 32]) -> Result<Revoked, RevokeError> {
        let keys = read(&self.keys);
        let key = keys.get(digest).cloned().ok_or(RevokeError::NotFound)?;
        let admin = |k: &ApiKey| k.has_any(&[Scope::Admin]);
        if admin(&key) && keys.values().filter(|k| admin(k)).count() == 1 {
            return Err(RevokeError::LastAdminKey);
        }
        let configured = read(&self.configured).contains(digest);
        Ok(Revoked { key, configured })
    }

    /// Revokes the key with `digest`: its digest is appended to the revoked keys' file
    /// first (if that fails, nothing changed), then the key is refused at once, by every
    /// request and by the stream sessions it authenticated. The key file keeps its line
    /// until the next start, which reads it without the key and rewrites it: a revocation
    /// costs one append, whatever the number of keys.
    pub fn revoke(&self, digest: &[u8; 32]) -> Result<Revoked, RevokeError> {
        // Keys change only under the records' lock: the count of admin keys holds.
        let mut stored = write(&self.records);
        let revoked = self.revocable(digest)?;
        self.revoked.add(*digest)?;
        // Compared as text: decoding every record's digest cost more than the append.
        let text = hex(digest);
        stored.retain(|r| !r.digest.eq_ignore_ascii_case(&text));
        write(&self.keys).remove(digest);
        revoked.key.revoked.store(true, Ordering::Release);
        Ok(revoked)
    }

    /// The records of the key file (the keys issued through the admin listener).
    pub fn records(&self) -> Vec<KeyRecord> {
        read(&self.records).clone()
    }

    /// Records the key with `digest` as revoked though this store does not hold it (a
    /// revocation the replicated group made), so it is refused as revoked here too.
    pub fn remember_revoked(&self, digest: &[u8; 32]) -> Result<(), KeyFileError> {
        let _writing = write(&self.records);
        self.revoked.add(*digest)
    }

    /// Whether `presented` is the text of a revoked key.
    pub fn was_revoked(&self, presented: &str) -> bool {
        self.revoked.contains(&digest_of(presented))
    }

    /// Whether a key with `digest` is accepted.
    pub fn knows(&self, digest: &[u8; 32]) -> bool {
        read(&self.keys).contains_key(digest)
    }

    /// Every accepted key with its digest and whether the configuration declares it, by
    /// holder, account and digest.
    pub fn list(&self) -> Vec<([u8; 32], Arc<ApiKey>, bool)> {
        let configured = read(&self.configured);
        let mut keys: Vec<_> = (read(&self.keys).iter())
            .map(|(digest, key)| (*digest, key.clone(), configured.contains(digest)))
            .collect();
        keys.sort_by_key(|(digest, key, _)| (key.holder, key.account, *digest));
        keys
    }

    /// The key behind a presented text, if any.
    pub fn authenticate(&self, presented: &str) -> Option<Arc<ApiKey>> {
        let digest = digest_of(presented);
        let found = read(&self.keys).get(&digest).cloned()?;
        // The map lookup already matched; the constant-time comparison keeps the final
        // decision free of early exits on the secret-derived bytes.
        bool::from(found.digest.ct_eq(&digest)).then_some(found)
    }

    /// The shared rate window of a holder.
    pub fn holder_window(&self, holder: HolderId) -> Arc<RateWindow> {
        let known = read(&self.holder_limits).get(&holder).cloned();
        known.unwrap_or_else(|| {
            write(&self.holder_limits)
                .entry(holder)
                .or_default()
                .clone()
        })
    }
}

#[cfg(test)]
pub(crate) mod tests;
