//! Where the exchange's commands are made durable: the data directory's own journal, or,
//! with `--log`, the group's replicated log on NATS JetStream, written only while this
//! node holds the group's lease (it waits for it at start, and a keeper renews it). Either
//! way the state is recovered from the newest local snapshot and the commands after it.

use std::time::Duration;

use matchbook::Engine;
use matchbook::market::MarketData;
use matchbook::store::journal::CommandLog;
use matchbook::store::{self, Recovery, StoreOptions};
use matchbook_replica::node::{self, Keeper, Leadership, NodeConfig};
use tokio::sync::oneshot;

use crate::server::ServerError;

/// How long a starting node waits for the lease before it gives up.
const LEASE_PATIENCE: Duration = Duration::from_secs(120);

/// The recovered state, its log, and, on a replicated log, the lease keeper and word of
/// the lease being lost.
pub(crate) struct Durable {
    pub(crate) recovery: Recovery<Box<dyn CommandLog>>,
    pub(crate) keeper: Option<Keeper>,
    pub(crate) lease_lost: Option<oneshot::Receiver<()>>,
}

fn boxed<L: CommandLog + 'static>(r: Recovery<L>) -> Recovery<Box<dyn CommandLog>> {
    Recovery {
        engine: r.engine,
        market: r.market,
        journal: Box::new(r.journal),
        report: r.report,
        lock: r.lock,
        check: r.check,
    }
}

/// Recovers the state in `dir` with its commands from the local journal or, with
/// `replication`, from the group's log once this node leads.
pub(crate) async fn recover(
    dir: &std::path::Path,
    options: StoreOptions,
    replication: Option<&NodeConfig>,
    fresh: impl FnOnce() -> (Engine, MarketData) + Send + 'static,
) -> Result<Durable, ServerError> {
    let Some(config) = replication else {
        let recovery = store::recover(dir, options, fresh)?;
        return Ok(Durable {
            recovery: boxed(recovery),
            keeper: None,
            lease_lost: None,
        });
    };
    let (config, dir) = (config.clone(), dir.to_owned());
    tokio::task::spawn_blocking(move || {
        tracing::info!(node = %config.node, "waiting for the group's lease");
        let leadership = Leadership::acquire(&config, LEASE_PATIENCE)
            .map_err(|e| ServerError::Replication(e.to_string()))?;
        let term = leadership.term;
        tracing::info!(node = %config.node, term, "holding the lease: this node writes");
        let recovery =
            store::recover_with(&dir, fresh, |after| node::open_log(&config, term, after))?;
        let (lost, lease_lost) = oneshot::channel();
        let keeper = leadership.keep(&config, move || {
            let _ = lost.send(());
        });
        Ok(Durable {
            recovery: boxed(recovery),
            keeper: Some(keeper),
            lease_lost: Some(lease_lost),
        })
    })
    .await
    .map_err(|e| ServerError::Io(std::io::Error::other(e)))?
}
