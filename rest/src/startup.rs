//! The steps of starting a server, in order: the data directory made, pinned and
//! recovered; the runtime started on it; both listeners bound; a replicated node joined to
//! its group; the handlers' shared state built; holders, balances and keys provisioned.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use matchbook::Engine;
use matchbook::market::{MarketData, MarketDataConfig};
use matchbook::runtime::{Clock, OffsetClock, Runtime, SnapshotPlan};
use matchbook::store::{self, RecoveryReport, SnapshotWriter, StoreOptions};
use tokio::net::TcpListener;

use crate::config::Settings;
use crate::cursor::CursorSigner;
use crate::durability::{Node, StartState};
use crate::keys::KeyStore;
use crate::listener::{ConnectionLimits, LimitedListener};
use crate::markets::Markets;
use crate::server::{CONFIG_COPY, KEY_STORE, ServerError};
use crate::setup::{self, IssuedKey};
use crate::snapshots::SnapshotStatus;
use crate::state::{AppState, Shared};

/// The data directory made (and checked against `--keys-out`), pinned to this
/// configuration, and its state recovered; what was skipped or cut off is logged.
pub(crate) fn recover_state(settings: &Settings) -> Result<StartState, ServerError> {
    std::fs::create_dir_all(&settings.data_dir).map_err(|source| ServerError::DataDir {
        path: settings.data_dir.clone(),
        source,
    })?;
    if let Some(out) = &settings.keys_out {
        refuse_reserved_keys_out(&settings.data_dir, out)?;
    }
    pin_config(settings)?;
    let fresh = Engine::new(settings.engine.clone())?;
    let options = StoreOptions {
        sync: settings.journal_sync,
        snapshot_every: settings.snapshot_every,
        keep_snapshots: settings.keep_snapshots,
    };
    let started = std::time::Instant::now();
    let limits = settings.history_limits;
    let recovered = crate::durability::recover(
        &settings.data_dir,
        options,
        settings.replication.as_ref(),
        move || {
            let instruments = fresh.instruments().len();
            let mut market = MarketData::new(instruments, MarketDataConfig::default());
            market.set_history_limits(limits);
            (fresh, market)
        },
    )?;
    log_recovery(&recovered.report, started);
    Ok(recovered)
}

fn log_recovery(report: &RecoveryReport, started: std::time::Instant) {
    for (path, reason) in &report.skipped_snapshots {
        tracing::warn!(path = %path.display(), reason, "snapshot skipped");
    }
    if report.truncated > 0 {
        tracing::warn!(
            bytes = report.truncated,
            "journal ended in a torn record; it was cut off"
        );
    }
    if report.resumed() {
        tracing::info!(
            snapshot = report.snapshot_seq,
            replayed = report.replayed,
            millis = started.elapsed().as_millis() as u64,
            "state recovered from the data directory"
        );
    }
}

/// The exchange's clock, never behind the journal: an operator's clock advance survives a
/// restart.
pub(crate) fn clock_not_behind(engine: &Engine) -> Arc<OffsetClock> {
    let clock = Arc::new(OffsetClock::default());
    let behind = engine.now().0 - clock.now().0;
    if behind > 0 {
        // The journal's times are inside the horizon, so this advance is too.
        let _ = clock.advance(behind);
    }
    clock
}

/// What the runtime starts from: the recovered state and its journal (`None`: a node of a
/// group, which follows the group's log).
pub(crate) struct RuntimeParts {
    pub(crate) engine: Engine,
    pub(crate) market: MarketData,
    pub(crate) journal: Option<Box<dyn matchbook::store::journal::CommandLog>>,
}

/// The runtime on the recovered state, writing its snapshots to `snapshots`: durable on
/// the journal, or a follower of the group's log from the command after the snapshot.
pub(crate) fn start_runtime(
    settings: &Settings,
    parts: RuntimeParts,
    clock: &Arc<OffsetClock>,
    snapshots: &SnapshotWriter,
    report: &RecoveryReport,
) -> Result<Runtime, ServerError> {
    let plan = SnapshotPlan {
        every: settings.snapshot_every,
        on_stop: true,
        sink: snapshots.sink(),
        resumes_after: report.snapshot_seq.unwrap_or(0) + report.replayed as u64,
    };
    let (engine, market, capacity) = (parts.engine, parts.market, settings.queue_capacity);
    Ok(match parts.journal {
        Some(journal) => {
            Runtime::start_durable(engine, market, clock.clone(), capacity, journal, Some(plan))?
        }
        None => {
            // A node of a group follows the log from its snapshot until it holds the lease.
            let next = report.snapshot_seq.unwrap_or(0) + 1;
            Runtime::start_follower(engine, market, clock.clone(), capacity, next, Some(plan))?
        }
    })
}

