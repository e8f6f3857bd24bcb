//! Starting and stopping the exchange: the engine runtime, provisioning, both listeners,
//! and a graceful stop (stop accepting, finish requests in flight, drain the engine queue,
//! hand the state back).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use matchbook::Engine;
use matchbook::market::{MarketData, MarketDataConfig};
use matchbook::runtime::{Clock, OffsetClock, Runtime, SnapshotPlan};
use matchbook::store::{self, DirLock, Recovery, SnapshotWriter, StoreOptions};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::Settings;
use crate::cursor::CursorSigner;
use crate::keys::KeyStore;
use crate::listener::{ConnectionLimits, LimitedListener, ListenerStats, Peer};
use crate::markets::Markets;
use crate::routes::{admin_router, public_router};
use crate::setup::{self, IssuedKey, SetupError};
use crate::state::{AppState, Shared};
use axum::serve::Listener as _;

/// Why the server could not start or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
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
    /// A listener's address cannot be bound (in use, not this machine's).
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// Keys.
    #[error(transparent)]
    Keys(#[from] crate::keys::KeyFileError),
    /// `--keys-out` names a file the data directory itself uses.
    #[error(
        "--keys-out {0} is a file of the data directory (keys, cursor key, journal, snapshots, \
         configuration or lock); write the issued keys somewhere else"
    )]
    KeysOutReserved(std::path::PathBuf),
    /// Provisioning.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The data directory's cursor key.
    #[error(transparent)]
    CursorKey(#[from] crate::cursor::CursorKeyError),
    /// The engine runtime failed while stopping.
    #[error("engine runtime: {0}")]
    Runtime(#[from] matchbook::runtime::RuntimeError),
    /// The journal or snapshots could not be opened or recovered.
    #[error(transparent)]
    Store(#[from] matchbook::store::StoreError),
    /// The replicated log or its lease could not be reached.
    #[error("replication: {0}")]
    Replication(String),
}

/// Copy, in the data directory, of the configuration file the exchange was first started
/// with (a restart without `--config` uses it).
pub const CONFIG_COPY: &str = "config.toml";

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

/// Name of the key store inside a data directory.
pub const KEY_STORE: &str = "keys.json";

/// How long a stop waits for stream sessions to tell their clients and close.
const SESSIONS_CLOSE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

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

/// A running exchange.
pub struct Server {
    /// Public address (the actual port when 0 was asked for).
    pub addr: SocketAddr,
    /// Admin address.
    pub admin_addr: SocketAddr,
    /// Keys created at this start (demo mode, first start only).
    pub issued_keys: Vec<IssuedKey>,
    /// Handler state (for embedding and tests).
    pub state: Shared,
    stop: watch::Sender<bool>,
    listeners: Vec<JoinHandle<std::io::Result<()>>>,
    runtime: Runtime,
    snapshots: SnapshotWriter,
    /// The data directory's writer lock, released when the server has stopped.
    _lock: DirLock,
    /// The public listener's connection limits at work.
    pub public_connections: ListenerStats,
    /// On a replicated log: the thread keeping this node in its role (a leader resigns
    /// the lease when it stops, once the runtime has stopped).
    membership: Option<matchbook_replica::member::Membership>,
    diverged: Option<tokio::sync::oneshot::Receiver<String>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("addr", &self.addr)
            .field("admin_addr", &self.admin_addr)
            .finish()
    }
}

async fn serve(
    listener: LimitedListener,
    router: axum::Router,
    mut stop: watch::Receiver<bool>,
) -> std::io::Result<()> {
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<Peer>(),
    )
    .with_graceful_shutdown(async move {
        let _ = stop.wait_for(|s| *s).await;
    })
    .await
}

