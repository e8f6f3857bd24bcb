//! A node's keys shared with its replicated group: the keys of its key file go to the
//! group's bucket when it starts (unless the group has an entry for them already), each
//! key it issues or revokes afterwards follows, and what the other nodes publish is
//! applied to its key store as it arrives. So a key issued through any node works on every
//! node, a new leader included, and a key revoked anywhere is refused everywhere.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use matchbook_replica::group_keys::{GroupKeys, KeyChange};

use crate::keys::{KeyRecord, KeyStore, RevokeError, unhex};
use crate::server::ServerError;

/// Publishes the key file's keys to `group`, then applies the group's keys and
/// revocations to `keys` for as long as the server runs.
pub(crate) async fn share(keys: Arc<KeyStore>, group: &GroupKeys) -> Result<(), ServerError> {
    let failed = |e: matchbook_replica::LogError| ServerError::Replication(e.to_string());
    for record in keys.records() {
        publish(group, &record).await.map_err(failed)?;
    }
    let first = group.watch().await.map_err(failed)?;
    let group = group.clone();
    tokio::spawn(async move {
        let mut changes = Box::pin(first);
        loop {
            while let Some(change) = changes.next().await {
                let keys = keys.clone();
                let applied = tokio::task::spawn_blocking(move || apply(&keys, change)).await;
                if let Ok(Err(problem)) = applied {
                    tracing::warn!(%problem, "a key change of the group was not applied here");
                }
            }
            // The watch ended (the connection was lost): watch again; the entries come
            // back from the start, and applying one twice changes nothing.
            tracing::warn!("the group's keys stopped arriving; watching them again");
            tokio::time::sleep(Duration::from_secs(1)).await;
            if let Ok(again) = group.watch().await {
                changes = Box::pin(again);
            }
        }
    });
    Ok(())
}

/// Publishes the key of `record` to `group` (nothing if the group has an entry for it).
pub(crate) async fn publish(
    group: &GroupKeys,
    record: &KeyRecord,
) -> Result<(), matchbook_replica::LogError> {
    let text = serde_json::to_vec(record).unwrap_or_default();
    group.issue(&record.digest, &text).await
}

/// One change of the group's keys, applied to this node's store.
fn apply(keys: &KeyStore, change: KeyChange) -> Result<(), String> {
    match change {
        KeyChange::Issued { digest, record } => {
            let record: KeyRecord = serde_json::from_slice(&record)
                .map_err(|e| format!("key {digest}: record not readable: {e}"))?;
            let known = unhex(&record.digest).is_some_and(|d| keys.knows(&d));
            if !known {
                keys.insert(record, true).map_err(|e| e.to_string())?;
            }
            Ok(())
        }
        KeyChange::Revoked { digest } => {
            let digest = unhex(&digest).ok_or_else(|| format!("key {digest}: not a digest"))?;
            match keys.revoke(&digest) {
                Ok(_) | Err(RevokeError::NotFound) => Ok(()),
                Err(e) => Err(e.to_string()),
            }
        }
    }
}