/// The public and admin listeners, each with the connection limits and trusted proxies.
pub(crate) async fn bind_listeners(
    settings: &Settings,
) -> Result<(LimitedListener, LimitedListener), ServerError> {
    let limited = |listener| {
        LimitedListener::new(
            listener,
            ConnectionLimits {
                max_connections: settings.max_connections,
                max_per_address: settings.max_connections_per_address,
                idle: settings.idle_timeout,
                head: settings.header_timeout,
            },
        )
        .trusting(settings.trusted_proxies.clone())
    };
    let bind = |address: SocketAddr| async move {
        TcpListener::bind(address)
            .await
            .map_err(|source| ServerError::Bind { address, source })
    };
    let public = limited(bind(settings.bind).await?);
    let admin = limited(bind(settings.admin_bind).await?);
    Ok((public, admin))
}

/// On a replicated log, this node joined to its group (serving clients at `addresses`);
/// `None` for a stand-alone exchange.
pub(crate) fn join_group(
    settings: &Settings,
    addresses: String,
    runtime: &Runtime,
    snapshots: &SnapshotWriter,
    report: &RecoveryReport,
    cursors: &CursorSigner,
) -> Result<Option<Node>, ServerError> {
    let Some(config) = &settings.replication else {
        return Ok(None);
    };
    let (written, started_from) = (snapshots.newest_written(), report.snapshot_seq);
    let newest = move || written().or(started_from);
    let next = report.snapshot_seq.unwrap_or(0) + 1;
    let pin = store::pin_of(&settings.engine)?;
    let handle = runtime.handle();
    let node = crate::durability::join(
        config,
        addresses,
        handle,
        next,
        newest,
        pin,
        cursors.to_hex(),
    )?;
    Ok(Some(node))
}

/// Whether this start provisions holders and opening balances, and the cursor signer.
/// They are commands like any other: on a restart they come back from the journal (or the
/// group's log), so they are provisioned only into an empty one, by the node that writes
/// it. A node of a group signs cursors with the group's key, known once it is admitted.
pub(crate) async fn settle_membership(
    runtime: &Runtime,
    node: Option<&Node>,
    resumed: bool,
    cursors: CursorSigner,
) -> Result<(bool, CursorSigner), ServerError> {
    match node {
        Some(node) => {
            let status = node.membership.status();
            let provision = crate::durability::settle(&runtime.handle(), &status, resumed).await?;
            Ok((provision, crate::durability::group_cursors(&status)?))
        }
        None => Ok((!resumed, cursors)),
    }
}

/// The parts of the handlers' state made before it.
pub(crate) struct SharedParts {
    pub(crate) markets: Markets,
    pub(crate) clock: Arc<OffsetClock>,
    pub(crate) cursors: CursorSigner,
    pub(crate) snapshots: SnapshotStatus,
    /// The public and the admin listener's connections.
    pub(crate) connections: [crate::listener::ListenerStats; 2],
}

/// The handlers' shared state: keys, the group's keys, the streams' hub, the limits.
pub(crate) async fn app_state(
    settings: &Settings,
    runtime: &Runtime,
    parts: SharedParts,
    node: Option<&Node>,
) -> Result<Shared, ServerError> {
    let keys = Arc::new(KeyStore::open(Some(settings.data_dir.join(KEY_STORE)))?);
    let group_keys = match &settings.replication {
        Some(config) => Some(
            (matchbook_replica::group_keys::GroupKeys::open(config).await)
                .map_err(|e| ServerError::Replication(e.to_string()))?,
        ),
        None => None,
    };
    let hub = crate::streams::hub::Hub::start(
        runtime.handle(),
        parts.markets.clone(),
        parts.clock.clone(),
        settings.stream_buffer,
        settings.stream_ticker_interval,
    )?;
    Ok(Arc::new(AppState {
        runtime: runtime.handle(),
        markets: parts.markets,
        keys,
        clock: parts.clock,
        cursors: parts.cursors,
        rate_limit: settings.rate_limit_per_minute,
        data_dir: settings.data_dir.clone(),
        body_timeout: settings.header_timeout,
        public_rate_limit: settings.public_rate_limit_per_minute,
        address_windows: Default::default(),
        trusted_proxies: settings.trusted_proxies.clone(),
        max_book_depth: settings.max_book_depth,
        streams: crate::streams::Streams::new(hub, settings.stream_heartbeat),
        node: node.map(|n| crate::state::NodeView {
            name: n.name.clone(),
            status: n.membership.status(),
        }),
        group_keys,
        http_public: Default::default(),
        http_admin: Default::default(),
        snapshots: parts.snapshots,
        connections: parts.connections,
    }))
}

