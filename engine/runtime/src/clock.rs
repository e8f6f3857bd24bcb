//! Clocks the runtime stamps commands with: wall-clock time plus an adjustable offset (the
//! exchange's clock, which an admin may move forward), and a manual clock for tests.

use std::sync::atomic::{AtomicI64, Ordering};

use matchbook_core::Timestamp;

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
    /// total offset, or `None` (and leaves the clock) when that would take it past
    /// [`matchbook_core::limits::TIME_HORIZON`], where the engine refuses every command.
    pub fn advance(&self, nanos: i64) -> Option<i64> {
        let step = nanos.max(0);
        let wall = wall_nanos();
        self.offset_nanos
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |offset| {
                let offset = offset.checked_add(step)?;
                (wall.checked_add(offset)? <= matchbook_core::limits::TIME_HORIZON.0)
                    .then_some(offset)
            })
            .ok()
            .map(|before| before + step)
    }

    /// The current offset.
    pub fn offset(&self) -> i64 {
        self.offset_nanos.load(Ordering::Relaxed)
    }
}

impl Clock for OffsetClock {
    fn now(&self) -> Timestamp {
        Timestamp(wall_nanos().saturating_add(self.offset()))
    }
}

fn wall_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exchange_clock_never_moves_past_the_horizon() {
        let clock = OffsetClock::default();
        let day = 86_400 * 1_000_000_000;
        assert_eq!(clock.advance(day), Some(day));
        // The largest advance the admin route takes (u32 seconds, 136 years) would pass
        // 2100, and two of them the end of i64 nanoseconds: refused, leaving the clock
        // where it was; a large one that stays inside is taken.
        let most = i64::from(u32::MAX) * 1_000_000_000;
        assert_eq!(clock.advance(most), None);
        assert_eq!(clock.advance(i64::MAX), None);
        assert_eq!(clock.offset(), day);
        let decade = 10 * 365 * day;
        assert_eq!(clock.advance(decade), Some(day + decade));
        assert!(clock.now() <= matchbook_core::limits::TIME_HORIZON);
    }
}
