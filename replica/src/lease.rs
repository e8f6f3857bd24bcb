//! Leadership: one lease in a JetStream key-value bucket (replicated like the log). The
//! holder renews it by a compare-and-set on the revision it last wrote; a node that sees
//! the same revision for a whole lease period takes it by a compare-and-set on that
//! revision, so exactly one of several contenders wins. Each node measures the lease with
//! its own monotonic clock (the caller's `now`), never with another machine's wall clock:
//! a holder that has not renewed for a lease period stops calling itself leader, before
//! any follower, which starts counting only when it sees the last renewal, can take over.
//! The revision a node took the lease at is its term (it only grows), which the command
//! log puts in its message ids; the log's own fencing keeps a deposed leader from
//! appending whatever the lease says.

use std::time::{Duration, Instant};

use async_nats::jetstream::stream::LastRawMessageErrorKind;
use async_nats::jetstream::{self, kv};
use futures_util::StreamExt;

use crate::LogError;

/// The key the lease is kept under.
const KEY: &str = "leader";
/// The key the group's exchange configuration digest is kept under.
const CONFIG: &str = "config";
/// The key the group's shared secret is kept under.
const SECRET: &str = "secret";
/// The key the leader's state-hash checkpoints are kept under.
const CHECKPOINTS: &str = "checkpoints";

/// Who a node is, after a [`Lease::tick`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// It holds the lease, taken at revision `term`.
    Leader {
        /// The revision it took the lease at.
        term: u64,
    },
    /// Another node holds it (`None`: nobody known to hold it, or this node cannot tell).
    Follower {
        /// The holder's node name, as it wrote it.
        leader: Option<String>,
    },
}

/// Where the lease lives and how long it lasts.
#[derive(Debug, Clone)]
pub struct LeaseConfig {
    /// Server URLs.
    pub servers: Vec<String>,
    /// Bucket name (one per engine group).
    pub bucket: String,
    /// Copies the bucket keeps.
    pub replicas: usize,
    /// This node's name.
    pub node: String,
    /// How long a lease lasts without renewal.
    pub lease: Duration,
    /// How long one request may take.
    pub timeout: Duration,
}

/// What this node last saw of the lease.
#[derive(Debug, Clone)]
struct Seen {
    revision: u64,
    holder: String,
    since: Instant,
}

/// A key's value as the bucket's stream leader holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Latest {
    /// Its revision (the stream sequence of its last write).
    pub revision: u64,
    /// Its value.
    pub value: bytes::Bytes,
}

/// The value of `key` now, read from the bucket stream's leader; `None` if it was never
/// written or was deleted. A key-value get may be answered by any replica of the stream,
/// and one that is behind gives an older value (measured: 1 to 6% of reads right after a
/// write): after a refused renewal an old holder would read itself as the holder.
pub(crate) async fn latest(store: &kv::Store, key: &str) -> Result<Option<Latest>, String> {
    let subject = format!("{}{key}", store.prefix);
    let message = match store.stream.get_last_raw_message_by_subject(&subject).await {
        Ok(message) => message,
        Err(e) if matches!(e.kind(), LastRawMessageErrorKind::NoMessageFound) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let removed = message
        .headers
        .get("KV-Operation")
        .is_some_and(|op| op.as_str() != "PUT")
        || message.headers.get("Nats-Marker-Reason").is_some();
    Ok((!removed).then_some(Latest {
        revision: message.sequence,
        value: message.payload,
    }))
}

/// One node's view of the lease.
pub struct Lease {
    runtime: tokio::runtime::Runtime,
    store: kv::Store,
    config: LeaseConfig,
    /// While leader: (term, revision of the last renewal, when it was written).
    held: Option<(u64, u64, Instant)>,
    seen: Option<Seen>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (f.debug_struct("Lease"))
            .field("node", &self.config.node)
            .field("held", &self.held)
            .finish()
    }
}

