//! One node of a replicated engine group, as a server process sees it: its settings, the
//! wait for the lease before it writes, a keeper that renews the lease on a thread of its
//! own and says when it is lost, and the command log opened for recovery after a snapshot.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use matchbook_store::journal::{JournalError, Recovered};

use crate::lease::{Lease, LeaseConfig, Role};
use crate::{JetStreamLog, LogConfig, LogError};

/// How a node reaches its group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeConfig {
    /// NATS server URLs.
    pub servers: Vec<String>,
    /// This node's name (unique in the group).
    pub node: String,
    /// The group's name: its log stream and its lease bucket are named after it.
    pub group: String,
    /// Copies of the log and the lease (3 in production; 1 for a single server).
    pub replicas: usize,
    /// How long the lease lasts without renewal.
    pub lease: Duration,
}

impl NodeConfig {
    /// Settings for `node` on `servers` (a comma-separated list of `nats://host:port`),
    /// group `MATCHBOOK`, 3 replicas, a 3-second lease.
    pub fn parse(servers: &str, node: &str) -> Result<Self, String> {
        let servers: Vec<String> = servers
            .split(',')
            .map(str::trim)
            .map(str::to_owned)
            .collect();
        if servers
            .iter()
            .any(|s| !s.starts_with("nats://") || s.len() <= 7)
        {
            return Err(format!("--log {servers:?}: nats://HOST:PORT[,...]"));
        }
        let valid = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        if node.is_empty() || !node.chars().all(valid) {
            return Err(format!("--node {node:?}: letters, digits, - and _"));
        }
        Ok(NodeConfig {
            servers,
            node: node.to_owned(),
            group: "MATCHBOOK".into(),
            replicas: 3,
            lease: Duration::from_secs(3),
        })
    }

    fn timeout(&self) -> Duration {
        (self.lease / 2).max(Duration::from_millis(500))
    }

    fn lease_config(&self) -> LeaseConfig {
        LeaseConfig {
            servers: self.servers.clone(),
            bucket: format!("{}-leader", self.group),
            replicas: self.replicas,
            node: self.node.clone(),
            lease: self.lease,
            timeout: self.timeout(),
        }
    }

    /// Where the log is, for messages.
    pub fn describe(&self) -> PathBuf {
        PathBuf::from(format!("{}/{}", self.servers.join(","), self.group))
    }
}

/// The lease, held.
#[derive(Debug)]
pub struct Leadership {
    lease: Lease,
    /// The term it was taken at.
    pub term: u64,
}

impl Leadership {
    /// Waits until this node holds the lease (a holder that stopped renewing is waited out),
    /// for at most `patience`.
    pub fn acquire(config: &NodeConfig, patience: Duration) -> Result<Self, LogError> {
        let mut lease = Lease::open(config.lease_config())?;
        let deadline = Instant::now() + patience;
        loop {
            match lease.tick(Instant::now()) {
                Role::Leader { term } => return Ok(Leadership { lease, term }),
                Role::Follower { .. } if Instant::now() < deadline => {
                    std::thread::sleep(config.lease / 6);
                }
                Role::Follower { leader } => {
                    return Err(LogError::Stream {
                        stream: format!("{}-leader", config.group),
                        reason: format!("the lease is held by {leader:?}"),
                    });
                }
            }
        }
    }

    /// Renews the lease on a thread every third of its length until the returned keeper
    /// is dropped (which resigns it); `lost` is called once if it is lost.
    pub fn keep(self, config: &NodeConfig, lost: impl FnOnce() + Send + 'static) -> Keeper {
        let stop = Arc::new(AtomicBool::new(false));
        let every = config.lease / 3;
        let mut lease = self.lease;
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("matchbook-lease".into())
            .spawn(move || {
                while !flag.load(Ordering::Acquire) {
                    if !matches!(lease.tick(Instant::now()), Role::Leader { .. }) {
                        lost();
                        return;
                    }
                    std::thread::sleep(every);
                }
                lease.resign();
            })
            .ok();
        Keeper { stop, thread }
    }
}

/// Renews the lease while it lives.
#[derive(Debug)]
pub struct Keeper {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Opens the group's log for a leader of `term` and returns the commands after command
/// `after` (a local snapshot's) to replay, in the journal's terms for recovery.
pub fn open_log(
    config: &NodeConfig,
    term: u64,
    after: u64,
) -> Result<(JetStreamLog, Recovered), JournalError> {
    let log_config = LogConfig {
        servers: config.servers.clone(),
        stream: config.group.clone(),
        replicas: config.replicas,
        term,
        timeout: config.timeout(),
    };
    let (log, entries) = JetStreamLog::open(log_config).map_err(|e| JournalError::Io {
        path: config.describe(),
        source: e.into(),
    })?;
    let entries = entries.into_iter().filter(|e| e.seq > after).collect();
    Ok((
        log,
        Recovered {
            entries,
            truncated: 0,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_settings_are_checked() {
        let config = NodeConfig::parse("nats://127.0.0.1:4222, nats://127.0.0.1:4223", "n-1")
            .expect("two servers and a name");
        assert_eq!(config.servers.len(), 2);
        assert_eq!((config.replicas, config.lease), (3, Duration::from_secs(3)));
        for (servers, node) in [
            ("127.0.0.1:4222", "a"),
            ("nats://", "a"),
            ("nats://127.0.0.1:4222,", "a"),
            ("nats://127.0.0.1:4222", ""),
            ("nats://127.0.0.1:4222", "a b"),
            ("nats://127.0.0.1:4222", "a.b"),
        ] {
            assert!(
                NodeConfig::parse(servers, node).is_err(),
                "{servers:?} {node:?}"
            );
        }
    }
}
