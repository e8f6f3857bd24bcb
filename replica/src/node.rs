//! One node of a replicated engine group: its settings (where the group's servers are,
//! its name, the lease, the checkpoints), and the log and lease settings derived from them.
//! [`crate::member`] runs the node.

use std::path::PathBuf;
use std::time::Duration;

use crate::LogConfig;
use crate::lease::LeaseConfig;

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
    /// Every how many commands the nodes compare their state hashes (0: never).
    pub checkpoint_every: u64,
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
            checkpoint_every: 10_000,
        })
    }

    pub(crate) fn timeout(&self) -> Duration {
        (self.lease / 2).max(Duration::from_millis(500))
    }

    pub(crate) fn log_config(&self, term: u64) -> LogConfig {
        LogConfig {
            servers: self.servers.clone(),
            stream: self.group.clone(),
            replicas: self.replicas,
            term,
            timeout: self.timeout(),
        }
    }

    /// The settings of the group's lease as this node takes it.
    pub fn lease_config(&self) -> LeaseConfig {
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
