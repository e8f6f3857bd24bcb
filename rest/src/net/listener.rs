//! The listening socket with the connection-level limits axum's `serve` leaves out: at most
//! a set number of connections at a time, at most a share of them from one client address
//! (more are refused with a JSON 429 and closed), and the per-connection deadlines of
//! [`LimitedStream`]: a silent connection or one trickling its headers cannot hold a place
//! for long. When every place is taken, a client holding at least two fewer than the
//! largest holder gets one of that holder's (`places`); anyone else is answered a JSON 503
//! and closed at once rather than left waiting.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::serve::Listener;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub use crate::net::connection::LimitedStream;
use crate::net::connection::{Counters, json_response};
use crate::net::places::Places;
use crate::net::proxies::TrustedProxies;

/// Most connections open at once on each listener, by default.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// How long a connection may send nothing before it is closed, by default (longer than
/// the handler timeout, so a request waiting for its answer is never cut).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Connections one client address may hold open at once, by default.
pub const DEFAULT_MAX_PER_ADDRESS: usize = 256;
/// How long a request's headers may take once their first byte arrived, by default.
pub const DEFAULT_HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a newcomer waits for the place a connection was asked to give back.
const ROOM_WAIT: Duration = Duration::from_secs(1);

/// A TCP listener that bounds its open connections (in all and per client address) and
/// their idle and header time.
#[derive(Debug)]
pub struct LimitedListener {
    inner: TcpListener,
    limits: ConnectionLimits,
    stats: ListenerStats,
    places: Arc<Places>,
    trusted: TrustedProxies,
}

/// The limits of one listener's connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Open at once, in all.
    pub max_connections: usize,
    /// Open at once from one client address.
    pub max_per_address: usize,
    /// Closed after this long without a byte.
    pub idle: Duration,
    /// A request's headers, once begun, must be complete within this.
    pub head: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_per_address: DEFAULT_MAX_PER_ADDRESS,
            idle: DEFAULT_IDLE_TIMEOUT,
            head: DEFAULT_HEAD_TIMEOUT,
        }
    }
}

/// What a listener's limits are doing, for operators and tests (cheap to clone: shared).
#[derive(Debug, Clone)]
pub struct ListenerStats {
    permits: Arc<Semaphore>,
    max_connections: usize,
    counters: Arc<Counters>,
}

impl ListenerStats {
    /// Connections open now.
    pub fn open_connections(&self) -> usize {
        self.max_connections - self.permits.available_permits()
    }

    /// Connections closed so far because they sent nothing for the idle time.
    pub fn closed_idle(&self) -> u64 {
        self.counters.closed_idle.load(Ordering::Relaxed)
    }

    /// Connections closed so far because a request's headers took too long.
    pub fn closed_slow_head(&self) -> u64 {
        self.counters.closed_slow_head.load(Ordering::Relaxed)
    }

    /// Connections refused so far because their address held its share.
    pub fn refused_per_address(&self) -> u64 {
        self.counters.refused_per_address.load(Ordering::Relaxed)
    }

    /// Connections refused so far because every place was taken and none could be made.
    pub fn refused_full(&self) -> u64 {
        self.counters.refused_full.load(Ordering::Relaxed)
    }

    /// Connections asked so far to close to make room for a client holding fewer.
    pub fn closed_for_room(&self) -> u64 {
        self.counters.closed_for_room.load(Ordering::Relaxed)
    }
}

impl LimitedListener {
    /// Wraps `inner` with `limits`.
    pub fn new(inner: TcpListener, limits: ConnectionLimits) -> Self {
        let max_connections = limits.max_connections.max(1);
        Self {
            inner,
            limits,
            stats: ListenerStats {
                permits: Arc::new(Semaphore::new(max_connections)),
                max_connections,
                counters: Arc::default(),
            },
            places: Arc::default(),
            trusted: TrustedProxies::default(),
        }
    }

    /// Exempts the connections of `proxies` from the per-address share: each carries
    /// many clients' requests (the listener's total still bounds them).
    pub fn trusting(mut self, proxies: TrustedProxies) -> Self {
        self.trusted = proxies;
        self
    }

    /// Its statistics.
    pub fn stats(&self) -> ListenerStats {
        self.stats.clone()
    }

    /// A place for a connection of `ip`: a free one, or one the largest holder is asked
    /// to give back (see [`Places::make_room_for`]) once it has; `None` when neither.
    async fn place_for(&self, ip: IpAddr, cap: usize) -> Option<OwnedSemaphorePermit> {
        let permits = &self.stats.permits;
        if let Ok(permit) = permits.clone().try_acquire_owned() {
            return Some(permit);
        }
        if !self.places.make_room_for(ip, cap) {
            return None;
        }
        self.stats
            .counters
            .closed_for_room
            .fetch_add(1, Ordering::Relaxed);
        // The connection asked closes at its task's next turn; one whose task is stuck
        // does not hold the listener up.
        let given_back = tokio::time::timeout(ROOM_WAIT, permits.clone().acquire_owned());
        given_back.await.ok()?.ok()
    }
}

impl Listener for LimitedListener {
    type Io = LimitedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (stream, addr) = Listener::accept(&mut self.inner).await;
            let cap = if self.trusted.trusts(addr.ip()) {
                usize::MAX
            } else {
                self.limits.max_per_address.max(1)
            };
            let counters = &self.stats.counters;
            let Some(permit) = self.place_for(addr.ip(), cap).await else {
                counters.refused_full.fetch_add(1, Ordering::Relaxed);
                let _ = stream.try_write(&json_response(503, "TOO_MANY_CONNECTIONS"));
                continue;
            };
            let Some(slot) = self.places.take(addr.ip(), cap) else {
                // One address may not take every place: refused, in the API's words.
                counters.refused_per_address.fetch_add(1, Ordering::Relaxed);
                let _ = stream.try_write(&json_response(429, "TOO_MANY_CONNECTIONS"));
                continue;
            };
            // Answers and stream frames are small writes that must go at once: Nagle's
            // algorithm would hold each behind the acknowledgement of the one before.
            let _ = stream.set_nodelay(true);
            let limits = self.limits;
            let stream = LimitedStream::new(
                stream,
                (permit, slot),
                limits.idle,
                limits.head,
                self.stats.counters.clone(),
            );
            return (stream, addr);
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// The client address of a connection, as handlers and the request guard see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer(pub SocketAddr);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, LimitedListener>>
    for Peer
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, LimitedListener>) -> Self {
        Self(*stream.remote_addr())
    }
}
