//! Clocks the runtime stamps commands with: wall-clock time plus an adjustable offset (the
//! exchange's clock, which an admin may move forward), and a manual clock for tests.

use std::sync::atomic::{AtomicI64, Ordering};

use crate::ids::Timestamp;

/// A source of time for the runtime (the engine itself never reads one).
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// The system clock shifted by an offset that can only grow, so an operator can move the
/// exchange into the future (to expire orders or settle funding) but never back.
#[derive(Debug, Default)]
pub struct OffsetClock {
    offset_nanos: AtomicI64,
}

impl OffsetClock {
    /// Moves the clock forward by `nanos` (negative values are ignored) and returns the
    /// total offset.
    pub fn advance(&self, nanos: i64) -> i64 {
        self.offset_nanos.fetch_add(nanos.max(0), Ordering::Relaxed) + nanos.max(0)
    }

    /// The current offset.
    pub fn offset(&self) -> i64 {
        self.offset_nanos.load(Ordering::Relaxed)
    }
}

impl Clock for OffsetClock {
    fn now(&self) -> Timestamp {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        Timestamp(wall.saturating_add(self.offset()))
    }
}

/// A clock that moves only when told to.
#[derive(Debug, Default)]
pub struct ManualClock {
    nanos: AtomicI64,
}

impl ManualClock {
    /// A clock standing at `time`.
    pub fn at(time: Timestamp) -> Self {
        Self {
            nanos: AtomicI64::new(time.0),
        }
    }

    /// Sets the time.
    pub fn set(&self, time: Timestamp) {
        self.nanos.store(time.0, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.nanos.load(Ordering::Relaxed))
    }
}
