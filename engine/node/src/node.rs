//! [`NodeBuilder`] and the running [`Node`]: the order of a start (directory, pin,
//! recovery, runtime, group, holders, deadlines) and of a stop (deadlines, runtime and its
//! last snapshot, lease).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use matchbook::market::{HistoryLimits, MarketData, MarketDataConfig};
use matchbook::runtime::{
    Clock, DEFAULT_QUEUE_CAPACITY, OffsetClock, Runtime, RuntimeHandle, SnapshotPlan,
};
use matchbook::store::{
    self, DirLock, Recovery, RecoveryReport, SnapshotObserver, SnapshotWriter, StoreOptions,
};
use matchbook::{Engine, EngineConfig};
use matchbook_config::{Directory, Exchange};
use matchbook_replica::member::{Membership, NodeStatus};
use matchbook_replica::node::NodeConfig;
use tokio::sync::oneshot;

use crate::data_dir::{self, Pinning, StartState};
use crate::deadlines::DeadlineKeeper;
use crate::{NodeError, group, holders};

/// Membership of a replicated group: commands go to the group's log on NATS JetStream.
#[derive(Debug, Clone)]
pub struct Replication {
    /// The log's servers, this node's name, the lease and checkpoint intervals.
    pub config: NodeConfig,
    /// Where this node serves clients, for the others to forward to (free text the group
    /// publishes; a host that serves no one may leave it empty).
    pub address: String,
    /// The secret this node proposes for the group (64 hex digits; `None`: a random one):
    /// the group's first node records its own and every node takes the recorded one
    /// ([`Node::group_secret`]).
    pub secret: Option<String>,
}

/// How to open a node; [`NodeBuilder::open`] opens it.
pub struct NodeBuilder {
    definition: Exchange,
    engine: Option<EngineConfig>,
    data_dir: PathBuf,
    store: StoreOptions,
    queue_capacity: usize,
    history_limits: Option<HistoryLimits>,
    copy: Option<(String, String)>,
    replication: Option<Replication>,
    observer: Option<SnapshotObserver>,
}

impl std::fmt::Debug for NodeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeBuilder")
            .field("data_dir", &self.data_dir)
            .field("store", &self.store)
            .field("replication", &self.replication)
            .finish_non_exhaustive()
    }
}

impl NodeBuilder {
    /// A node of `definition` (its reference data and holders) on the data directory
    /// `data_dir`, with the store's defaults (fsync per batch, a snapshot every 100,000
    /// commands, two kept), the runtime's default queue and the local journal.
    pub fn new(definition: Exchange, data_dir: impl AsRef<Path>) -> Self {
        Self {
            definition,
            engine: None,
            data_dir: data_dir.as_ref().to_owned(),
            store: StoreOptions::default(),
            queue_capacity: DEFAULT_QUEUE_CAPACITY,
            history_limits: None,
            copy: None,
            replication: None,
            observer: None,
        }
    }

    /// The engine configuration to run instead of the one the definition builds (an
    /// embedding program's changes made in code); the directory is pinned to it.
    pub fn engine_config(mut self, config: EngineConfig) -> Self {
        self.engine = Some(config);
        self
    }

    /// How the journal is synced, how often snapshots are written and how many are kept.
    pub fn store(mut self, options: StoreOptions) -> Self {
        self.store = options;
        self
    }

    /// Commands in flight and reads queued at most (0: the runtime's default).
    pub fn queue_capacity(mut self, capacity: usize) -> Self {
        if capacity > 0 {
            self.queue_capacity = capacity;
        }
        self
    }

    /// How much order and trade history market data keeps.
    pub fn history_limits(mut self, limits: HistoryLimits) -> Self {
        self.history_limits = Some(limits);
        self
    }

    /// A file written into the data directory at its first use, before the pin (the
    /// server's copy of the configuration file it was started with).
    pub fn first_use_copy(mut self, name: impl Into<String>, text: impl Into<String>) -> Self {
        self.copy = Some((name.into(), text.into()));
        self
    }

    /// Runs the node as a member of a replicated group instead of on the local journal.
    pub fn replicated(mut self, replication: Replication) -> Self {
        self.replication = Some(replication);
        self
    }

