//! Starting and stopping the exchange: the engine runtime, provisioning, both listeners,
//! and a graceful stop (stop accepting, finish requests in flight, drain the engine queue,
//! hand the state back).

use std::net::SocketAddr;

use matchbook::Engine;
use matchbook::market::MarketData;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::Settings;
use crate::cursor::CursorSigner;
use crate::http::{admin_router, public_router};
use crate::net::listener::{LimitedListener, ListenerStats, Peer};
use crate::setup::IssuedKey;
use crate::startup;
pub use crate::startup::{CONFIG_COPY, KEY_STORE, ServerError};
use crate::state::Shared;
use axum::serve::Listener as _;

/// How long a stop waits for stream sessions to tell their clients and close.
const SESSIONS_CLOSE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

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
    /// The exchange node: runtime, data directory, snapshots, deadlines, group.
    node: matchbook_node::Node,
    /// The public listener's connection limits at work.
    pub public_connections: ListenerStats,
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
    /// Opens the exchange node, provisions the demo's liquidity and the keys, and starts
    /// both listeners.
    pub async fn start(settings: Settings) -> Result<Self, ServerError> {
        startup::prepare_data_dir(&settings)?;
        let cursors = CursorSigner::of_data_dir(&settings.data_dir)?;
        let (public, admin) = startup::bind_listeners(&settings).await?;
        let (addr, admin_addr) = (public.local_addr()?, admin.local_addr()?);
        let addresses = format!("http://{addr} http://{admin_addr}");
        let (observer, snapshot_status) = crate::snapshots::SnapshotStatus::observer();
        let (mut node, markets) =
            startup::open_node(&settings, addresses, &cursors, observer).await?;
        let shared = startup::SharedParts {
            markets,
            clock: node.clock().clone(),
            cursors: startup::settle_cursors(&node, cursors)?,
            snapshots: snapshot_status,
            connections: [public.stats(), admin.stats()],
        };
        let state = startup::app_state(&settings, &node, shared).await?;
        let issued_keys = startup::provision(&state, &settings, &node).await?;
        let public_connections = public.stats();
        let (stop, stopped) = watch::channel(false);
        let listeners = vec![
            tokio::spawn(serve(public, public_router(state.clone()), stopped.clone())),
            tokio::spawn(serve(admin, admin_router(state.clone()), stopped)),
        ];
        tracing::info!(%addr, %admin_addr, "matchbook exchange listening");
        let diverged = node.take_diverged();
        Ok(Self {
            addr,
            admin_addr,
            issued_keys,
            state,
            stop,
            listeners,
            node,
            public_connections,
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
            let mut every = tokio::time::interval(matchbook_node::CHECK_EVERY);
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
        let node = self.node;
        // The node drains the queue, writes its last snapshot and resigns its lease.
        let state = tokio::task::spawn_blocking(move || node.stop())
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
