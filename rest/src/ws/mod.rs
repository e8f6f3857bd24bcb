//! WebSocket streams: the public exchange's stream contract (docs/api.md), served on the public
//! listener at `/` and `/ws` (one socket for public and private channels, the REST keys
//! and scopes).
//!
//! ```text
//!  runtime output ──> hub thread ──(frames, serialised once)──> broadcast ──> session task
//!  (every batch)      one per server                           (bounded)      one per socket
//! ```
//!
//! The hub ([`hub`]) follows the runtime's published batches and makes each frame once;
//! every session ([`session`]) keeps the frames of its channels and instruments. Neither
//! the matching thread nor the hub ever waits for a session: a session a whole buffer
//! behind is closed with `SLOW_CONSUMER`.
//!
//! Served: the session messages (AUTHENTICATE, SUBSCRIBE, UPDATE_SUBSCRIPTION,
//! UNSUBSCRIBE, CANCEL_ALL_AFTER), the heartbeat, the error frames, the public channels
//! `ORDER_BOOK`, `BOOK_TICKER`, `MARKET_TICKER`, `CANDLESTICKS` and `PRICE_TICKS`, and the
//! private `ACCOUNT_HISTORY` (with its aliases) and `TRADING` (order events, and order entry
//! with `CREATE_ORDER` and `CANCEL_ORDER`).

pub mod account_frames;
pub mod account_messages;
pub mod accounts;
pub mod book_frames;
pub mod depth;
pub mod hub;
pub mod market_frames;
pub mod messages;
pub mod order_entry;
pub mod session;
mod socket;
mod subscribe_snapshots;
pub mod trading;
mod window;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::State;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::Shared;

/// Default heartbeat interval (the contract's).
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(10);
/// Default interval of `MARKET_TICKER` updates (the contract asks for at least one a
/// second for a market that changed).
pub const DEFAULT_TICKER_INTERVAL: Duration = Duration::from_secs(1);
/// Default broadcast buffer, in broadcasts (the frames of one batch of commands each): how
/// far a session may fall behind.
pub const DEFAULT_BUFFER: usize = 4096;

/// The largest message a client may send, whole or in fragments (the HTTP body's limit):
/// a longer one is refused as it arrives instead of being held in memory. Every session
/// message the contract has is far smaller.
pub const MAX_MESSAGE_BYTES: usize = crate::http::MAX_BODY_BYTES;

/// The streams part of the shared state.
#[derive(Debug)]
pub struct Streams {
    /// The hub sessions join.
    pub hub: hub::Hub,
    /// Heartbeat interval; also how long one frame may wait for a client to take it
    /// before the client is a slow consumer.
    pub heartbeat: Duration,
    /// Sessions open, and sessions closed as slow consumers.
    pub counters: Counters,
    /// Set when the server stops: every session tells its client `CONNECTION_CLOSING`
    /// and closes (going away), so clients reconnect rather than see a dropped socket.
    pub closing: tokio::sync::watch::Sender<bool>,
}

impl Streams {
    /// Streams over `hub`, their sessions sending a heartbeat every `heartbeat`.
    pub fn new(hub: hub::Hub, heartbeat: Duration) -> Self {
        Self {
            hub,
            heartbeat,
            counters: Counters::default(),
            closing: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Tells every session to close, and waits (at most `wait`) until none is open.
    pub async fn close_all(&self, wait: Duration) {
        self.closing.send_replace(true);
        let deadline = tokio::time::Instant::now() + wait;
        // Sessions end on their own tasks; their count is the only sign of it.
        while self.counters.open.load(Ordering::Relaxed) > 0
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// Counters of the stream sessions, for operators.
#[derive(Debug, Default)]
pub struct Counters {
    /// Sessions open now.
    pub open: AtomicU64,
    /// Sessions closed with `SLOW_CONSUMER` since the start.
    pub slow_consumers: AtomicU64,
    /// Sessions opened since the start.
    pub opened: AtomicU64,
    /// Frames handed to clients' sockets since the start.
    pub frames_sent: AtomicU64,
}

/// Counts a session as open while it lives.
pub(crate) struct OpenSession<'a>(&'a Counters);

impl<'a> OpenSession<'a> {
    pub(crate) fn new(counters: &'a Counters) -> Self {
        counters.open.fetch_add(1, Ordering::Relaxed);
        counters.opened.fetch_add(1, Ordering::Relaxed);
        Self(counters)
    }
}

impl Drop for OpenSession<'_> {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// `GET /` and `GET /ws`: the WebSocket upgrade; a plain request is answered as an unknown
/// route.
pub async fn upgrade(
    State(state): State<Shared>,
    peer: Option<axum::Extension<axum::extract::ConnectInfo<crate::net::listener::Peer>>>,
    headers: axum::http::HeaderMap,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    // Absent for a router called in process: such a session is not limited.
    let peer =
        peer.map(|axum::Extension(info)| (state.trusted_proxies).client(info.0.0.ip(), &headers));
    match upgrade {
        Ok(upgrade) => upgrade
            .max_message_size(MAX_MESSAGE_BYTES)
            .max_frame_size(MAX_MESSAGE_BYTES)
            .on_upgrade(move |socket| session::run(socket, state, peer))
            .into_response(),
        Err(_) => ApiError::NotFound("NOT_FOUND").into_response(),
    }
}
