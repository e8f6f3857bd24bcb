//! The streams' part of the server state: the hub sessions join, the heartbeat, the
//! session counters operators read, and the signal that closes every session at a stop.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The largest message a client may send, whole or in fragments (the HTTP body's limit):
/// a longer one is refused as it arrives instead of being held in memory. Every session
/// message the contract has is far smaller.
pub const MAX_MESSAGE_BYTES: usize = crate::body::MAX_BODY_BYTES;

/// The streams part of the shared state.
#[derive(Debug)]
pub struct Streams {
    /// The hub sessions join.
    pub hub: super::hub::Hub,
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
    pub fn new(hub: super::hub::Hub, heartbeat: Duration) -> Self {
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