pub(crate) async fn bucket(
    context: &jetstream::Context,
    config: &LeaseConfig,
) -> Result<kv::Store, LogError> {
    let settings = kv::Config {
        bucket: config.bucket.clone(),
        history: 1,
        storage: jetstream::stream::StorageType::File,
        num_replicas: config.replicas,
        ..Default::default()
    };
    let deadline = Instant::now() + config.timeout.max(Duration::from_secs(20));
    loop {
        match context.create_key_value(settings.clone()).await {
            Ok(store) => return Ok(store),
            Err(e) => {
                if let Ok(store) = context.get_key_value(&config.bucket).await {
                    return Ok(store);
                }
                if Instant::now() >= deadline {
                    return Err(LogError::Stream {
                        stream: config.bucket.clone(),
                        reason: e.to_string(),
                    });
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

impl Lease {
    /// Connects and opens (or creates) the bucket; the node starts as a follower.
    pub fn open(config: LeaseConfig) -> Result<Self, LogError> {
        let runtime = crate::nats::runtime()?;
        let store = runtime.block_on(async {
            let context = crate::nats::connect(&config.servers, config.timeout).await?;
            bucket(&context, &config).await
        })?;
        Ok(Lease {
            runtime,
            store,
            config,
            held: None,
            seen: None,
        })
    }

    /// This node's name.
    pub fn node(&self) -> &str {
        &self.config.node
    }

    /// The bucket, for the other records kept beside the lease.
    pub(crate) fn store(&self) -> &kv::Store {
        &self.store
    }

    /// The value of `key` now, as the bucket's stream leader holds it (see [`latest`]).
    pub(crate) fn latest(&self, key: &str) -> Result<Option<Latest>, String> {
        self.runtime.block_on(latest(&self.store, key))
    }

    /// Runs `request` (one on [`Lease::store`]) to its end.
    pub(crate) fn block_on<F: std::future::Future>(&self, request: F) -> F::Output {
        self.runtime.block_on(request)
    }

    /// One step at `now`: a leader renews; a follower looks at the lease and takes it when
    /// nobody holds it or its holder has not renewed for a lease period. Call it more often
    /// than the lease lasts (a third of it, say).
    pub fn tick(&mut self, now: Instant) -> Role {
        match self.held {
            Some(held) => self.renew(held, now),
            None => self.contend(now),
        }
    }

    fn renew(&mut self, (term, revision, at): (u64, u64, Instant), now: Instant) -> Role {
        let value = self.config.node.clone().into_bytes().into();
        let renewed = (self.runtime).block_on(self.store.update(KEY, value, revision));
        match renewed {
            Ok(revision) => {
                self.held = Some((term, revision, now));
                Role::Leader { term }
            }
            Err(e) if e.kind() == kv::UpdateErrorKind::WrongLastRevision => {
                self.held = None;
                self.contend(now)
            }
            // Not renewed (no quorum, no server): leader only until the lease runs out.
            Err(_) if now.duration_since(at) < self.config.lease => Role::Leader { term },
            Err(_) => {
                self.held = None;
                Role::Follower { leader: None }
            }
        }
    }

    fn contend(&mut self, now: Instant) -> Role {
        let Ok(current) = self.latest(KEY) else {
            return Role::Follower { leader: None };
        };
        let Some(entry) = current else {
            return self.take(None, now);
        };
        let holder = String::from_utf8_lossy(&entry.value).into_owned();
        let since = match &self.seen {
            Some(seen) if seen.revision == entry.revision => seen.since,
            _ => now,
        };
        self.seen = Some(Seen {
            revision: entry.revision,
            holder: holder.clone(),
            since,
        });
        if now.duration_since(since) >= self.config.lease {
            return self.take(Some(entry.revision), now);
        }
        Role::Follower {
            leader: Some(holder),
        }
    }

    /// Takes the lease: created if nobody holds it, else over the stale `revision`.
    fn take(&mut self, revision: Option<u64>, now: Instant) -> Role {
        let value: bytes::Bytes = self.config.node.clone().into_bytes().into();
        let taken = self.runtime.block_on(async {
            match revision {
                Some(r) => (self.store.update(KEY, value, r).await).map_err(|e| e.to_string()),
                None => (self.store.create(KEY, value).await).map_err(|e| e.to_string()),
            }
        });
        match taken {
            Ok(term) => {
                self.held = Some((term, term, now));
                Role::Leader { term }
            }
            // Another node was faster: it leads; the next tick reads who.
            Err(_) => Role::Follower {
                leader: self.seen.as_ref().map(|s| s.holder.clone()),
            },
        }
    }

    /// Publishes where this node serves clients (its HTTP base address), so that the other
    /// nodes can send the leader's requests to it.
    pub fn announce(&mut self, address: &str) -> Result<(), LogError> {
        let key = format!("address.{}", self.config.node);
        let value: bytes::Bytes = address.to_owned().into_bytes().into();
        let put = self.runtime.block_on(self.store.put(key, value));
        put.map_err(|e| self.bucket_error(e.to_string()))?;
        Ok(())
    }

    /// The group's exchange configuration digest: `pin` if none was recorded (this node
    /// records it), else the one recorded.
    pub fn group_config(&mut self, pin: &str) -> Result<String, LogError> {
        self.group_value(CONFIG, pin)
    }

    /// The group's shared secret: `proposed` if none was recorded (this node records it),
    /// else the one recorded. Every node then signs and checks with the same secret (the
    /// REST adapter's page cursors), so what one leader handed out the next accepts.
    pub fn group_secret(&mut self, proposed: &str) -> Result<String, LogError> {
        self.group_value(SECRET, proposed)
    }

    /// The value of `key`, recorded once for the group: `proposed` by the first node to
    /// ask, the recorded one for every node after.
    fn group_value(&mut self, key: &str, proposed: &str) -> Result<String, LogError> {
        let value: bytes::Bytes = proposed.to_owned().into_bytes().into();
        let recorded = self.runtime.block_on(async {
            if self.store.create(key, value).await.is_ok() {
                return Ok(Some(proposed.to_owned()));
            }
            let found = latest(&self.store, key).await?;
            Ok(found.map(|v| String::from_utf8_lossy(&v.value).into_owned()))
        });
        match recorded {
            Ok(Some(value)) => Ok(value),
            Ok(None) => Err(self.bucket_error(format!("the group's {key} was not recorded"))),
            Err(reason) => Err(self.bucket_error(reason)),
        }
    }

    fn bucket_error(&self, reason: String) -> LogError {
        LogError::Stream {
            stream: self.config.bucket.clone(),
            reason,
        }
    }

    /// Where node `node` said it serves clients, if it did.
    pub fn address_of(&mut self, node: &str) -> Option<String> {
        let entry = self.latest(&format!("address.{node}"));
        String::from_utf8(entry.ok().flatten()?.value.to_vec()).ok()
    }

    /// Publishes the leader's recorded (command number, state hash) checkpoints for the
    /// followers to compare theirs with (best effort: the next tick publishes again).
    pub fn publish_checkpoints(&mut self, checkpoints: &[(u64, u64)]) {
        let text: Vec<String> = (checkpoints.iter())
            .map(|(seq, hash)| format!("{seq}:{hash:016x}"))
            .collect();
        let value: bytes::Bytes = text.join(",").into_bytes().into();
        let _ = self.runtime.block_on(self.store.put(CHECKPOINTS, value));
    }

    /// The leader's last published checkpoints (none if unreadable).
    pub fn checkpoints(&mut self) -> Vec<(u64, u64)> {
        let Ok(Some(latest)) = self.latest(CHECKPOINTS) else {
            return Vec::new();
        };
        let text = String::from_utf8_lossy(&latest.value);
        (text.split(','))
            .filter_map(|pair| {
                let (seq, hash) = pair.split_once(':')?;
                Some((seq.parse().ok()?, u64::from_str_radix(hash, 16).ok()?))
            })
            .collect()
    }

    /// Publishes the command of this node's newest local snapshot: the log must keep
    /// every command after it for this node (best effort: published again next time).
    pub fn publish_snapshot(&mut self, seq: u64) {
        let key = format!("snapshot.{}", self.config.node);
        let value: bytes::Bytes = seq.to_string().into_bytes().into();
        let _ = self.runtime.block_on(self.store.put(key, value));
    }

    /// The newest snapshot command that every node of the group (every node that ever
    /// announced its address) has: the log may lose the commands up to it. `None` when it
    /// cannot be read; 0 when some node has no snapshot.
    pub fn snapshot_floor(&mut self) -> Option<u64> {
        self.runtime.block_on(async {
            let mut keys = self.store.keys().await.ok()?;
            let mut nodes = Vec::new();
            while let Some(key) = keys.next().await {
                if let Some(node) = key.ok()?.strip_prefix("address.") {
                    nodes.push(node.to_owned());
                }
            }
            let mut floor = u64::MAX;
            for node in nodes {
                let value = latest(&self.store, &format!("snapshot.{node}"))
                    .await
                    .ok()?;
                let seq = value.and_then(|v| std::str::from_utf8(&v.value).ok()?.parse().ok());
                floor = floor.min(seq.unwrap_or(0));
            }
            (floor != u64::MAX).then_some(floor)
        })
    }

    /// Gives the lease up at once (a clean stop), so a follower need not wait it out.
    pub fn resign(&mut self) {
        if self.held.take().is_some() {
            let _ = self.runtime.block_on(self.store.delete(KEY));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{NatsCluster, server_binary};

    fn lease_on(servers: Vec<String>, node: &str) -> Lease {
        Lease::open(LeaseConfig {
            servers,
            bucket: "latest".into(),
            replicas: 3,
            node: node.into(),
            lease: Duration::from_secs(1),
            timeout: Duration::from_secs(1),
        })
        .expect("the bucket opens")
    }

    /// What a node reads of a key is what was last written, on whichever server it talks
    /// to, right after the write (a replica's answer may lag it: about 1 in 100 did in
    /// this test when the lease read with a key-value get).
    #[test]
    fn a_key_reads_as_just_written_from_every_server() {
        let dir = std::env::temp_dir().join(format!("mb-nats-latest-{}", std::process::id()));
        let cluster = NatsCluster::start(&server_binary(), &dir, 3).expect("a NATS cluster");
        let writer = lease_on(cluster.urls(), "w");
        let readers: Vec<Lease> = (0..3)
            .map(|i| lease_on(vec![cluster.urls()[i].clone()], "r"))
            .collect();
        let mut revision = writer
            .block_on(writer.store.put(KEY, "0".into()))
            .expect("put");
        for i in 1..=1_000 {
            let value: bytes::Bytes = i.to_string().into_bytes().into();
            let update = writer.store.update(KEY, value.clone(), revision);
            revision = writer.block_on(update).expect("updated");
            for reader in readers.iter().cycle().skip(i % 3).take(3) {
                let read = reader.latest(KEY).expect("read");
                assert_eq!(
                    read,
                    Some(Latest {
                        revision,
                        value: value.clone()
                    }),
                    "write {i}"
                );
            }
        }
        drop(cluster);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
