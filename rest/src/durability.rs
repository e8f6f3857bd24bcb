//! Where the exchange's commands are made durable: the data directory's own journal, or,
//! with `--log`, the group's replicated log on NATS JetStream. A node of a group starts
//! from its newest local snapshot as a follower of the log (a hot standby that serves
//! reads and streams); its membership thread makes it the writer while it holds the
//! group's lease. This module recovers the state, joins the group, and waits until the
//! node is in step with it before the server provisions anything.

use std::time::{Duration, Instant};

use matchbook::Engine;
use matchbook::market::MarketData;
use matchbook::runtime::RuntimeHandle;
use matchbook::store::journal::{CommandLog, Recovered};
use matchbook::store::{self, Recovery, StoreOptions};
use matchbook_replica::member::{Joining, Membership, NodeStatus};
use matchbook_replica::node::NodeConfig;
use tokio::sync::oneshot;

use crate::cursor::CursorSigner;
use crate::server::ServerError;

/// How long a starting node waits to be in step with its group before it gives up.
const SETTLE_PATIENCE: Duration = Duration::from_secs(120);

/// The recovered state and its log: the local journal, or `None` on a replicated log
/// (the node follows it until it leads).
pub(crate) type StartState = Recovery<Option<Box<dyn CommandLog>>>;

/// Recovers the state in `dir`: from the newest snapshot and the local journal, or, with
/// `replication`, from the newest snapshot alone (the log supplies the rest).
pub(crate) fn recover(
    dir: &std::path::Path,
    options: StoreOptions,
    replication: Option<&NodeConfig>,
    fresh: impl FnOnce() -> (Engine, MarketData),
) -> Result<StartState, ServerError> {
    if replication.is_some() {
        let none = |_| {
            let log: Option<Box<dyn CommandLog>> = None;
            let rest = Recovered {
                entries: Vec::new(),
                truncated: 0,
            };
            Ok((log, rest))
        };
        return Ok(store::recover_with(dir, fresh, none)?);
    }
    let r = store::recover(dir, options, fresh)?;
    Ok(Recovery {
        engine: r.engine,
        market: r.market,
        journal: Some(Box::new(r.journal)),
        report: r.report,
        lock: r.lock,
        check: r.check,
    })
}

/// This node's place in its group.
pub(crate) struct Node {
    /// Its name.
    pub(crate) name: String,
    /// The thread keeping it in its role.
    pub(crate) membership: Membership,
    /// Resolves with the reason if the node's state is found to differ from the leader's.
    pub(crate) diverged: oneshot::Receiver<String>,
}

/// Joins the group with the runtime (a follower on the state before command `next`);
/// `addresses` is where this node serves clients, for the others to forward to;
/// `snapshot` says the command of its newest local snapshot; `config_pin` is its exchange
/// configuration's digest; `secret` is its cursor key, proposed as the group's.
pub(crate) fn join(
    config: &NodeConfig,
    addresses: String,
    handle: RuntimeHandle,
    next: u64,
    snapshot: impl Fn() -> Option<u64> + Send + 'static,
    config_pin: String,
    secret: String,
) -> Result<Node, ServerError> {
    let (tell, diverged) = oneshot::channel();
    let joining = Joining {
        address: addresses,
        handle,
        next,
        snapshot: Box::new(snapshot),
        diverged: Box::new(move |why| {
            let _ = tell.send(why);
        }),
        config_pin,
        secret,
    };
    Ok(Node {
        name: config.node.clone(),
        membership: Membership::start(config.clone(), joining)?,
        diverged,
    })
}

/// Waits until the node is in step with its group: it leads, or it is admitted (its own
/// name, the group's configuration) and follows a log that some leader has written and has applied what the log held. Returns whether this node
/// is to provision the exchange (it leads a group whose log is empty, and `resumed` says
/// it has no state of its own either).
pub(crate) async fn settle(
    handle: &RuntimeHandle,
    status: &NodeStatus,
    resumed: bool,
) -> Result<bool, ServerError> {
    let deadline = Instant::now() + SETTLE_PATIENCE;
    loop {
        if let Some(problem) = status.problem() {
            return Err(ServerError::Replication(problem));
        }
        if status.is_leading() {
            return Ok(status.log_end() == 0 && !resumed);
        }
        let applied = handle.stats().market;
        let written = status.log_end() > 0 || resumed;
        // A follower serves only once admitted (a twin, or another configuration, is refused).
        if status.admitted() && status.caught_up() && written && applied >= status.log_end() {
            return Ok(false);
        }
        if Instant::now() >= deadline {
            return Err(ServerError::Replication(
                "neither leading nor following a written log after 120 s".into(),
            ));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The cursor signer of an admitted node: the group's key, so that a cursor one leader
/// handed out is good on the next.
pub(crate) fn group_cursors(status: &NodeStatus) -> Result<CursorSigner, ServerError> {
    status
        .secret()
        .and_then(CursorSigner::from_hex)
        .ok_or_else(|| {
            ServerError::Replication("the group's recorded cursor key is not 64 hex digits".into())
        })
}
