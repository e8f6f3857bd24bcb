//! What a node of a replicated group knows of its role and the group, written by its
//! member thread ([`crate::member`]) and read by whoever reports it (the server's health
//! and cluster routes, its start-up wait).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The leader as this node knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderInfo {
    /// Its node name.
    pub node: String,
    /// Where it serves clients (`http://host:port`), if it said.
    pub address: Option<String>,
}

/// What a node knows of its role and the group, shared with whoever reports it.
#[derive(Debug, Default)]
pub struct NodeStatus {
    pub(crate) leading: AtomicBool,
    pub(crate) term: AtomicU64,
    pub(crate) log_end: AtomicU64,
    pub(crate) caught_up: AtomicBool,
    pub(crate) admitted: AtomicBool,
    pub(crate) compared: AtomicU64,
    pub(crate) kept_from: AtomicU64,
    pub(crate) trim_checks: AtomicU64,
    pub(crate) leader: Mutex<Option<LeaderInfo>>,
    pub(crate) divergence: Mutex<Option<String>>,
    pub(crate) problem: Mutex<Option<String>>,
    pub(crate) secret: OnceLock<String>,
}

impl NodeStatus {
    /// Whether this node writes the log now.
    pub fn is_leading(&self) -> bool {
        self.leading.load(Ordering::Acquire)
    }

    /// The lease term it leads in (0 if it never led).
    pub fn term(&self) -> u64 {
        self.term.load(Ordering::Acquire)
    }

    /// Number of the last command known stored in the log (read by a follower's last
    /// poll; sequenced by a leader).
    pub fn log_end(&self) -> u64 {
        self.log_end.load(Ordering::Acquire)
    }

    /// Whether this node has applied (handed its runtime) everything the log held at some
    /// moment since it started: a follower that has read to the end once, or a leader.
    pub fn caught_up(&self) -> bool {
        self.caught_up.load(Ordering::Acquire)
    }

    /// Whether this process holds the node's name ([`crate::name`]) and runs the group's
    /// exchange configuration: until it does, it neither leads nor says where it serves.
    pub fn admitted(&self) -> bool {
        self.admitted.load(Ordering::Acquire)
    }

    /// The group's shared secret (see [`crate::lease::Lease::group_secret`]), known once
    /// the node is admitted.
    pub fn secret(&self) -> Option<&str> {
        self.secret.get().map(String::as_str)
    }

    /// Number of the last checkpoint whose state hash was found equal to the leader's.
    pub fn last_compared(&self) -> u64 {
        self.compared.load(Ordering::Acquire)
    }

    /// The leader, if known.
    pub fn leader(&self) -> Option<LeaderInfo> {
        self.leader
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Why this node's state is known to differ from the leader's, if it is.
    pub fn divergence(&self) -> Option<String> {
        (self.divergence.lock().unwrap_or_else(|e| e.into_inner())).clone()
    }

    /// The first command the log keeps, as far as this node (while leading) trimmed it
    /// (0: never trimmed here).
    pub fn kept_from(&self) -> u64 {
        self.kept_from.load(Ordering::Acquire)
    }

    /// How many times this node, leading, looked at trimming the log.
    pub fn trim_checks(&self) -> u64 {
        self.trim_checks.load(Ordering::Acquire)
    }

    /// Why this node cannot follow the log (it needs commands no longer stored), if so.
    pub fn problem(&self) -> Option<String> {
        (self.problem.lock().unwrap_or_else(|e| e.into_inner())).clone()
    }

    pub(crate) fn set_leader(&self, leader: Option<LeaderInfo>) {
        *self.leader.lock().unwrap_or_else(|e| e.into_inner()) = leader;
    }
}
