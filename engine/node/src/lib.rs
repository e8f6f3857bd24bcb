//! # matchbook-node
//!
//! A running exchange as a library: everything between a definition and a runtime that
//! takes commands, shared by every host (the REST server, C's `mb_node_open`, Python's
//! `matchbook.Node`). [`NodeBuilder::open`] makes the data directory, pins it to the engine
//! configuration and locks it, recovers its state (newest snapshot, then the journal), and
//! starts the threaded runtime on the file journal, or, with [`Replication`], as a member
//! of a group on the NATS JetStream log (following it until it holds the group's lease);
//! starts the snapshot writer and the deadline keeper (good-till-time expiries and dead-man
//! switches fire with no other traffic); and provisions the definition's holders on the
//! start that finds nothing written. [`Node::stop`] drains the queue, writes the last
//! snapshot, resigns the lease and hands the state back.
//!
//! ```
//! # fn main() -> Result<(), matchbook_node::NodeError> {
//! # let dir = std::env::temp_dir().join(format!("matchbook-node-doc-{}", std::process::id()));
//! let definition = matchbook_config::Exchange::from_toml(
//!     "[[holders]]\nname = \"alice\"\naccounts = [{ name = \"main\", deposits = { EUR = \"100\" } }]",
//! ).expect("a definition");
//! let node = matchbook_node::NodeBuilder::new(definition, &dir).open()?;
//! let alice = node.directory()["alice"].accounts["main"];
//! let handle = node.handle();
//! let outcome = handle.apply_blocking(matchbook::Command::SetCancelAllAfter {
//!     account: alice,
//!     timeout: 5_000_000_000,
//! })?;
//! assert!(outcome.result.is_ok());
//! node.stop()?;
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(()) }
//! ```
#![deny(missing_docs)]
#![warn(clippy::too_many_lines)]

mod data_dir;
mod deadlines;
mod group;
mod holders;
mod node;
pub mod orders;

pub use deadlines::CHECK_EVERY;
pub use matchbook_config::{Directory, HolderEntry};
pub use matchbook_replica::member::NodeStatus;
pub use matchbook_replica::node::NodeConfig;
pub use node::{Node, NodeBuilder, Replication};

/// Why a node could not open or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The definition builds no engine configuration.
    #[error("exchange definition: {0}")]
    Definition(#[from] matchbook_config::DefinitionError),
    /// The engine configuration was refused.
    #[error("engine configuration: {0}")]
    Config(#[from] matchbook::ConfigError),
    /// Threads or files.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// The data directory cannot be made (a file of its name, no permission).
    #[error("data directory {path}: {source}")]
    DataDir {
        /// The directory.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The journal or snapshots could not be opened or recovered (another configuration's
    /// directory, one locked by another process, a damaged journal).
    #[error(transparent)]
    Store(#[from] matchbook::store::StoreError),
    /// The engine runtime failed.
    #[error("engine runtime: {0}")]
    Runtime(#[from] matchbook::runtime::RuntimeError),
    /// The replicated log or its lease could not be reached, or the group refused the node.
    #[error("replication: {0}")]
    Replication(String),
    /// A holder of the definition could not be created or found.
    #[error("provisioning {0}")]
    Provision(String),
}