    /// Tells `observer` of every snapshot written or failed.
    pub fn observe_snapshots(mut self, observer: SnapshotObserver) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Opens the node: once this returns, the runtime takes commands (or, on a group, this
    /// node leads or follows a log it is in step with) and the definition's holders exist.
    pub fn open(self) -> Result<Node, NodeError> {
        let engine_config = match &self.engine {
            Some(config) => config.clone(),
            None => self.definition.engine_config()?,
        };
        let dir = self.data_dir.clone();
        data_dir::make(&dir)?;
        let pinning = Pinning {
            engine: &engine_config,
            definition: &self.definition,
            copy: self.copy.as_ref(),
        };
        data_dir::pin(&dir, &pinning)?;
        let fresh = Engine::new(engine_config.clone())?;
        let limits = self.history_limits;
        let recovered = data_dir::recover(&dir, self.store, self.replication.is_some(), || {
            let instruments = fresh.instruments().len();
            let mut market = MarketData::new(instruments, MarketDataConfig::default());
            if let Some(limits) = limits {
                market.set_history_limits(limits);
            }
            (fresh, market)
        })?;
        self.start(recovered, &engine_config)
    }

    fn start(mut self, recovered: StartState, config: &EngineConfig) -> Result<Node, NodeError> {
        let Recovery {
            engine,
            market,
            journal,
            report,
            lock,
            check,
        } = recovered;
        let clock = data_dir::clock_not_behind(&engine);
        let observer = self.observer.take().unwrap_or_else(|| Box::new(|_, _| {}));
        let (dir, keep) = (self.data_dir.clone(), self.store.keep_snapshots);
        let snapshots = SnapshotWriter::observed(dir, keep, check, observer)?;
        let plan = SnapshotPlan {
            every: self.store.snapshot_every,
            on_stop: true,
            sink: snapshots.sink(),
            resumes_after: report.snapshot_seq.unwrap_or(0) + report.replayed as u64,
        };
        let shared: Arc<dyn Clock> = clock.clone();
        let capacity = self.queue_capacity;
        let runtime = match journal {
            Some(journal) => {
                Runtime::start_durable(engine, market, shared, capacity, journal, Some(plan))?
            }
            // A node of a group follows the log from its snapshot until it holds the lease.
            None => {
                let next = report.snapshot_seq.unwrap_or(0) + 1;
                Runtime::start_follower(engine, market, shared, capacity, next, Some(plan))?
            }
        };
        let mut node = Node {
            runtime: Some(runtime),
            snapshots: Some(snapshots),
            membership: None,
            diverged: None,
            deadlines: None,
            clock,
            directory: Directory::new(),
            provisioned: false,
            report,
            data_dir: self.data_dir.clone(),
            name: None,
            lock: Some(lock),
        };
        let provision = node.settle(self.replication.as_ref(), config)?;
        let handle = node.handle();
        let holders = &self.definition.holders;
        node.directory = if provision {
            holders::provision(&handle, holders)?
        } else {
            holders::look_up(&handle, holders, node.membership.is_some())?
        };
        node.provisioned = provision;
        node.deadlines = Some(DeadlineKeeper::start(handle, node.clock.clone())?);
        Ok(node)
    }
}

/// A running exchange node. Dropping it stops it as [`Node::stop`] does.
pub struct Node {
    runtime: Option<Runtime>,
    snapshots: Option<SnapshotWriter>,
    membership: Option<Membership>,
    diverged: Option<oneshot::Receiver<String>>,
    deadlines: Option<DeadlineKeeper>,
    clock: Arc<OffsetClock>,
    directory: Directory,
    provisioned: bool,
    report: RecoveryReport,
    data_dir: PathBuf,
    name: Option<String>,
    /// The data directory's writer lock, released once the node has stopped.
    lock: Option<DirLock>,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("data_dir", &self.data_dir)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Node {
    /// Joins the group (when replicated) and waits until this node is in step with it;
    /// whether this start provisions the definition's holders.
    fn settle(
        &mut self,
        replication: Option<&Replication>,
        config: &EngineConfig,
    ) -> Result<bool, NodeError> {
        let resumed = self.report.resumed();
        let Some(replication) = replication else {
            return Ok(!resumed);
        };
        let (Some(runtime), Some(snapshots)) = (&self.runtime, &self.snapshots) else {
            return Err(NodeError::Replication("the node is stopping".into()));
        };
        let (written, started_from) = (snapshots.newest_written(), self.report.snapshot_seq);
        let newest = move || written().or(started_from);
        let next = started_from.unwrap_or(0) + 1;
        let pin = store::pin_of(config)?;
        let joined = group::join(replication, runtime.handle(), next, newest, pin)?;
        let status = joined.membership.status();
        self.membership = Some(joined.membership);
        self.diverged = Some(joined.diverged);
        self.name = Some(replication.config.node.clone());
        group::settle(&runtime.handle(), &status, resumed)
    }

    /// A handle to submit commands and reads through (any thread; cheap to clone).
    ///
    /// # Panics
    /// Never: the runtime is only taken by [`Node::stop`], which consumes the node.
    pub fn handle(&self) -> RuntimeHandle {
        self.runtime_handle()
    }

    /// Order entry on the node's runtime, for a gateway (HTTP, WebSocket, FIX).
    pub fn orders(&self) -> crate::orders::OrderService {
        crate::orders::OrderService::new(self.runtime_handle())
    }

    fn runtime_handle(&self) -> RuntimeHandle {
        match &self.runtime {
            Some(runtime) => runtime.handle(),
            None => unreachable!("a node's runtime is taken only when it stops"),
        }
    }

    /// The node's clock (system time, never behind the journal); an operator may advance it.
    pub fn clock(&self) -> &Arc<OffsetClock> {
        &self.clock
    }

    /// The definition's holders and their accounts by name.
    pub fn directory(&self) -> &Directory {
        &self.directory
    }

    /// Whether this start created the definition's holders (it found nothing written).
    pub fn provisioned(&self) -> bool {
        self.provisioned
    }

    /// What recovery found in the data directory.
    pub fn recovery(&self) -> &RecoveryReport {
        &self.report
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// On a group: this node's name and its role as its membership thread keeps it.
    pub fn group(&self) -> Option<(&str, Arc<NodeStatus>)> {
        let name = self.name.as_deref()?;
        Some((name, self.membership.as_ref()?.status()))
    }

    /// On a group: the secret the group agreed on (the first node's), once admitted.
    pub fn group_secret(&self) -> Option<String> {
        let status = self.membership.as_ref()?.status();
        status.secret().map(str::to_owned)
    }

    /// On a group, once: resolves with the reason if this node's state is found to differ
    /// from the leader's at a checkpoint (the node must then stop); `None` afterwards and
    /// for a node on its own journal.
    pub fn take_diverged(&mut self) -> Option<oneshot::Receiver<String>> {
        self.diverged.take()
    }

    /// Why the runtime stopped without being asked to (its log failed, a stage ended):
    /// the node takes no command any more; reopening it recovers every command it
    /// acknowledged.
    pub fn failure(&self) -> Option<String> {
        self.runtime.as_ref()?.handle().failure()
    }

    /// Stops: no more deadlines, the queue drained, the last snapshot written, the lease
    /// resigned (every command it acknowledged is in the log), the directory unlocked;
    /// returns the state as it ended.
    pub fn stop(mut self) -> Result<(Engine, MarketData), NodeError> {
        match self.halt() {
            Some(state) => Ok(state?),
            None => Err(NodeError::Runtime(
                matchbook::runtime::RuntimeError::Stopped,
            )),
        }
    }

    fn halt(&mut self) -> Option<Result<(Engine, MarketData), matchbook::runtime::RuntimeError>> {
        drop(self.deadlines.take());
        let state = self.runtime.take().map(Runtime::shutdown);
        // The runtime handed its last snapshot over as it stopped: wait for the file (its
        // outcome goes to the observer as every write's does).
        if let Some(snapshots) = self.snapshots.take() {
            let _ = snapshots.finish();
        }
        if let Some(membership) = self.membership.take() {
            membership.stop();
        }
        drop(self.lock.take());
        state
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}
