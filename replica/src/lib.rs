//! # matchbook-replica
//!
//! Replication: the command log on NATS JetStream, so that several nodes can apply one
//! sequence of commands (DESIGN section 1b). [`JetStreamLog`] is a
//! [`CommandLog`](matchbook_store::journal::CommandLog): the leader seals each batch into
//! one message ([`batch`]) and publishes it with the stream sequence it expects to follow,
//! so a deposed leader can never append (fencing), and with a message id per batch, so a
//! retried publish is stored once. A commit returns only once JetStream has acknowledged
//! the batch, which with `sync_interval: always` on the servers means fsynced on a quorum.
//! [`LogTail`] is a follower's reader of it, from any command on. [`lease`] elects the one
//! node that writes: a lease in a JetStream key-value bucket, taken and renewed by
//! compare-and-set; [`name`] keeps each node's name to one running process. [`member`]
//! runs a node of a group: a follower applying the log to its runtime (a hot standby)
//! until it takes the lease, then the writer until it loses it, with state-hash
//! checkpoints compared between nodes; [`node`] holds its settings; [`group_keys`]
//! shares the API keys the nodes issue and revoke.
//! [`cluster`] runs a NATS cluster on loopback for the tests and `make cluster`.
#![deny(missing_docs)]
#![warn(clippy::too_many_lines)]

pub mod batch;
mod checkpoint;
pub mod cluster;
pub mod group_keys;
pub mod lease;
mod log;
pub mod member;
pub mod name;
mod nats;
pub mod node;
mod status;
mod tail;

pub use log::{JetStreamLog, LogConfig, LogError};
pub use tail::LogTail;
