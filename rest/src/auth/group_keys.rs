//! A node's keys shared with its replicated group: when it starts, the group's keys and
//! revocations are applied before it serves and the keys of its key file the group lacks
//! go to the group's bucket; each key it issues or revokes afterwards follows, and what
//! the other nodes publish is applied to its key store as it arrives. So a key issued
//! through any node works on every node, a new leader included, and a key revoked
//! anywhere is refused everywhere, also by a node that was down when it was revoked.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use matchbook_replica::group_keys::{GroupKeys, KeyChange};

use crate::auth::key_files::unhex;
use crate::auth::keys::{KeyRecord, KeyStore, RevokeError};

/// Most changes of the group's keys applied with one write of the key file.
const MOST_APPLIED_TOGETHER: usize = 1_024;

/// Most keys of the key file published to the group at once when the node starts.
const MOST_PUBLISHED_AT_ONCE: usize = 64;

/// Applies the group's keys and revocations to `keys` and publishes the key file's keys
/// the group lacks, before the node serves (a key revoked while it was down is refused
/// from its first request); then applies the group's changes for as long as the server
/// runs.
pub(crate) async fn share(
    keys: Arc<KeyStore>,
    group: &GroupKeys,
) -> Result<(), matchbook_replica::LogError> {
    let (standing, later) = group.watch().await?;
    let in_group: HashSet<String> = standing.iter().map(|c| c.digest().to_owned()).collect();
    let missing = (keys.records().into_iter()).filter(|r| !in_group.contains(&r.digest));
    let published = futures_util::stream::iter(missing)
        .map(|record| async move { publish(group, &record).await })
        .buffer_unordered(MOST_PUBLISHED_AT_ONCE);
    for done in published.collect::<Vec<_>>().await {
        done?;
    }
    apply_blocking(&keys, standing).await;
    let group = group.clone();
    tokio::spawn(async move {
        // The changes that have arrived are applied together, so a burst of thousands of
        // keys writes the key file a few times, not once per key.
        let mut changes = Box::pin(later.ready_chunks(MOST_APPLIED_TOGETHER));
        loop {
            while let Some(batch) = changes.next().await {
                apply_blocking(&keys, batch).await;
            }
            // The watch ended (the connection was lost): watch again; the entries come
            // back from the start, and applying one twice changes nothing.
            tracing::warn!("the group's keys stopped arriving; watching them again");
            tokio::time::sleep(Duration::from_secs(1)).await;
            if let Ok((standing, again)) = group.watch().await {
                apply_blocking(&keys, standing).await;
                changes = Box::pin(again.ready_chunks(MOST_APPLIED_TOGETHER));
            }
        }
    });
    Ok(())
}

/// [`apply`] off the async threads (it writes the key file), each problem logged.
async fn apply_blocking(keys: &Arc<KeyStore>, changes: Vec<KeyChange>) {
    let keys = keys.clone();
    let applied = tokio::task::spawn_blocking(move || apply(&keys, changes)).await;
    for problem in applied.unwrap_or_default() {
        tracing::warn!(%problem, "a key change of the group was not applied here");
    }
}

/// Publishes the key of `record` to `group` (nothing if the group has an entry for it).
pub(crate) async fn publish(
    group: &GroupKeys,
    record: &KeyRecord,
) -> Result<(), matchbook_replica::LogError> {
    let text = serde_json::to_vec(record).unwrap_or_default();
    group.issue(&record.digest, &text).await
}

/// Changes of the group's keys, applied to this node's store: the keys it does not know
/// yet with one write of its key file, then the revocations. What could not be applied.
fn apply(keys: &KeyStore, changes: Vec<KeyChange>) -> Vec<String> {
    let (mut problems, mut issued, mut revoked) = (Vec::new(), Vec::new(), Vec::new());
    let mut new = HashSet::new();
    for change in changes {
        match change {
            KeyChange::Issued { digest, record } => {
                match serde_json::from_slice::<KeyRecord>(&record) {
                    Ok(record) => match unhex(&record.digest) {
                        Some(d) if keys.knows(&d) || !new.insert(d) => {}
                        Some(_) => issued.push(record),
                        None => problems.push(format!("key {digest}: not a digest")),
                    },
                    Err(e) => problems.push(format!("key {digest}: record not readable: {e}")),
                }
            }
            KeyChange::Revoked { digest } => revoked.push(digest),
        }
    }
    if !issued.is_empty()
        && let Err(e) = keys.insert_all(issued, true)
    {
        problems.push(e.to_string());
    }
    for digest in revoked {
        let Some(bytes) = unhex(&digest) else {
            problems.push(format!("key {digest}: not a digest"));
            continue;
        };
        let revoked = match keys.revoke(&bytes) {
            Err(RevokeError::NotFound) => keys.remember_revoked(&bytes).map_err(Into::into),
            other => other.map(|_| ()),
        };
        if let Err(e) = revoked {
            problems.push(e.to_string());
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::keys::Scope;
    use matchbook::{AccountId, HolderId};

    fn issued(record: &KeyRecord) -> KeyChange {
        KeyChange::Issued {
            digest: record.digest.clone(),
            record: serde_json::to_vec(record).expect("record"),
        }
    }

    /// A batch of the group's changes: new keys are kept (once each, also in the key file),
    /// a key revoked later in the batch is not, one already known is left as it is, and a
    /// record that cannot be read is named without holding the others back.
    #[test]
    fn a_batch_of_changes_ends_as_the_changes_one_by_one_would() {
        let dir = std::env::temp_dir().join(format!("mb-group-keys-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("keys.json");
        let keys = KeyStore::open(Some(file.clone())).expect("open");
        let record = |i| {
            (KeyRecord::generate(HolderId(i), AccountId(i), vec![Scope::Trade]))
                .expect("key")
                .1
        };
        let (a, b, known) = (record(1), record(2), record(3));
        keys.insert(known.clone(), true).expect("known");
        let batch = vec![
            issued(&a),
            issued(&b),
            issued(&a),
            KeyChange::Issued {
                digest: "beef".into(),
                record: b"{".to_vec(),
            },
            issued(&known),
            KeyChange::Revoked {
                digest: b.digest.clone(),
            },
        ];
        let problems = apply(&keys, batch);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("key beef: record not readable"));
        let digests = |store: &KeyStore| {
            let mut d: Vec<String> = store.records().into_iter().map(|r| r.digest).collect();
            d.sort();
            d
        };
        let mut want = vec![a.digest.clone(), known.digest.clone()];
        want.sort();
        assert_eq!(digests(&keys), want);
        let reopened = KeyStore::open(Some(file)).expect("reopen");
        assert_eq!(digests(&reopened), want, "the key file holds the same keys");
        let b_digest = unhex(&b.digest).expect("digest");
        assert!(!keys.knows(&b_digest) && !reopened.knows(&b_digest));
        let _ = std::fs::remove_dir_all(dir);
    }
}
