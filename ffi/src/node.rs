//! `mb_node`: a running exchange on a data directory, the C host of `matchbook-node`. It
//! is an `mb_runtime` (sessions, queries, follows as on one in memory) that is also
//! durable (every acknowledged command journalled, snapshots written, state recovered on
//! open), keeps deadlines (good-till-time expiries and dead-man switches fire with no
//! other traffic) and, through its options, runs as a member of a replicated group on
//! NATS JetStream. Its directory is the one `matchbook-rest` keeps: either can open what
//! the other wrote under the same definition.

use std::ffi::c_char;
use std::path::Path;

use matchbook::store::StoreOptions;
use matchbook_node::{NodeBuilder, NodeConfig, NodeError, Replication};

use crate::boundary::{arg, fail, guard, out, text};
use crate::config::MbConfig;
use crate::durable::{MbStoreOptions, mb_store_options_default};
use crate::runtime::MbRuntime;
use crate::status::MbStatus;

/// How a node keeps its data and, optionally, its group.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MbNodeOptions {
    /// Journal sync, snapshot interval and snapshots kept.
    pub store: MbStoreOptions,
    /// Commands in flight and reads queued at most (0: 65,536); a full queue answers
    /// `MB_STATUS_BUSY`.
    pub queue_capacity: usize,
    /// NULL: commands are journalled in the data directory. Else the replicated log's
    /// NATS servers, `nats://HOST:PORT[,...]`: the node joins the group (`node_name`
    /// required), follows the log and writes it while it holds the group's lease.
    pub log_servers: *const c_char,
    /// This node's name in its group (letters, digits, `-`, `_`).
    pub node_name: *const c_char,
    /// The group's lease in milliseconds (0: the default, 2,000; else 100 to 60,000).
    pub lease_ms: u32,
    /// Commands between two state-hash checkpoints of the group (0: the default, 10,000).
    pub checkpoint_every: u64,
}

/// A running node: its `mb_runtime` and what keeps it on its directory.
pub struct MbNode {
    runtime: MbRuntime,
}

/// The defaults: `mb_store_options_default()`, the default queue, the local journal.
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_node_options_default() -> MbNodeOptions {
    MbNodeOptions {
        store: mb_store_options_default(),
        queue_capacity: 0,
        log_servers: std::ptr::null(),
        node_name: std::ptr::null(),
        lease_ms: 0,
        checkpoint_every: 0,
    }
}

fn status_of(error: &NodeError) -> MbStatus {
    match error {
        NodeError::Definition(_) | NodeError::Config(_) | NodeError::Provision(_) => {
            MbStatus::InvalidConfig
        }
        NodeError::Runtime(e) => MbStatus::from(*e),
        NodeError::Io(_)
        | NodeError::DataDir { .. }
        | NodeError::Store(_)
        | NodeError::Replication(_) => MbStatus::Storage,
    }
}

/// The group named by `options`, if any.
fn replication(options: &MbNodeOptions) -> Result<Option<Replication>, MbStatus> {
    if options.log_servers.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL, a NUL-terminated string per the contract.
    let servers = unsafe { text(options.log_servers, "log_servers") }?;
    // SAFETY: NULL or a NUL-terminated string per the contract.
    let name = unsafe { text(options.node_name, "node_name") }?;
    let invalid = |why: String| fail(MbStatus::InvalidArgument, why);
    let mut config = NodeConfig::parse(servers, name).map_err(invalid)?;
    if options.lease_ms != 0 {
        if !(100..=60_000).contains(&options.lease_ms) {
            return Err(invalid(format!(
                "lease_ms {}: 100 to 60000",
                options.lease_ms
            )));
        }
        config.lease = std::time::Duration::from_millis(u64::from(options.lease_ms));
    }
    if options.checkpoint_every != 0 {
        config.checkpoint_every = options.checkpoint_every;
    }
    Ok(Some(Replication {
        config,
        address: String::new(),
        secret: None,
    }))
}

fn open(config: &MbConfig, dir: &Path, options: &MbNodeOptions) -> Result<MbNode, MbStatus> {
    let store: StoreOptions = options.store.into();
    let mut builder = NodeBuilder::new(config.exchange.clone(), dir)
        .store(store)
        .queue_capacity(options.queue_capacity)
        .history_limits(config.history_limits);
    if let Some(group) = replication(options)? {
        builder = builder.replicated(group);
    }
    let node = builder
        .open()
        .map_err(|e| fail(status_of(&e), e.to_string()))?;
    Ok(MbNode {
        runtime: MbRuntime::of_node(node)?,
    })
}

/// Opens a node on the data directory `dir` (created if missing): a new directory starts
/// from `config` with its holders provisioned (as commands, journalled), an existing one
/// is recovered (newest intact snapshot, then the journal) and must have been written
/// under the same definition, else `MB_STATUS_STORAGE`; a directory another process has
/// open is refused the same way. The node runs on the system clock (never behind its
/// journal); `config`'s start time and market-data choice do not apply (a node keeps
/// market data). `options` NULL takes `mb_node_options_default()`. A command is
/// acknowledged (its `mb_session_submit` returns) once journalled; deadlines fire within
/// 100 ms of their time with no other traffic. Use it through `mb_node_runtime`.
///
/// # Safety
/// `config` from `mb_config_*`; `dir` a NUL-terminated UTF-8 path; `options` NULL or
/// valid (its strings NULL or NUL-terminated); `out_node` writable.
///
/// Threads: any thread, while no thread changes the definition.
/// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_node_open(
    config: *const MbConfig,
    dir: *const c_char,
    options: *const MbNodeOptions,
    out_node: *mut *mut MbNode,
) -> MbStatus {
    guard(|| {
        let config = arg(config, "config")?;
        // SAFETY: forwarded contract.
        let dir = unsafe { text(dir, "dir") }?;
        let slot = out(out_node, "out_node")?;
        // SAFETY: NULL or valid per the contract.
        let options = unsafe { options.as_ref() }
            .copied()
            .unwrap_or_else(|| mb_node_options_default());
        *slot = Box::into_raw(Box::new(open(config, Path::new(dir), &options)?));
        Ok(())
    })
}

/// The node's thread-safe handle: open sessions on it (`mb_session_new`), read its
/// reference data (`mb_runtime_refdata`: the definition's holders by name). Valid until the
/// node is freed; never free it. Its clock is the system's (`mb_runtime_set_time` is
/// refused). NULL for a NULL node.
///
/// # Safety
/// `node` NULL or live.
///
/// Threads: any thread, concurrently.
/// Ownership: borrowed from the handle until it is freed; never free it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_node_runtime(node: *const MbNode) -> *const MbRuntime {
    // SAFETY: NULL or live per the contract.
    unsafe { node.as_ref() }.map_or(std::ptr::null(), |n| &n.runtime)
}

/// Stops the node and frees it (NULL is ignored): no more deadlines, every queued command
/// answered, the last snapshot written, a group's lease resigned, the directory unlocked.
/// Sessions still open answer `MB_STATUS_STOPPED` afterwards and must still be freed.
///
/// # Safety
/// `node` NULL or from `mb_node_open`, not freed before, not used concurrently.
///
/// Threads: one thread, once no other uses the node.
/// Ownership: frees the handle (NULL is ignored); do not use it after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_node_free(node: *mut MbNode) {
    // SAFETY: forwarded contract; dropping the node stops it in order.
    unsafe { crate::boundary::release(node) };
}
