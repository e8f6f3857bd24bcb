//! The API keys a replicated group shares. A node publishes each key it issues to the
//! group's bucket (`key.<digest>`: the key's record, never its text) and each key it
//! revokes (`key.<digest>` = `revoked`), and applies what the others publish as it
//! arrives, so a key issued on one node works on every node (a new leader included) and a
//! revoked one on none. What the records hold is the caller's (opaque bytes here); a
//! revocation is never undone: a record is published only where no entry is.

use std::time::{Duration, Instant};

use async_nats::jetstream::kv;
use futures_util::{Stream, StreamExt};

use crate::LogError;
use crate::node::NodeConfig;

/// The value of a revoked key's entry.
const REVOKED: &[u8] = b"revoked";
/// The prefix of the keys' entries in the bucket.
const PREFIX: &str = "key.";
/// The entry a watch writes to find the end of the keys that stand (not a key's).
const MARK: &str = "keys-watched";

/// A change of the group's keys, as the bucket holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyChange {
    /// The key with this digest was issued with this record.
    Issued {
        /// Hex digest of the key text.
        digest: String,
        /// The record, as the issuing node published it.
        record: Vec<u8>,
    },
    /// The key with this digest was revoked.
    Revoked {
        /// Hex digest of the key text.
        digest: String,
    },
}

impl KeyChange {
    /// Hex digest of the key changed.
    pub fn digest(&self) -> &str {
        match self {
            KeyChange::Issued { digest, .. } | KeyChange::Revoked { digest } => digest,
        }
    }
}

/// The group's keys in its lease bucket.
#[derive(Clone)]
pub struct GroupKeys {
    store: kv::Store,
    /// How long the mark of a watch is retried while the servers cannot take it yet.
    patience: Duration,
}

impl std::fmt::Debug for GroupKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupKeys").finish_non_exhaustive()
    }
}

impl GroupKeys {
    /// Connects to the group of `config` and opens its bucket (created if need be).
    pub async fn open(config: &NodeConfig) -> Result<Self, LogError> {
        let lease = config.lease_config();
        let context = crate::nats::connect(&lease.servers, lease.timeout).await?;
        let store = crate::lease::bucket(&context, &lease).await?;
        let patience = lease.timeout.max(Duration::from_secs(20));
        Ok(Self { store, patience })
    }

    /// Publishes the key `digest` with `record`, unless the group has an entry for it
    /// already (issued, or revoked: a revoked key never comes back).
    pub async fn issue(&self, digest: &str, record: &[u8]) -> Result<(), LogError> {
        let key = format!("{PREFIX}{digest}");
        match self.store.create(&key, record.to_vec().into()).await {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(self.error(e.to_string())),
        }
    }

    /// Publishes the revocation of the key `digest`.
    pub async fn revoke(&self, digest: &str) -> Result<(), LogError> {
        let key = format!("{PREFIX}{digest}");
        let put = self.store.put(key, REVOKED.to_vec().into()).await;
        put.map(|_| ()).map_err(|e| self.error(e.to_string()))
    }

    /// The group's keys as they stand (every key's newest entry, read to the end), then a
    /// stream of each change published afterwards. The end of what stands is found by a
    /// mark this call writes first: entries come in the order they were written, so once
    /// the mark (or anything newer) has arrived, every earlier entry has.
    pub async fn watch(
        &self,
    ) -> Result<(Vec<KeyChange>, impl Stream<Item = KeyChange> + use<>), LogError> {
        let mark = self.write_mark().await?;
        let subjects = [format!("{PREFIX}>"), MARK.to_owned()];
        let mut watch = (self.store.watch_many_with_history(subjects).await)
            .map_err(|e| self.error(e.to_string()))?;
        let mut standing = Vec::new();
        loop {
            let entry = match watch.next().await {
                Some(entry) => entry.map_err(|e| self.error(e.to_string()))?,
                None => return Err(self.error("the watch ended before the mark".into())),
            };
            let revision = entry.revision;
            standing.extend(change_of(entry));
            if revision >= mark {
                break;
            }
        }
        let later = watch.filter_map(|entry| async move { change_of(entry.ok()?) });
        Ok((standing, later))
    }

    /// Writes the mark of a watch; its revision. Retried while the servers cannot take it
    /// yet: a bucket just created is not known at once to every server of the cluster
    /// ("no stream found for given subject").
    async fn write_mark(&self) -> Result<u64, LogError> {
        let deadline = Instant::now() + self.patience;
        loop {
            match self.store.put(MARK, bytes::Bytes::new()).await {
                Ok(revision) => return Ok(revision),
                Err(_) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => return Err(self.error(e.to_string())),
            }
        }
    }

    fn error(&self, reason: String) -> LogError {
        LogError::Stream {
            stream: "group keys".into(),
            reason,
        }
    }
}

/// The change an entry of the bucket makes to the group's keys (none for the mark).
fn change_of(entry: kv::Entry) -> Option<KeyChange> {
    let digest = entry.key.strip_prefix(PREFIX)?.to_owned();
    match entry.operation {
        kv::Operation::Put if entry.value.as_ref() == REVOKED => {
            Some(KeyChange::Revoked { digest })
        }
        kv::Operation::Put => Some(KeyChange::Issued {
            digest,
            record: entry.value.to_vec(),
        }),
        kv::Operation::Delete | kv::Operation::Purge => None,
    }
}
