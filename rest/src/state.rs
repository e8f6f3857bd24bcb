//! What every handler shares: the runtime handle, reference data, keys, clock, cursor
//! signer and limits; and the ways a handler reaches the engine (submit a command; read the
//! engine replica or market data, both on the runtime's market stage, never the matching
//! thread, and including every command acknowledged before the read), each awaiting its
//! answer without blocking a worker thread.

use std::sync::Arc;

use matchbook::market::MarketData;
use matchbook::runtime::{Clock, OffsetClock, Outcome, ReadView, RuntimeError, RuntimeHandle};
use matchbook::{Command, Engine, Timestamp};
use tokio::sync::oneshot;

use crate::auth::keys::KeyStore;
use crate::cursor::CursorSigner;
use crate::error::ApiError;
use crate::markets::Markets;

/// Shared handler state.
#[derive(Debug)]
pub struct AppState {
    /// Way into the engine.
    pub runtime: RuntimeHandle,
    /// Order entry on it, for every gateway.
    pub orders: matchbook_node::orders::OrderService,
    /// Reference data.
    pub markets: Markets,
    /// Accepted keys.
    pub keys: Arc<KeyStore>,
    /// The exchange clock.
    pub clock: Arc<OffsetClock>,
    /// Cursor signer.
    pub cursors: CursorSigner,
    /// Requests per minute on rate-limited endpoints.
    pub rate_limit: u32,
    /// Where keys (and, with the journal, state) are kept.
    pub data_dir: std::path::PathBuf,
    /// How long a request body may take to arrive once its headers are in.
    pub body_timeout: std::time::Duration,
    /// Requests per minute from one address that carry no valid key (public routes).
    pub public_rate_limit: u32,
    /// Their windows.
    pub address_windows: crate::net::ratelimit::AddressWindows,
    /// Proxies whose `X-Forwarded-For` names a request's client.
    pub trusted_proxies: crate::net::proxies::TrustedProxies,
    /// Price levels per side the order book answers with at most.
    pub max_book_depth: usize,
    /// WebSocket streams.
    pub streams: crate::ws::streams::Streams,
    /// On a replicated log: this node and its role in the group.
    pub node: Option<NodeView>,
    /// On a replicated log: the keys the group shares (what this node issues and revokes
    /// goes there too).
    pub group_keys: Option<matchbook_replica::group_keys::GroupKeys>,
    /// The public listener's answers, for `/admin/metrics`.
    pub http_public: crate::metrics::HttpMetrics,
    /// The admin listener's answers, for `/admin/metrics`.
    pub http_admin: crate::metrics::HttpMetrics,
    /// The snapshot writer's status (for `/admin/metrics` and `POST /admin/snapshot`).
    pub snapshots: crate::snapshots::SnapshotStatus,
    /// The public and the admin listener's connections, for `/admin/metrics`.
    pub connections: [crate::net::listener::ListenerStats; 2],
}

/// A node of a replicated group as the handlers see it.
#[derive(Debug, Clone)]
pub struct NodeView {
    /// Its name.
    pub name: String,
    /// Its role and the group as it knows them.
    pub status: Arc<matchbook_replica::member::NodeStatus>,
}

/// The state as handlers receive it.
pub type Shared = Arc<AppState>;

fn stopped<E>(_: E) -> ApiError {
    ApiError::Runtime(RuntimeError::Stopped)
}

impl AppState {
    /// The answer counters of `listener`.
    pub fn http(&self, listener: crate::metrics::Listener) -> &crate::metrics::HttpMetrics {
        match listener {
            crate::metrics::Listener::Public => &self.http_public,
            crate::metrics::Listener::Admin => &self.http_admin,
        }
    }

    /// Exchange time now.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The current minute (rate-limit window).
    pub fn minute(&self) -> u64 {
        u64::try_from(self.now().0 / 60_000_000_000).unwrap_or(0)
    }

    /// Applies a command and awaits its outcome.
    pub async fn submit(&self, command: Command) -> Result<Outcome, ApiError> {
        let (tx, rx) = oneshot::channel();
        self.runtime.submit(command, move |o| {
            let _ = tx.send(o);
        })?;
        rx.await.map_err(stopped)
    }

    /// Reads the engine replica on the market stage.
    pub async fn engine<R: Send + 'static>(
        &self,
        read: impl FnOnce(&Engine) -> R + Send + 'static,
    ) -> Result<R, ApiError> {
        let (tx, rx) = oneshot::channel();
        self.runtime.read_engine(move |e| {
            let _ = tx.send(read(e));
        })?;
        rx.await.map_err(stopped)
    }

    /// Reads the engine replica and market data together, as of one command (on the
    /// market stage, after every command acknowledged before the read).
    pub async fn view<R: Send + 'static>(
        &self,
        read: impl FnOnce(&ReadView<'_>) -> R + Send + 'static,
    ) -> Result<R, ApiError> {
        let (tx, rx) = oneshot::channel();
        self.runtime.read(move |view| {
            let _ = tx.send(read(view));
        })?;
        rx.await.map_err(stopped)
    }

    /// As [`AppState::view`], on state that also includes command `min_seq`.
    pub async fn view_after<R: Send + 'static>(
        &self,
        min_seq: u64,
        read: impl FnOnce(&ReadView<'_>) -> R + Send + 'static,
    ) -> Result<R, ApiError> {
        let (tx, rx) = oneshot::channel();
        self.runtime.read_after(min_seq, move |view| {
            let _ = tx.send(read(view));
        })?;
        rx.await.map_err(stopped)
    }

    /// Reads market data on the market stage.
    pub async fn market<R: Send + 'static>(
        &self,
        read: impl FnOnce(&MarketData) -> R + Send + 'static,
    ) -> Result<R, ApiError> {
        let (tx, rx) = oneshot::channel();
        self.runtime.read_market(move |m| {
            let _ = tx.send(read(m));
        })?;
        rx.await.map_err(stopped)
    }
}
