//! The steps of starting a server, in order: the data directory made and checked against
//! `--keys-out`; both listeners bound; the exchange node opened on the directory (pin,
//! recovery, runtime, group, holders, deadlines: `matchbook-node`); the handlers' shared
//! state built; the demo's liquidity and the keys provisioned.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use matchbook::runtime::OffsetClock;
use matchbook::store::{self, SnapshotObserver, StoreOptions};
use matchbook_node::{Node, NodeBuilder, Replication};
use tokio::net::TcpListener;

use crate::auth::keys::KeyStore;
use crate::config::Settings;
use crate::cursor::CursorSigner;
use crate::markets::Markets;
use crate::net::listener::{ConnectionLimits, LimitedListener};
use crate::setup::{self, IssuedKey};
use crate::snapshots::SnapshotStatus;
use crate::state::{AppState, Shared};

/// Why the server could not start or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
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
    Keys(#[from] crate::auth::keys::KeyFileError),
    /// `--keys-out` names a file the data directory itself uses.
    #[error(
        "--keys-out {0} is a file of the data directory (keys, cursor key, journal, snapshots, \
         configuration or lock); write the issued keys somewhere else"
    )]
    KeysOutReserved(std::path::PathBuf),
    /// Provisioning.
    #[error(transparent)]
    Setup(#[from] crate::setup::SetupError),
    /// The data directory's cursor key.
    #[error(transparent)]
    CursorKey(#[from] crate::cursor::CursorKeyError),
    /// The engine runtime failed while stopping.
    #[error("engine runtime: {0}")]
    Runtime(#[from] matchbook::runtime::RuntimeError),
    /// The replicated log or its lease could not be reached.
    #[error("replication: {0}")]
    Replication(String),
    /// The exchange node could not open or stop (its directory, recovery, group or
    /// holders).
    #[error(transparent)]
    Node(#[from] matchbook_node::NodeError),
}

/// Copy, in the data directory, of the configuration file the exchange was first started
/// with (a restart without `--config` uses it).
pub const CONFIG_COPY: &str = "config.toml";

/// Name of the key store inside a data directory.
pub const KEY_STORE: &str = "keys.json";

/// The data directory made, and a `--keys-out` inside it that would overwrite one of its
/// files refused.
pub(crate) fn prepare_data_dir(settings: &Settings) -> Result<(), ServerError> {
    std::fs::create_dir_all(&settings.data_dir).map_err(|source| ServerError::DataDir {
        path: settings.data_dir.clone(),
        source,
    })?;
    if let Some(out) = &settings.keys_out {
        refuse_reserved_keys_out(&settings.data_dir, out)?;
    }
    Ok(())
}

/// The exchange node on the data directory, serving clients at `addresses` when it is a
/// member of a group, proposing the data directory's cursor key as the group's; with the
/// reference data of its markets. Opened on a blocking thread: recovery reads files and a
/// group member waits to be in step.
pub(crate) async fn open_node(
    settings: &Settings,
    addresses: String,
    cursors: &CursorSigner,
    observer: SnapshotObserver,
) -> Result<(Node, Markets), ServerError> {
    let store = StoreOptions {
        sync: settings.journal_sync,
        snapshot_every: settings.snapshot_every,
        keep_snapshots: settings.keep_snapshots,
    };
    let mut builder = NodeBuilder::new(settings.definition.clone(), &settings.data_dir)
        .engine_config(settings.engine.clone())
        .store(store)
        .queue_capacity(settings.queue_capacity)
        .history_limits(settings.history_limits)
        .observe_snapshots(observer);
    if let Some(text) = &settings.source {
        builder = builder.first_use_copy(CONFIG_COPY, text.clone());
    }
    if let Some(config) = &settings.replication {
        builder = builder.replicated(Replication {
            config: config.clone(),
            address: addresses,
            secret: Some(cursors.to_hex()),
        });
    }
    let opened = tokio::task::spawn_blocking(move || {
        let node = builder.open()?;
        let markets = node.handle().engine_blocking(Markets::of)?;
        Ok::<_, ServerError>((node, markets))
    });
    opened
        .await
        .map_err(|e| ServerError::Io(std::io::Error::other(e)))?
}

/// The cursor signer: the data directory's key, or, on a group, the group's (a cursor
/// one leader handed out is good on the next).
pub(crate) fn settle_cursors(node: &Node, own: CursorSigner) -> Result<CursorSigner, ServerError> {
    if node.group().is_none() {
        return Ok(own);
    }
    (node.group_secret().as_deref())
        .and_then(CursorSigner::from_hex)
        .ok_or_else(|| {
            ServerError::Replication("the group's recorded cursor key is not 64 hex digits".into())
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

/// The parts of the handlers' state made before it.
pub(crate) struct SharedParts {
    pub(crate) markets: Markets,
    pub(crate) clock: Arc<OffsetClock>,
    pub(crate) cursors: CursorSigner,
    pub(crate) snapshots: SnapshotStatus,
    /// The public and the admin listener's connections.
    pub(crate) connections: [crate::net::listener::ListenerStats; 2],
}

/// The handlers' shared state: keys, the group's keys, the streams' hub, the limits.
pub(crate) async fn app_state(
    settings: &Settings,
    node: &Node,
    parts: SharedParts,
) -> Result<Shared, ServerError> {
    let keys = Arc::new(KeyStore::open(Some(settings.data_dir.join(KEY_STORE)))?);
    let group_keys = match &settings.replication {
        Some(config) => Some(
            (matchbook_replica::group_keys::GroupKeys::open(config).await)
                .map_err(|e| ServerError::Replication(e.to_string()))?,
        ),
        None => None,
    };
    let hub = crate::ws::hub::Hub::start(
        node.handle(),
        parts.markets.clone(),
        parts.clock.clone(),
        settings.stream_buffer,
        settings.stream_ticker_interval,
    )?;
    Ok(Arc::new(AppState {
        runtime: node.handle(),
        orders: node.orders(),
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
        streams: crate::ws::streams::Streams::new(hub, settings.stream_heartbeat),
        node: node.group().map(|(name, status)| crate::state::NodeView {
            name: name.to_owned(),
            status,
        }),
        group_keys,
        http_public: Default::default(),
        http_admin: Default::default(),
        snapshots: parts.snapshots,
        connections: parts.connections,
    }))
}

/// The demo's liquidity when this start provisioned the holders, then the keys: the demo
/// keys only from a stand-alone exchange or the node that provisions a group (the others
/// take them from the group's keys or a copy of its key file).
pub(crate) async fn provision(
    state: &Shared,
    settings: &Settings,
    node: &Node,
) -> Result<Vec<IssuedKey>, ServerError> {
    let (directory, provisioned) = (node.directory(), node.provisioned());
    if settings.demo
        && provisioned
        && let Some(maker) = directory.get("market-maker")
        && let Some(&maker) = maker.accounts.get("main")
    {
        setup::seed_demo_liquidity(state, maker).await?;
    }
    let issue_demo_keys = node.group().is_none() || provisioned;
    let issued_keys = setup::install_keys(state, settings, directory, issue_demo_keys).await?;
    if let Some(group) = &state.group_keys {
        crate::auth::group_keys::share(state.keys.clone(), group)
            .await
            .map_err(|e| ServerError::Replication(e.to_string()))?;
    }
    Ok(issued_keys)
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