impl Server {
    /// Builds the engine, provisions holders and keys, and starts both listeners.
    pub async fn start(settings: Settings) -> Result<Self, ServerError> {
        std::fs::create_dir_all(&settings.data_dir).map_err(|source| ServerError::DataDir {
            path: settings.data_dir.clone(),
            source,
        })?;
        if let Some(out) = &settings.keys_out {
            refuse_reserved_keys_out(&settings.data_dir, out)?;
        }
        pin_config(&settings)?;
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
        let Recovery {
            engine,
            market,
            journal,
            report,
            lock,
            check,
        } = recovered;
        for (path, reason) in &report.skipped_snapshots {
            tracing::warn!(path = %path.display(), reason, "snapshot skipped");
        }
        if report.truncated > 0 {
            tracing::warn!(
                bytes = report.truncated,
                "journal ended in a torn record; it was cut off"
            );
        }
        let resumed = report.resumed();
        if resumed {
            tracing::info!(
                snapshot = report.snapshot_seq,
                replayed = report.replayed,
                millis = started.elapsed().as_millis() as u64,
                "state recovered from the data directory"
            );
        }
        let markets = Markets::of(&engine);
        let clock = Arc::new(OffsetClock::default());
        // An operator's clock advance survives a restart: never run behind the journal.
        let behind = engine.now().0 - clock.now().0;
        if behind > 0 {
            // The journal's times are inside the horizon, so this advance is too.
            let _ = clock.advance(behind);
        }
        let cursors = CursorSigner::of_data_dir(&settings.data_dir)?;
        let (observer, snapshot_status) = crate::snapshots::SnapshotStatus::observer();
        let (dir, keep) = (settings.data_dir.clone(), settings.keep_snapshots);
        let snapshots = SnapshotWriter::observed(dir, keep, check, observer)?;
        let plan = SnapshotPlan {
            every: settings.snapshot_every,
            on_stop: true,
            sink: snapshots.sink(),
            resumes_after: report.snapshot_seq.unwrap_or(0) + report.replayed as u64,
        };
        let capacity = settings.queue_capacity;
        // A node of a group follows the log from its snapshot until it holds the lease.
        let next = report.snapshot_seq.unwrap_or(0) + 1;
        let runtime = match journal {
            Some(journal) => {
                let log_clock = clock.clone();
                Runtime::start_durable(engine, market, log_clock, capacity, journal, Some(plan))?
            }
            None => {
                Runtime::start_follower(engine, market, clock.clone(), capacity, next, Some(plan))?
            }
        };
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
        let (addr, admin_addr) = (public.local_addr()?, admin.local_addr()?);
        let node = match &settings.replication {
            Some(config) => {
                let addresses = format!("http://{addr} http://{admin_addr}");
                let (written, started_from) = (snapshots.newest_written(), report.snapshot_seq);
                let newest = move || written().or(started_from);
                let handle = runtime.handle();
                let pin = store::pin_of(&settings.engine)?;
                let secret = cursors.to_hex();
                let node =
                    crate::durability::join(config, addresses, handle, next, newest, pin, secret)?;
                Some(node)
            }
            None => None,
        };
        // Holders and opening balances are commands like any other: on a restart they
        // come back from the journal (or the group's log), so they are provisioned only
        // into an empty one, by the node that writes it. A node of a group signs cursors
        // with the group's key, known once it is admitted.
        let (provision, cursors) = match &node {
            Some(node) => {
                let status = node.membership.status();
                let provision =
                    crate::durability::settle(&runtime.handle(), &status, resumed).await?;
                (provision, crate::durability::group_cursors(&status)?)
            }
            None => (!resumed, cursors),
        };
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
            markets.clone(),
            clock.clone(),
            settings.stream_buffer,
            settings.stream_ticker_interval,
        )?;
        let state: Shared = Arc::new(AppState {
            runtime: runtime.handle(),
            markets,
            keys,
            clock,
            cursors,
            rate_limit: settings.rate_limit_per_minute,
            data_dir: settings.data_dir.clone(),
            body_timeout: settings.header_timeout,
            public_rate_limit: settings.public_rate_limit_per_minute,
            address_windows: Default::default(),
            trusted_proxies: settings.trusted_proxies.clone(),
            max_book_depth: settings.max_book_depth,
            streams: crate::streams::Streams::new(hub, settings.stream_heartbeat),
            node: node.as_ref().map(|n| crate::state::NodeView {
                name: n.name.clone(),
                status: n.membership.status(),
            }),
            group_keys,
            http_public: Default::default(),
            http_admin: Default::default(),
            snapshots: snapshot_status,
        });
        let directory = if provision {
            setup::provision(&state, &settings.definition.holders).await?
        } else {
            setup::directory_when_applied(&state, &settings.definition.holders).await?
        };
        if settings.demo
            && provision
            && let Some((_, accounts)) = directory.get("market-maker")
            && let Some(&maker) = accounts.get("main")
        {
            setup::seed_demo_liquidity(&state, maker).await?;
        }
        // Only the node that provisions a group issues the demo keys: the others take
        // them from the group's keys (or a copy of its key file).
        let issue_demo_keys = node.is_none() || provision;
        let issued_keys =
            setup::install_keys(&state, &settings, &directory, issue_demo_keys).await?;
        if let Some(group) = &state.group_keys {
            crate::group_keys::share(state.keys.clone(), group).await?;
        }
        let public_connections = public.stats();
        let (stop, stopped) = watch::channel(false);
        let listeners = vec![
            tokio::spawn(serve(public, public_router(state.clone()), stopped.clone())),
            tokio::spawn(serve(admin, admin_router(state.clone()), stopped.clone())),
            tokio::spawn(crate::deadlines::keep(state.clone(), stopped)),
        ];
        tracing::info!(%addr, %admin_addr, "matchbook exchange listening");
        let (membership, diverged) = match node {
            Some(node) => (Some(node.membership), Some(node.diverged)),
            None => (None, None),
        };
        Ok(Self {
            addr,
            admin_addr,
            issued_keys,
            state,
            stop,
            listeners,
            runtime,
            snapshots,
            _lock: lock,
            public_connections,
            membership,
            diverged,
        })
    }

    /// Resolves, with the reason, if this node's state is found to differ from its group
    /// leader's at a checkpoint: the server must then stop. Never resolves otherwise.
    pub fn diverged(&mut self) -> impl std::future::Future<Output = String> + use<> {
        let diverged = self.diverged.take();
        async move {
            match diverged {
                Some(diverged) => match diverged.await {
                    Ok(why) => why,
                    Err(_) => std::future::pending::<String>().await,
                },
                None => std::future::pending::<String>().await,
            }
        }
    }

    /// Resolves, with the reason, once the engine runtime has stopped without being asked
    /// to (its command log failed: a full disk, an I/O error; or a stage ended): the node
    /// takes no command any more and must stop; a restart recovers every command it
    /// acknowledged. Never resolves otherwise.
    pub fn runtime_failed(&self) -> impl std::future::Future<Output = String> + use<> {
        let state = self.state.clone();
        async move {
            let mut every = tokio::time::interval(crate::deadlines::CHECK_EVERY);
            loop {
                every.tick().await;
                if let Some(why) = state.runtime.failure() {
                    return why;
                }
            }
        }
    }

    /// Stops gracefully and returns the engine and market data as they ended.
    pub async fn stop(self) -> Result<(Engine, MarketData), ServerError> {
        let _ = self.stop.send(true);
        // Stream sessions outlive the listeners' drain (an upgraded connection is no
        // request): each is told and closed here, before the process ends under it.
        self.state.streams.close_all(SESSIONS_CLOSE_WAIT).await;
        for listener in self.listeners {
            if let Ok(result) = listener.await {
                result?;
            }
        }
        let (runtime, snapshots, membership) = (self.runtime, self.snapshots, self.membership);
        let state = tokio::task::spawn_blocking(move || {
            let state = runtime.shutdown();
            // The runtime handed its last snapshot over as it stopped: wait for the file
            // (its outcome is logged as every write's is).
            let _ = snapshots.finish();
            // Resigned only now: every command it acknowledged is in the log.
            if let Some(membership) = membership {
                membership.stop();
            }
            state
        })
        .await
        .map_err(|e| ServerError::Io(std::io::Error::other(e)))??;
        tracing::info!("matchbook exchange stopped");
        Ok(state)
    }
}

/// Prints the keys created at first start (the only time their text is shown).
pub fn print_issued_keys(keys: &[IssuedKey]) {
    if keys.is_empty() {
        return;
    }
    println!("API keys created at first start (kept as digests; shown only now):");
    for k in keys {
        let scopes: Vec<String> = k
            .scopes
            .iter()
            .map(|s| {
                serde_json::to_value(s)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            })
            .collect();
        println!(
            "  {}  account {} ({})  scopes {}",
            k.key,
            k.account,
            k.account_id,
            scopes.join(",")
        );
    }
}