/// Holders, opening balances and the demo's liquidity when this start `provision`s (else
/// the directory of holders already applied), then the keys: the demo keys only from a
/// stand-alone exchange or the node that provisions a group (the others take them from
/// the group's keys or a copy of its key file).
pub(crate) async fn provision(
    state: &Shared,
    settings: &Settings,
    provision: bool,
    standalone: bool,
) -> Result<Vec<IssuedKey>, ServerError> {
    let directory = if provision {
        setup::provision(state, &settings.definition.holders).await?
    } else {
        setup::directory_when_applied(state, &settings.definition.holders).await?
    };
    if settings.demo
        && provision
        && let Some((_, accounts)) = directory.get("market-maker")
        && let Some(&maker) = accounts.get("main")
    {
        setup::seed_demo_liquidity(state, maker).await?;
    }
    let issue_demo_keys = standalone || provision;
    let issued_keys = setup::install_keys(state, settings, &directory, issue_demo_keys).await?;
    if let Some(group) = &state.group_keys {
        crate::group_keys::share(state.keys.clone(), group).await?;
    }
    Ok(issued_keys)
}

/// Refuses a data directory whose journal was written under another engine configuration
/// (replaying it would give another state); records the configuration, and a copy of its
/// file, on first use.
fn pin_config(settings: &Settings) -> Result<(), ServerError> {
    let dir = &settings.data_dir;
    let first_use = !dir.join(store::CONFIG_PIN).exists();
    // The copy first, whole or not at all: a crash between the two writes then leaves a
    // directory that is still on its first use, not a pin without the file it pins.
    if first_use && let Some(text) = &settings.source {
        matchbook::store::write_file_atomically(&dir.join(CONFIG_COPY), text.as_bytes())?;
    }
    store::pin_config(dir, &settings.engine, &format!("{:?}", settings.engine))?;
    record_definition(settings)
}

/// Records the definition of the pinned configuration beside the pin, once, for readers of
/// the directory (Python's `Engine.load`, C's `mb_engine_load`) to build it again. Not
/// written for a configuration its definition does not build (one an embedding program
/// changed in code): a reader would build another.
fn record_definition(settings: &Settings) -> Result<(), ServerError> {
    let path = settings
        .data_dir
        .join(matchbook_config::RECORDED_DEFINITION);
    if path.exists() {
        return Ok(());
    }
    let Ok(built) = settings.definition.engine_config() else {
        return Ok(());
    };
    if store::pin_of(&built)? != store::pin_of(&settings.engine)? {
        return Ok(());
    }
    let text = serde_json::to_string_pretty(&settings.definition)
        .map_err(|e| ServerError::Io(std::io::Error::other(e)))?;
    matchbook::store::write_file_atomically(&path, text.as_bytes())?;
    Ok(())
}

/// Refuses a `--keys-out` that is one of the data directory's own files (the key store,
/// whose digests plaintext keys would replace, the journal, snapshots, configuration copy
/// and pin, the lock, or a temporary file of theirs).
fn refuse_reserved_keys_out(data_dir: &Path, out: &Path) -> Result<(), ServerError> {
    let in_data_dir = match (out.parent(), std::fs::canonicalize(data_dir)) {
        (Some(parent), Ok(dir)) => {
            let parent = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            std::fs::canonicalize(parent).is_ok_and(|p| p == dir)
        }
        _ => false,
    };
    let name = out.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let reserved = [KEY_STORE, CONFIG_COPY, store::CONFIG_PIN, store::LOCK_FILE].contains(&name)
        || ["journal-", "snapshot-", "keys.", "config.", "cursor."]
            .iter()
            .any(|prefix| name.starts_with(prefix));
    if in_data_dir && reserved {
        return Err(ServerError::KeysOutReserved(out.to_owned()));
    }
    Ok(())
}
